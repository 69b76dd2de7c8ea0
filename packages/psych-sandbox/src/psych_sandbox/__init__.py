"""Sandboxes for Psych Runtime's ``run_code``: where a model's program runs.

Three backends, each opened with ``await Backend.open(...)`` and each a
``psych_runtime.adapters.Sandbox``:

- ``SubprocessSandbox``: a fresh, unprivileged Python process under rlimits
  (isolation ``isolated``; the network is open, the host's files readable where their
  permissions allow);
- ``NamespaceSandbox``: the same inside Linux namespaces through bubblewrap (isolation
  ``contained`` when the user, pid, network and mount namespaces were established);
- ``OciSandbox``: a container run by podman (``--network none``, read-only root).

Installing the package registers them as the ``subprocess``, ``namespaces`` and ``oci``
sandbox backends. Each is loaded on first access.

Example::

    import asyncio

    from psych_runtime.adapters import Program
    from psych_sandbox import SubprocessSandbox


    async def main() -> None:
        sandbox = await SubprocessSandbox.open()

        async def binding(name, arguments):
            return {"echo": arguments}

        execution = await sandbox.execute(
            Program(source="tools.echo(text='hi')", bindings=("echo",)), binding
        )
        assert execution.value == {"echo": {"text": "hi"}}
        await sandbox.close()


    asyncio.run(main())
"""

from typing import TYPE_CHECKING

from psych_runtime.adapters.plugins import lazy_exports
from psych_sandbox._version import __version__

if TYPE_CHECKING:
    from psych_sandbox._host import SandboxUnavailable as SandboxUnavailable
    from psych_sandbox.namespaces import NamespaceSandbox as NamespaceSandbox
    from psych_sandbox.oci import OciSandbox as OciSandbox
    from psych_sandbox.oci import oci_command as oci_command
    from psych_sandbox.process import SubprocessSandbox as SubprocessSandbox

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "NamespaceSandbox": "psych_sandbox.namespaces",
        "OciSandbox": "psych_sandbox.oci",
        "SandboxUnavailable": "psych_sandbox._host",
        "SubprocessSandbox": "psych_sandbox.process",
        "oci_command": "psych_sandbox.oci",
    },
)

__all__ = [
    "NamespaceSandbox",
    "OciSandbox",
    "SandboxUnavailable",
    "SubprocessSandbox",
    "__version__",
    "oci_command",
]
