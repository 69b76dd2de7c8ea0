"""The Sandbox port: run one program, contained, and say what it did as data.

A backend runs each program in a fresh process that keeps no state from an earlier
one. The program talks to the host only through its bindings: calling a binding sends
a request to the host, which runs it through the normal tool path (narrowed,
approved, recorded in the Run's log under the program's call) and sends the answer
back. Everything the program does ends up in an ``Execution``: its return value, the
previews of what it printed, the traceback when it raised, the files it left, and
which limit stopped it, if one did. Nothing a program does can raise out of
``execute`` except the host's own failures.

Backends say up front what they contain (``SandboxCapabilities``): which guarantees
the kernel enforces for them, and which they only report (a plain subprocess denies
itself the network by convention, not by force). A Spec's ``isolation`` level is
checked against them before a program runs.
"""

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from pydantic import JsonValue

from psych_runtime.core.records import JsonObject
from psych_runtime.core.spec.code_execution import Isolation, NetworkAccess


class Guarantee(StrEnum):
    """Something a backend keeps a program from doing, and how sure that is."""

    SEPARATE_PROCESS = "separate_process"
    CLEAN_ENVIRONMENT = "clean_environment"
    PRIVATE_WORKSPACE = "private_workspace"
    CPU_LIMIT = "cpu_limit"
    MEMORY_LIMIT = "memory_limit"
    FILE_SIZE_LIMIT = "file_size_limit"
    PROCESS_LIMIT = "process_limit"
    WALL_CLOCK_KILL = "wall_clock_kill"
    UNPRIVILEGED_USER = "unprivileged_user"
    NO_NETWORK = "no_network"
    READ_ONLY_SYSTEM = "read_only_system"
    NO_HOST_FILES = "no_host_files"
    NO_HOST_PROCESSES = "no_host_processes"
    DISK_QUOTA = "disk_quota"
    PRIVATE_SCRATCH = "private_scratch"
    """Every place outside its workspace where the program can store anything (``/tmp``,
    ``/var/tmp``, ``/dev/shm``, System V IPC, message queues) is its own, capped by the
    kernel and gone when it ends; the rest of the filesystem is not writable to it."""


@dataclass(frozen=True, slots=True)
class SandboxCapabilities:
    """What a backend contains, established when it starts.

    Attributes:
        backend: the backend's name (``subprocess``, ``namespaces``, ``oci``).
        isolation: the strongest ``Isolation`` level it provides.
        enforced: guarantees the kernel enforces.
        reported: guarantees the backend keeps only by convention (a program that
            tries hard enough could break them); never counted as enforced.
    """

    backend: str
    isolation: Isolation
    enforced: frozenset[Guarantee]
    reported: frozenset[Guarantee] = frozenset()

    def provides(self, isolation: Isolation, network: NetworkAccess) -> str | None:
        """Why a program asking for ``isolation`` and ``network`` cannot run here, or None."""
        order = [Isolation.ISOLATED, Isolation.CONTAINED]
        if order.index(isolation) > order.index(self.isolation):
            return (
                f"the {self.backend} sandbox provides {self.isolation.value} isolation, "
                f"and the Spec asks for {isolation.value}"
            )
        contained = isolation is Isolation.CONTAINED and network is NetworkAccess.DENIED
        if contained and Guarantee.NO_NETWORK not in self.enforced:
            return f"the {self.backend} sandbox cannot enforce a network denial"
        return None


