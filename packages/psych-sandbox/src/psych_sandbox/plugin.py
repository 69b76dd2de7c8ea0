"""The entry point psych-runtime loads: offers the sandbox backends for ``run_code``.

They are ``subprocess``, ``namespaces`` and ``oci``.

Loading the plugin stays cheap: each ``open`` imports its backend when a deployment
first opens it.
"""

import asyncio
import threading
from typing import TYPE_CHECKING

from psych_runtime.adapters.plugins import DoctorCheck
from psych_runtime.adapters.plugins import DoctorResult
from psych_runtime.adapters.plugins import SandboxBackend
from psych_runtime.adapters.plugins import offer_doctor_checks
from psych_runtime.adapters.plugins import offer_sandboxes

if TYPE_CHECKING:
    from psych_sandbox.namespaces import NamespaceSandbox
    from psych_sandbox.oci import OciSandbox
    from psych_sandbox.process import SubprocessSandbox

PSYCH_PLUGIN_API = 1

_PACKAGE = "psych-sandbox"


async def open_subprocess(**options: object) -> "SubprocessSandbox":
    """Open the ``subprocess`` backend (options as ``SubprocessSandbox.open``)."""
    from psych_sandbox.process import SubprocessSandbox  # deferred: keep loading cheap

    return await SubprocessSandbox.open(**options)  # type: ignore[arg-type]


async def open_namespaces(**options: object) -> "NamespaceSandbox":
    """Open the ``namespaces`` backend (options as ``NamespaceSandbox.open``)."""
    from psych_sandbox.namespaces import NamespaceSandbox

    return await NamespaceSandbox.open(**options)  # type: ignore[arg-type]


async def open_oci(**options: object) -> "OciSandbox":
    """Open the ``oci`` backend (options as ``OciSandbox.open``)."""
    from psych_sandbox.oci import OciSandbox

    return await OciSandbox.open(**options)  # type: ignore[arg-type]


psych_register_sandboxes = offer_sandboxes(
    SandboxBackend(
        name="subprocess",
        open=open_subprocess,
        package=_PACKAGE,
        description="A fresh unprivileged Python process under rlimits (isolated; network open).",
    ),
    SandboxBackend(
        name="namespaces",
        open=open_namespaces,
        package=_PACKAGE,
        description="bubblewrap: user, pid, network and mount namespaces (contained).",
    ),
    SandboxBackend(
        name="oci",
        open=open_oci,
        package=_PACKAGE,
        description="A podman container: --network none, read-only root (contained).",
    ),
)


async def _describe() -> DoctorResult:
    from psych_sandbox._host import SandboxUnavailable
    from psych_sandbox.namespaces import NamespaceSandbox
    from psych_sandbox.process import SubprocessSandbox

    try:
        subprocess_sandbox = await SubprocessSandbox.open()
    except SandboxUnavailable as error:
        return DoctorResult(False, f"the subprocess sandbox cannot run: {error}")
    await subprocess_sandbox.close()
    try:
        namespaces = await NamespaceSandbox.open()
    except SandboxUnavailable as error:
        return DoctorResult(
            True, f"subprocess sandbox ready ({subprocess_sandbox.python}); namespaces: {error}"
        )
    isolation = namespaces.capabilities.isolation.value
    await namespaces.close()
    return DoctorResult(
        True,
        f"subprocess sandbox ready ({subprocess_sandbox.python}); namespaces sandbox "
        f"ready ({isolation})",
    )


def check_sandboxes() -> DoctorResult:
    """Open the subprocess and namespaces backends once (in a thread of its own)."""
    results: list[DoctorResult] = []

    def run() -> None:
        try:
            results.append(asyncio.run(_describe()))
        except Exception as error:
            results.append(DoctorResult(False, f"the sandbox check raised {error!r}"))

    thread = threading.Thread(target=run, name="psych-sandbox-doctor")
    thread.start()
    thread.join()
    if not results:
        return DoctorResult(False, "the sandbox check failed to run")
    return results[0]


psych_doctor_checks = offer_doctor_checks(DoctorCheck(name="sandbox", run=check_sandboxes))
