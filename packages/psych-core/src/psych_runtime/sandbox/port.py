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

import math
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from typing import Protocol
from typing import runtime_checkable

from pydantic import JsonValue

from psych_runtime.core.errors import PsychError
from psych_runtime.core.records import JsonObject
from psych_runtime.core.spec.code_execution import Isolation
from psych_runtime.core.spec.code_execution import NetworkAccess


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


class InvalidSandboxValue(PsychError, ValueError):
    """A sandbox limit, result or failure given a value it cannot hold."""


def _positive(owner: str, name: str, value: object, *, whole: bool) -> None:
    """Refuse anything but a finite number above zero (a whole one where ``whole``)."""
    kinds: tuple[type, ...] = (int,) if whole else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds):
        wanted = "a whole number" if whole else "a number"
        raise InvalidSandboxValue(f"{owner}.{name} must be {wanted}, got {value!r}")
    assert isinstance(value, int | float)
    if not math.isfinite(value) or value <= 0:
        raise InvalidSandboxValue(f"{owner}.{name} must be above zero, got {value!r}")


_DEFAULT_DISK_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ResolvedLimits:
    """One execution's limits, every one of them a number above zero (profile and Spec applied).

    ``memory_bytes`` caps the address space (``RLIMIT_AS``); ``address_space_bytes`` is
    the same number under the name ``SandboxLimits`` uses. ``disk_bytes`` is everything
    the program may store at once: its workspace, its scratch space and files it holds
    open without a name, each file, directory or link costing at least 4 KiB.

    Raises:
        InvalidSandboxValue: a limit that is not a positive number.
    """

    cpu_seconds: float = 10.0
    wall_seconds: float = 30.0
    memory_bytes: int = 512 * 1024 * 1024
    file_size_bytes: int = 64 * 1024 * 1024
    process_count: int = 32
    disk_bytes: int = _DEFAULT_DISK_BYTES

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "wall_seconds"):
            _positive("ResolvedLimits", name, getattr(self, name), whole=False)
        for name in ("memory_bytes", "file_size_bytes", "process_count", "disk_bytes"):
            _positive("ResolvedLimits", name, getattr(self, name), whole=True)

    @property
    def address_space_bytes(self) -> int:
        """``memory_bytes``, under the name ``SandboxLimits`` gives it."""
        return self.memory_bytes

    def reference(self) -> "SandboxLimits":
        """The five limits ``SandboxLimits`` names (``disk_bytes`` has no place there)."""
        return SandboxLimits(address_space_bytes=self.memory_bytes, **_same_named(self))


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxLimits:
    """Five caps on one execution, every one required and above zero.

    The shape a caller who writes limits by hand uses; a sandbox runs ``ResolvedLimits``,
    which adds ``disk_bytes`` (see ``resolved``). ``address_space_bytes`` is what
    ``ResolvedLimits`` calls ``memory_bytes``: the virtual memory the program may map,
    reached as a ``MemoryError`` inside it. ``process_count`` counts the processes and
    threads of the program's own uid (a root host gives each running program one).

    Raises:
        InvalidSandboxValue: a limit that is not a positive number.
    """

    cpu_seconds: float
    address_space_bytes: int
    file_size_bytes: int
    process_count: int
    wall_seconds: float

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "wall_seconds"):
            _positive("SandboxLimits", name, getattr(self, name), whole=False)
        for name in ("address_space_bytes", "file_size_bytes", "process_count"):
            _positive("SandboxLimits", name, getattr(self, name), whole=True)

    def resolved(self, *, disk_bytes: int = _DEFAULT_DISK_BYTES) -> ResolvedLimits:
        """These limits as a sandbox runs them, with ``disk_bytes`` for all it may store."""
        return ResolvedLimits(
            memory_bytes=self.address_space_bytes, disk_bytes=disk_bytes, **_same_named(self)
        )


_SAME_NAMED_LIMITS = ("cpu_seconds", "wall_seconds", "file_size_bytes", "process_count")
"""The limits ``ResolvedLimits`` and ``SandboxLimits`` both hold under one name."""


def _same_named(limits: ResolvedLimits | SandboxLimits) -> dict[str, Any]:
    """The limits of ``limits`` the other shape holds under the same name."""
    return {name: getattr(limits, name) for name in _SAME_NAMED_LIMITS}


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

    def __post_init__(self) -> None:
        limits: object = self.limits
        if isinstance(limits, SandboxLimits):
            object.__setattr__(self, "limits", limits.resolved())
        elif not isinstance(limits, ResolvedLimits):
            raise InvalidSandboxValue(
                f"Program.limits must be ResolvedLimits or SandboxLimits, got {limits!r}"
            )


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


class SandboxLimit(StrEnum):
    """Which limit ended an execution (``Execution.limit`` holds its value)."""

    CPU = "cpu"
    """CPU time (``cpu_seconds``)."""
    MEMORY = "memory"
    """Address space (``memory_bytes``), or the memory a container's cgroup allows."""
    FILE_SIZE = "file_size"
    """One file grew past ``file_size_bytes``."""
    PROCESSES = "processes"
    """``process_count`` processes and threads at once."""
    WALL = "wall"
    """Real time (``wall_seconds``): the host killed it."""
    DISK = "disk"
    """All it stored at once passed ``disk_bytes``."""
    OUTPUT = "output"
    """It printed more than ``max_output_bytes`` on one stream."""