@dataclass(frozen=True, slots=True)
class ResolvedLimits:
    """One execution's limits, every one of them a number (profile and Spec applied)."""

    cpu_seconds: float = 10.0
    wall_seconds: float = 30.0
    memory_bytes: int = 512 * 1024 * 1024
    file_size_bytes: int = 64 * 1024 * 1024
    process_count: int = 32
    disk_bytes: int = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Program:
    """One program to run.

    Attributes:
        source: the Python source. Its value is that of ``result`` when the program
            sets a global of that name, else of its last expression, else None.
        limits: resource limits, already capped by the deployment.
        network: whether the program may reach the network itself.
        bindings: names of the host tools it may call, as ``tools.<name>(**arguments)``
            (names with characters Python identifiers lack are reached through
            ``tools.call(name, **arguments)``).
        preview_bytes: how much of stdout and of stderr comes back.
        max_output_bytes: how much of each is captured at most.
        max_artifacts: files returned at most; 0 returns none.
        max_artifact_bytes: bytes returned across files at most.
        workspace: a directory kept across the Run's executions (``WorkspaceMode.RUN``),
            or None for a fresh one every time.
        keep_full_output: capture all of stdout and stderr (up to
            ``max_output_bytes``), not only the previews, and return it in the
            ``Execution`` so the host can keep it.
    """

    source: str
    limits: ResolvedLimits = ResolvedLimits()
    network: NetworkAccess = NetworkAccess.DENIED
    bindings: tuple[str, ...] = ()
    preview_bytes: int = 4_000
    max_output_bytes: int = 8 * 1024 * 1024
    max_artifacts: int = 16
    max_artifact_bytes: int = 16 * 1024 * 1024
    workspace: str | None = None
    keep_full_output: bool = False


class ExecutionStatus(StrEnum):
    """How a program ended."""

    OK = "ok"
    """It ran to its end."""
    ERROR = "error"
    """It raised; ``traceback`` says where."""
    LIMIT = "limit"
    """A limit stopped it; ``limit`` says which."""
    FAILED = "failed"
    """The sandbox itself could not run it (see ``message``)."""


@dataclass(frozen=True, slots=True)
class Artifact:
    """A file the program left in its workspace.

    Attributes:
        path: relative to the workspace.
        size: its size in bytes.
        content: its bytes, when they fit the artifact budget; None otherwise.
    """

    path: str
    size: int
    content: bytes | None = None


@dataclass(frozen=True, slots=True)
class Execution:
    """What one program did.

    Attributes:
        status: how it ended.
        value: its value (JSON), when it ended ``ok``.
        stdout: the first ``preview_bytes`` of what it printed, decoded leniently.
        stderr: the same for its error stream.
        stdout_bytes: how much it printed in all.
        stderr_bytes: the same for its error stream.
        traceback: the exception it raised, formatted, when it raised.
        limit: the limit that stopped it (``cpu``, ``memory``, ``wall``, ``file_size``,
            ``disk``, ``processes``, ``output``), when one did.
        message: a one-line explanation for the model.
        exit_code: the process's exit status, when it had one.
        artifacts: files it left, within the artifact budget.
        duration_seconds: from start to teardown.
        binding_calls: how many host tools it called.
        stdout_full: everything it printed (up to ``max_output_bytes``), when the
            program asked for full output and there was more than the preview.
        stderr_full: the same for its error stream.
    """

    status: ExecutionStatus
    value: JsonValue = None
    stdout: str = ""
    stderr: str = ""
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    traceback: str | None = None
    limit: str | None = None
    message: str = ""
    exit_code: int | None = None
    artifacts: tuple[Artifact, ...] = ()
    duration_seconds: float = 0.0
    binding_calls: int = 0
    stdout_full: bytes | None = None
    stderr_full: bytes | None = None


class BindingRefused(Exception):
    """A binding call the host would not carry out; the program sees it raised."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


Binding = Callable[[str, JsonObject], Awaitable[JsonValue]]
"""The host side of a program's tool calls: ``await binding(name, arguments)``.

Raises ``BindingRefused`` for a call the program should see fail.
"""


@runtime_checkable
class Sandbox(Protocol):
    """Runs programs in separate, contained processes."""

    @property
    def capabilities(self) -> SandboxCapabilities:
        """What this backend contains, as established when it started."""
        ...

    async def execute(self, program: Program, binding: Binding) -> Execution:
        """Run ``program`` to its end (or its limit) and say what it did.

        Raises:
            asyncio.CancelledError: the Attempt stopped; the process is killed first.
        """
        ...

    async def close(self) -> None:
        """Stop every program still running and release what the backend holds."""
        ...


def profile_for(sandboxes: Mapping[str, Sandbox], profile: str) -> Sandbox | None:
    """The sandbox the deployment maps ``profile`` to (``default`` when unnamed)."""
    return sandboxes.get(profile)


__all__ = [
    "Artifact",
    "Binding",
    "BindingRefused",
    "Execution",
    "ExecutionStatus",
    "Guarantee",
    "Program",
    "ResolvedLimits",
    "Sandbox",
    "SandboxCapabilities",
    "profile_for",
]
