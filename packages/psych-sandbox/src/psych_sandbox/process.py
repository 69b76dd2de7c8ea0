"""The ``subprocess`` backend: a fresh, unprivileged Python process under rlimits.

What it contains, and what it does not, is in the package README; in short: the kernel
enforces a separate process, a cleared environment, a private working directory,
rlimits, the wall-clock kill and (when the host runs as root) a uid of the program's
own, but the host's filesystem stays readable wherever its permissions allow and the
network is open: ``NO_NETWORK`` is only reported, never enforced.
"""

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Self

from psych_runtime.adapters.sandbox import ExecutionStatus
from psych_runtime.adapters.sandbox import Guarantee
from psych_runtime.adapters.sandbox import Program
from psych_runtime.adapters.sandbox import SandboxCapabilities
from psych_runtime.spec import Isolation
from psych_sandbox._host import DEFAULT_UID_BASE
from psych_sandbox._host import DEFAULT_UID_SLOTS
from psych_sandbox._host import HOST_ENFORCED
from psych_sandbox._host import SANDBOX_PATH
from psych_sandbox._host import Identity
from psych_sandbox._host import Launch
from psych_sandbox._host import ProcessSandbox
from psych_sandbox._host import SandboxUnavailable
from psych_sandbox._host import interpreter_candidates
from psych_sandbox._host import runner_argv
from psych_sandbox._host import running_as_root
from psych_sandbox._mounts import SCRATCH_PATHS
from psych_sandbox._mounts import Scratch


def sandbox_environment(home: str) -> dict[str, str]:
    """The whole environment a program sees: nothing of the host's."""
    return {"PATH": SANDBOX_PATH, "LANG": "C.UTF-8", "HOME": home}


async def probe_interpreter(python: str, uid: int | None) -> tuple[int, int] | None:
    """The version of ``python`` when the program's user can run it, else None."""
    try:
        process = await asyncio.create_subprocess_exec(
            python,
            "-I",
            "-S",
            "-c",
            "import sys; print(list(sys.version_info[:2]))",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=sandbox_environment("/"),
            cwd="/",
            user=uid,
            group=uid,
            extra_groups=[] if uid is not None else None,
        )
        out, _ = await asyncio.wait_for(process.communicate(), 30)
    except (OSError, TimeoutError):
        return None
    if process.returncode != 0:
        return None
    try:
        major, minor = json.loads(out)
    except ValueError:
        return None
    return int(major), int(minor)


async def choose_interpreter(python: str | None, uid: int | None) -> str:
    """The first interpreter (3.8 or later) the program's user can run.

    When the host runs as root the program runs as another uid, which cannot run an
    interpreter kept under ``/root`` (pyenv's, say); the system's is used then.
    """
    candidates = interpreter_candidates(python, must_be_public=uid is not None)
    for candidate in candidates:
        version = await probe_interpreter(candidate, uid)
        if version is not None and version >= (3, 8):
            return candidate
    tried = ", ".join(candidates) or "none found"
    raise SandboxUnavailable(
        f"no Python 3.8+ interpreter the sandbox user can run (tried: {tried}); "
        "pass python= with one every user can read, such as /usr/bin/python3"
    )


class SubprocessSandbox(ProcessSandbox):
    """Runs each program in a fresh, unprivileged Python process under rlimits.

    Open it with ``await SubprocessSandbox.open()``. Its isolation is ``ISOLATED``:
    the kernel enforces the separate process, the cleared environment, the private
    workspace, the rlimits, the wall-clock kill and, on a root host, a uid of the
    program's own (so it cannot signal or read the host's processes, read files only
    root may read, or leave a process behind: every process of that uid is killed
    after each program). The host's filesystem stays readable where its permissions
    allow, ``/tmp`` is shared, and the network is open: ``NO_NETWORK`` is only
    reported, a convention the program can break.
    """

    @classmethod
    async def open(
        cls,
        *,
        python: str | None = None,
        uid_base: int = DEFAULT_UID_BASE,
        uid_slots: int = DEFAULT_UID_SLOTS,
    ) -> Self:
        """Find an interpreter the program's user can run, and say what is contained.

        Args:
            python: the interpreter programs run with (default: the host's when the
                program's user can run it, else ``/usr/bin/python3``).
            uid_base: on a root host, the first uid programs run as (one per running
                program; nothing else on the machine may use the range).
            uid_slots: how many programs may run at once (root host only).

        Raises:
            SandboxUnavailable: no usable interpreter.
        """
        root = running_as_root()
        chosen = await choose_interpreter(python, uid_base if root else None)
        sandbox = cls(
            python=chosen,
            uid_base=uid_base if root else None,
            uid_slots=uid_slots,
            private_scratch=root,
        )
        if root:
            await sandbox._check_private_scratch()
        return sandbox

    def __init__(
        self,
        *,
        python: str,
        uid_base: int | None,
        uid_slots: int,
        private_scratch: bool = False,
    ) -> None:
        super().__init__(python=python, uid_base=uid_base, uid_slots=uid_slots)
        self._private_scratch = private_scratch and uid_base is not None
        self.scratch_problem: str | None = None
        """Why the private scratch space could not be set up here, when it could not."""
        self._establish()

    async def _check_private_scratch(self) -> None:
        """Run one program with the private scratch space; give it up if the kernel refuses."""
        execution = await self._trial("1")
        if execution.status is not ExecutionStatus.OK:
            self.scratch_problem = execution.message or execution.stderr.strip()
            self._private_scratch = False
            self._establish()

    def _establish(self) -> None:
        own_uid = self._uids is not None
        enforced = set(HOST_ENFORCED)
        if own_uid:
            # RLIMIT_NPROC counts a user's processes; only a uid of the program's own
            # makes it a limit on the program (as the host's user it would count the host).
            enforced |= {Guarantee.UNPRIVILEGED_USER, Guarantee.PROCESS_LIMIT}
        if self._private_scratch:
            enforced.add(Guarantee.PRIVATE_SCRATCH)
        self._capabilities = SandboxCapabilities(
            backend="subprocess",
            isolation=Isolation.ISOLATED,
            enforced=frozenset(enforced),
            reported=frozenset({Guarantee.NO_NETWORK, Guarantee.DISK_QUOTA}),
        )

    def _command(
        self, program: Program, workspace: Path, identity: Identity, fds: tuple[int, int]
    ) -> Launch:
        private = self._private_scratch
        return Launch(
            argv=runner_argv(self._python, fds),
            env=sandbox_environment(str(workspace)),
            cwd=str(workspace),
            pass_fds=fds,
            scratch=Scratch.for_disk(program.limits.disk_bytes, str(workspace))
            if private
            else None,
            scratch_paths=SCRATCH_PATHS if private else (),
        )


__all__ = ["SubprocessSandbox"]