_KIND_MAX = 128
_MESSAGE_MAX = 8_192
_TRACEBACK_MAX = 65_536


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxFailure:
    """Why a program did not end cleanly, as data the model can read.

    Shaped as the ``ToolFailure`` the ``run_code`` call records (kind, message,
    traceback), with the same kinds: ``program_error`` (it raised),
    ``limit_<limit>`` (a limit stopped it), ``sandbox_failed`` (it could not run).

    Attributes:
        kind: 1 to 128 characters.
        message: at most 8,192 characters.
        traceback: at most 65,536 characters, when the program raised.

    Raises:
        InvalidSandboxValue: a field outside those bounds.
    """

    kind: str
    message: str
    traceback: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not 1 <= len(self.kind) <= _KIND_MAX:
            raise InvalidSandboxValue(
                f"SandboxFailure.kind must be 1 to {_KIND_MAX} characters, got {self.kind!r}"
            )
        if not isinstance(self.message, str) or len(self.message) > _MESSAGE_MAX:
            raise InvalidSandboxValue(
                f"SandboxFailure.message must be text of at most {_MESSAGE_MAX} characters"
            )
        trace = self.traceback
        if trace is not None and (not isinstance(trace, str) or len(trace) > _TRACEBACK_MAX):
            raise InvalidSandboxValue(
                f"SandboxFailure.traceback must be text of at most {_TRACEBACK_MAX} characters"
            )


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
    network_denied: bool = False
    """The program asked for no network and the backend enforces that (established,
    for the namespaces backend, by its probe when it opened)."""

    @property
    def limit_hit(self) -> SandboxLimit | None:
        """``limit`` as a ``SandboxLimit``, when a limit stopped the program."""
        return SandboxLimit(self.limit) if self.limit is not None else None

    @property
    def failure(self) -> SandboxFailure | None:
        """Why the program did not end cleanly, or None when it ended ``ok``."""
        if self.status is ExecutionStatus.OK:
            return None
        if self.status is ExecutionStatus.ERROR:
            kind = "program_error"
        elif self.status is ExecutionStatus.LIMIT:
            kind = f"limit_{self.limit or 'exceeded'}"
        else:
            kind = "sandbox_failed"
        message = self.message or f"the program ended {self.status.value}"
        trace = self.traceback
        return SandboxFailure(
            kind=kind,
            message=message[:_MESSAGE_MAX],
            # The end of a traceback says the most: keep that when it is too long.
            traceback=trace[-_TRACEBACK_MAX:] if trace is not None else None,
        )

    def result(self) -> "SandboxResult":
        """This execution as a ``SandboxResult`` (the full output where it was kept)."""
        stdout, stdout_cut = _stream(self.stdout, self.stdout_full, self.stdout_bytes)
        stderr, stderr_cut = _stream(self.stderr, self.stderr_full, self.stderr_bytes)
        return SandboxResult(
            stdout=stdout,
            stderr=stderr,
            value=self.value if self.status is ExecutionStatus.OK else None,
            failure=self.failure,
            duration_seconds=self.duration_seconds,
            limit_hit=self.limit_hit,
            network_denied=self.network_denied,
            stdout_truncated=stdout_cut,
            stderr_truncated=stderr_cut,
        )


def _stream(preview: str, full: bytes | None, total: int) -> tuple[str, bool]:
    """The most of a stream there is, and whether the program printed more than that."""
    if full is not None:
        return full.decode("utf-8", errors="replace"), total > len(full)
    return preview, total > len(preview.encode("utf-8"))


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxResult:
    """What one execution produced, in the shape of the reference API.

    Built from an ``Execution`` with ``execution.result()``; ``Execution`` stays what a
    backend returns, since it also carries the exit code, the artifacts, the byte
    counts and the number of tool calls.

    Attributes:
        stdout: what the program printed: all of it that was kept, else the preview.
        stderr: the same for its error stream.
        value: its value (JSON), when it ended ``ok``.
        failure: why it did not end cleanly, when it did not.
        duration_seconds: from start to teardown, zero or more.
        limit_hit: the limit that stopped it, when one did.
        network_denied: it asked for no network and the backend enforces that.
        stdout_truncated: it printed more than ``stdout`` holds.
        stderr_truncated: the same for its error stream.

    Raises:
        InvalidSandboxValue: a negative or non-finite duration.
    """

    stdout: str = ""
    stderr: str = ""
    value: JsonValue = None
    failure: SandboxFailure | None = None
    duration_seconds: float
    limit_hit: SandboxLimit | None = None
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    network_denied: bool = False

    def __post_init__(self) -> None:
        duration = self.duration_seconds
        if (
            isinstance(duration, bool)
            or not isinstance(duration, int | float)
            or not math.isfinite(duration)
            or duration < 0
        ):
            raise InvalidSandboxValue(
                f"SandboxResult.duration_seconds must be a number of seconds >= 0, got {duration!r}"
            )


class BindingRefused(Exception):
    """A binding call the host would not carry out; the program sees it raised."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


Binding = Callable[[str, JsonObject], Awaitable[JsonValue]]
"""The host side of a program's tool calls: ``await binding(name, arguments)``.

Raises ``BindingRefused`` for a call the program should see fail.
"""

HostBinding = Binding
"""The reference API's name for ``Binding``."""


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
    "HostBinding",
    "InvalidSandboxValue",
    "Program",
    "ResolvedLimits",
    "Sandbox",
    "SandboxCapabilities",
    "SandboxFailure",
    "SandboxLimit",
    "SandboxLimits",
    "SandboxResult",
    "profile_for",
]
