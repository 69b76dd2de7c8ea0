"""Deliberately wrong sandboxes: each a small edit of a first-party backend.

Each breaks one promise the way a real backend could, and names the contract cases
that must fail against it; ``test_sandbox_mutants`` checks that they do, on every run.
Each case that catches one forces its interleaving (the daemon is known to run before
the kill or the cancellation; the fill waits to be stopped), so catching is certain,
not likely.
"""

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path

from psych_runtime.adapters import Guarantee
from psych_runtime.adapters import Program
from psych_runtime.adapters import Sandbox
from psych_runtime.adapters import SandboxCapabilities
from psych_sandbox import NamespaceSandbox
from psych_sandbox import SubprocessSandbox
from psych_sandbox._host import Identity
from psych_sandbox._host import Launch


class ReapsOnlyAfterNormalExit(SubprocessSandbox):
    """Reaps every process of the program's uid only when the program ended by itself.

    After a wall-clock kill or a cancellation it kills the process group alone, so a
    daemon that left the group (double fork, ``setsid``) lives on.
    """

    async def _stop(
        self, process: asyncio.subprocess.Process, identity: Identity, launch: Launch
    ) -> None:
        if process.returncode is None:  # still running: the host is killing it
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            return
        await super()._stop(process, identity, launch)


class SharedScratch(SubprocessSandbox):
    """Claims a private scratch space but runs the program with the host's /tmp and /dev/shm."""

    def _command(
        self, program: Program, workspace: Path, identity: Identity, fds: tuple[int, int]
    ) -> Launch:
        return replace(super()._command(program, workspace, identity, fds), scratch=None)


class UncappedDevShm(NamespaceSandbox):
    """Leaves ``/dev`` a writable tmpfs with no size, ``/dev/shm`` a plain directory in it.

    The host measures only ``/tmp``; the capabilities claim what a correct layout gives.
    """

    def bwrap_arguments(self, program: Program, workspace: Path) -> list[str]:
        args = super().bwrap_arguments(program, workspace)
        at = args.index("/dev/shm")
        del args[at - 3 : at + 3]  # --size N --tmpfs /dev/shm --remount-ro /dev
        return args

    def _command(
        self, program: Program, workspace: Path, identity: Identity, fds: tuple[int, int]
    ) -> Launch:
        launch = super()._command(program, workspace, identity, fds)
        return replace(launch, scratch_paths=("/tmp",))

    def _establish(self, report: dict[str, object]) -> None:  # type: ignore[override]
        super()._establish({**report, "outside_scratch_writable": []})  # type: ignore[dict-item]
        capabilities = self.capabilities
        self._capabilities = SandboxCapabilities(
            backend=capabilities.backend,
            isolation=capabilities.isolation,
            enforced=capabilities.enforced | {Guarantee.PRIVATE_SCRATCH},
            reported=capabilities.reported,
        )


async def _open_shared_scratch() -> Sandbox:
    sandbox = await SharedScratch.open()
    sandbox._private_scratch = True  # what it claims; _command leaves it out
    sandbox._establish()
    return sandbox


@dataclass(frozen=True)
class SandboxMutant:
    """A wrong sandbox, how to open it, and the contract cases that must catch it."""

    name: str
    open: Callable[[], Awaitable[Sandbox]]
    kernel_enforced: bool
    caught_by: tuple[str, ...]


SANDBOX_MUTANTS = (
    SandboxMutant(
        "reaps-only-after-normal-exit",
        ReapsOnlyAfterNormalExit.open,
        False,
        (
            "test_escape_daemon_outlives_the_wall_clock_kill",
            "test_escape_daemon_outlives_a_cancelled_execute",
        ),
    ),
    SandboxMutant(
        "shared-scratch",
        _open_shared_scratch,
        False,
        ("test_escape_shared_memory_fill", "test_escape_temporary_directories_fill"),
    ),
    SandboxMutant(
        "uncapped-dev-shm",
        UncappedDevShm.open,
        True,
        ("test_escape_shared_memory_fill", "test_escape_every_writable_mount_is_counted"),
    ),
)

SANDBOX_CONTROLS = (
    SandboxMutant(
        "control-subprocess",
        SubprocessSandbox.open,
        False,
        tuple(sorted({case for m in SANDBOX_MUTANTS[:2] for case in m.caught_by})),
    ),
    SandboxMutant(
        "control-namespaces",
        NamespaceSandbox.open,
        True,
        SANDBOX_MUTANTS[2].caught_by,
    ),
)
"""The unmodified backends, run on the same cases: the harness itself must pass them."""


def sandbox_by_name(name: str) -> SandboxMutant:
    """The mutant (or control) called ``name``."""
    for mutant in (*SANDBOX_MUTANTS, *SANDBOX_CONTROLS):
        if mutant.name == name:
            return mutant
    raise LookupError(f"no sandbox mutant named {name!r}")
