"""What every backend shares: starting the runner, the protocol, limits and clean-up.

A backend only says how to start the runner (``_ProcessSandbox._command``); this module
does the rest: the workspace, the user the program runs as, rlimits, the two protocol
pipes, capturing output, wall-clock kills, killing whatever the program left running,
collecting artifacts, and turning all of it into an ``Execution``.
"""

import asyncio
import contextlib
import errno
import fcntl
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

from pydantic import JsonValue

from psych_runtime.adapters.sandbox import Artifact
from psych_runtime.adapters.sandbox import Binding
from psych_runtime.adapters.sandbox import BindingRefused
from psych_runtime.adapters.sandbox import Execution
from psych_runtime.adapters.sandbox import ExecutionStatus
from psych_runtime.adapters.sandbox import Guarantee
from psych_runtime.adapters.sandbox import Program
from psych_runtime.adapters.sandbox import ResolvedLimits
from psych_runtime.adapters.sandbox import SandboxCapabilities
from psych_runtime.spec import NetworkAccess
from psych_sandbox._mounts import INODE_CHARGE
from psych_sandbox._mounts import Scratch
from psych_sandbox._mounts import private_ipc
from psych_sandbox._mounts import private_scratch

RUNNER_SOURCE = (Path(__file__).parent / "_runner.py").read_text(encoding="utf-8")
"""The runner's text, handed to the interpreter with ``-c`` so no file must be readable."""

SANDBOX_PATH = "/usr/bin:/bin"
DEFAULT_UID_BASE = 2_000_100_000
"""First uid of the range a root host runs programs as, one uid per running program.

No account needs to exist for them. Pick a range nothing else on the machine uses: after
each program every process of its uid is killed.
"""
DEFAULT_UID_SLOTS = 64
HOST_ENFORCED = frozenset(
    {
        Guarantee.SEPARATE_PROCESS,
        Guarantee.CLEAN_ENVIRONMENT,
        Guarantee.PRIVATE_WORKSPACE,
        Guarantee.WALL_CLOCK_KILL,
        Guarantee.CPU_LIMIT,
        Guarantee.MEMORY_LIMIT,
        Guarantee.FILE_SIZE_LIMIT,
    }
)
"""What every backend enforces, since the host starts, limits and kills the process itself."""
_PROTOCOL_LINE_LIMIT = 64 * 1024 * 1024
_DRAIN_SECONDS = 1.0
_DISK_POLL_SECONDS = 0.05


def runner_argv(python: str, fds: tuple[int, int]) -> list[str]:
    """How ``python`` starts the runner: isolated, without ``site``, on the two pipes ``fds``."""
    return [python, "-I", "-S", "-c", RUNNER_SOURCE, str(fds[0]), str(fds[1])]


class SandboxUnavailable(RuntimeError):
    """The backend cannot run on this machine; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class Launch:
    """How one program's process is started (built by the backend)."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    pass_fds: tuple[int, ...]
    extra_processes: int = 0
    """Processes the backend itself needs under the program's uid (bwrap's, say)."""
    exit_signal_offset: int | None = None
    """When a wrapper reports a child killed by signal N as exit status OFFSET + N."""
    host_rlimits: bool = True
    """Whether the started process gets the rlimits (not a container engine's client)."""
    container: str | None = None
    """The container's name, for a backend that removes it when the program stops."""
    switch_user: bool = True
    """Whether the started process becomes the program's uid (not a container engine's client)."""
    scratch: Scratch | None = None
    """Private scratch space and IPC the child sets up as root before it becomes the uid."""
    scratch_paths: tuple[str, ...] = ()
    """Scratch mounts inside the program's mount namespace, measured against ``disk_bytes``."""
    sigkill_limit: str = "cpu"
    renumber_fds: bool = False
    """Hand the protocol pipes over as descriptors 3 and 4 (podman passes 3 .. 3+N-1 only)."""
    """The limit a SIGKILL the host did not send means (the hard CPU limit; a cgroup's OOM)."""


@dataclass
class Identity:
    """The uid and gid a program runs as, or None to keep the host's."""

    uid: int | None
    gid: int | None


class UidPool:
    """One unprivileged uid per running program, so its limits and clean-up are its own.

    A uid is claimed with an exclusive ``flock`` on a file in a root-only directory, so
    pools in other processes on the machine (other Workers) never hand out the same uid
    at once; within one process, pools with the same range share their claims.
    """

    _held: ClassVar[dict[int, int]] = {}
    """Claimed uid -> the lock file's descriptor, for every pool of this process."""
    _cursor: ClassVar[int] = 0

    def __init__(self, base: int, slots: int, lock_dir: str | None = None) -> None:
        self._uids = range(base, base + slots)
        self._lock_dir = lock_dir or _default_lock_dir()

    async def acquire(self) -> int:
        while True:
            # Round robin, and a uid with no process at all first: the zombies of a
            # program's orphans (reaped by pid 1, slowly on some hosts) still count
            # against RLIMIT_NPROC of their uid.
            busy = uids_with_processes()
            start = UidPool._cursor % len(self._uids)
            ordered = list(self._uids[start:]) + list(self._uids[:start])
            ordered.sort(key=lambda uid: uid in busy)
            for uid in ordered:
                if uid in UidPool._held:
                    continue
                fd = os.open(
                    os.path.join(self._lock_dir, f"{uid}.lock"), os.O_RDWR | os.O_CREAT, 0o600
                )
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(fd)
                    continue
                UidPool._held[uid] = fd
                UidPool._cursor = uid - self._uids.start + 1
                return uid
            await asyncio.sleep(0.05)

    def release(self, uid: int) -> None:
        fd = UidPool._held.pop(uid, None)
        if fd is not None:
            os.close(fd)  # closing drops the lock


def _default_lock_dir() -> str:
    """A directory only root may write, for the uid claims: /run's, else the temp dir's."""
    for parent in ("/run", tempfile.gettempdir()):
        path = os.path.join(parent, "psych-sandbox-uids")
        with contextlib.suppress(OSError):
            os.makedirs(path, mode=0o700, exist_ok=True)
            info = os.lstat(path)
            if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid():
                os.chmod(path, 0o700)
                return path
    raise SandboxUnavailable("no directory for the sandbox uid claims (tried /run and tmp)")


def running_as_root() -> bool:
    return os.geteuid() == 0


def reachable_by_others(path: str) -> bool:
    """Whether a user who is neither the owner nor in the group can read/run ``path``."""
    real = Path(os.path.realpath(path))
    try:
        for parent in reversed(real.parents):
            if not os.stat(parent).st_mode & stat.S_IXOTH:
                return False
        mode = os.stat(real).st_mode
    except OSError:
        return False
    return bool(mode & stat.S_IROTH) and (not stat.S_ISREG(mode) or bool(mode & stat.S_IXOTH))


def interpreter_candidates(python: str | None, *, must_be_public: bool) -> list[str]:
    """Interpreters to try, best first: the one asked for, the host's, the system's."""
    if python is not None:
        return [python]
    found = [sys.executable]
    for name in ("/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"):
        if os.path.exists(name) and name not in found:
            found.append(name)
    if must_be_public:
        found = [p for p in found if reachable_by_others(p)]
    return found


def _pids() -> Iterator[int]:
    """The pid of every process on the machine (as ``/proc`` lists them now)."""
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            yield int(entry.name)


def _proc_texts(name: str) -> Iterator[tuple[int, str]]:
    """Each process's pid and ``/proc/PID/<name>``, leaving out those gone meanwhile."""
    for pid in _pids():
        try:
            with open(f"/proc/{pid}/{name}", encoding="ascii", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        yield pid, text


def process_uids_alive(uid: int) -> list[int]:
    """Pids of live (not zombie) processes whose real uid is ``uid``."""
    pids: list[int] = []
    for pid, status in _proc_texts("status"):
        with contextlib.suppress(ValueError, IndexError):
            zombie = False
            for line in status.splitlines():
                if line.startswith("State:"):
                    zombie = line.split()[1] in ("Z", "X")
                elif line.startswith("Uid:"):
                    if int(line.split()[1]) == uid and not zombie:
                        pids.append(pid)
                    break
    return pids


def uids_with_processes() -> set[int]:
    """The real uids of every process on the machine, zombies included."""
    uids: set[int] = set()
    for pid in _pids():
        with contextlib.suppress(OSError):
            uids.add(os.stat(f"/proc/{pid}").st_uid)
    return uids


def _kill_everything_of_current_uid() -> None:
    with contextlib.suppress(OSError):
        os.kill(-1, signal.SIGKILL)


async def reap_uid(uid: int, gid: int) -> bool:
    """Kill every process of ``uid`` (a double-forked daemon included); True when none left.

    ``kill(-1, SIGKILL)`` sent as that uid reaches exactly its processes, wherever they
    were reparented; it runs in a short-lived child that switched to the uid.
    """
    for _ in range(50):
        if not process_uids_alive(uid):
            return True
        process = await asyncio.create_subprocess_exec(
            "/bin/true",
            user=uid,
            group=gid,
            extra_groups=[],
            preexec_fn=_kill_everything_of_current_uid,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            env={"PATH": SANDBOX_PATH},
        )
        await process.wait()
        await asyncio.sleep(0.02)
    return not process_uids_alive(uid)


def rlimit_setter(program: Program, *, nproc: int | None) -> Callable[[], None]:
    """The ``preexec_fn`` that lowers the child's rlimits before it execs (no locks taken).

    ``RLIMIT_MSGQUEUE`` is 0: a POSIX message queue would be storage no other limit counts.
    """
    limits = program.limits
    cpu = max(1, int(limits.cpu_seconds + 0.999))
    settings: list[tuple[int, tuple[int, int]]] = [
        (resource.RLIMIT_CORE, (0, 0)),
        (resource.RLIMIT_CPU, (cpu, cpu + 1)),
        (resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes)),
        (resource.RLIMIT_FSIZE, (limits.file_size_bytes, limits.file_size_bytes)),
        (resource.RLIMIT_MSGQUEUE, (0, 0)),
    ]
    if nproc is not None:
        settings.append((resource.RLIMIT_NPROC, (nproc, nproc)))

    def apply() -> None:
        for which, value in settings:
            resource.setrlimit(which, value)

    return apply


def child_setup(
    program: Program, launch: Launch, identity: Identity, *, nproc: int | None
) -> Callable[[], None]:
    """The ``preexec_fn``: rlimits, private scratch and IPC (as root), then the uid, then cwd.

    The uid is switched here rather than by ``subprocess`` so that the namespaces can be
    made while the child is still root.
    """
    rlimits = rlimit_setter(program, nproc=nproc) if launch.host_rlimits else None
    scratch = launch.scratch
    uid = identity.uid if launch.switch_user else None
    gid = identity.gid if launch.switch_user else None
    cwd = launch.cwd
    renumber = launch.pass_fds if launch.renumber_fds else ()

    def apply() -> None:
        if renumber:
            # Out of the way first, so neither lands on the other; dup2 clears CLOEXEC,
            # the originals (non-inheritable) close at exec.
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in renumber]
            for target, fd in enumerate(high, start=3):
                os.dup2(fd, target)
                os.close(fd)
        if rlimits is not None:
            rlimits()
        if scratch is not None:
            private_ipc()
            if scratch.mounts:
                private_scratch(scratch)
        if uid is not None and gid is not None:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
        os.chdir(cwd)

    return apply


def prepare_workspace(program: Program, identity: Identity) -> tuple[Path, bool]:
    """The program's working directory, owned by its user; True when it is temporary."""
    if program.workspace is not None:
        path = Path(program.workspace)
        path.mkdir(parents=True, exist_ok=True)
        temporary = False
    else:
        path = Path(tempfile.mkdtemp(prefix="psych-sandbox-"))
        temporary = True
    if identity.uid is not None and identity.gid is not None:
        # A kept workspace holds files of earlier programs (other uids). Links are not
        # followed, and a file with several hard links is left alone: it may be a host
        # file an earlier program linked in, which must not change hands.
        for root, dirs, files in os.walk(path):
            for name in dirs + files:
                full = os.path.join(root, name)
                with contextlib.suppress(OSError):
                    info = os.lstat(full)
                    if stat.S_ISDIR(info.st_mode) or info.st_nlink == 1:
                        os.lchown(full, identity.uid, identity.gid)
        os.chown(path, identity.uid, identity.gid)
    os.chmod(path, 0o700)
    return path, temporary


def snapshot(workspace: Path) -> dict[str, tuple[int, int]]:
    """Each regular file under ``workspace`` with its (mtime_ns, size); links not followed."""
    found: dict[str, tuple[int, int]] = {}
    for root, dirs, files in os.walk(workspace, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(root, name)
            try:
                info = os.lstat(full)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                found[os.path.relpath(full, workspace)] = (info.st_mtime_ns, info.st_size)
    return found


def collect_artifacts(
    workspace: Path, before: dict[str, tuple[int, int]], program: Program
) -> tuple[Artifact, ...]:
    """Files the program created or changed, within the artifact budget.

    Runs after every process of the program is dead, opens with ``O_NOFOLLOW`` and
    reads only regular files, so a symlink left in the workspace cannot make the host
    read a file of its own.
    """
    if program.max_artifacts <= 0:
        return ()
    after = snapshot(workspace)
    changed = [path for path, seen in after.items() if before.get(path) != seen]
    artifacts: list[Artifact] = []
    budget = program.max_artifact_bytes
    for relative in sorted(changed)[: program.max_artifacts]:
        size = after[relative][1]
        content: bytes | None = None
        if size <= budget:
            with contextlib.suppress(OSError):
                fd = os.open(workspace / relative, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                try:
                    if stat.S_ISREG(os.fstat(fd).st_mode):
                        with os.fdopen(fd, "rb", closefd=False) as f:
                            content = f.read(size + 1)[:size]
                finally:
                    os.close(fd)
        if content is not None:
            budget -= len(content)
        artifacts.append(Artifact(path=relative, size=size, content=content))
    return tuple(artifacts)


@dataclass
class _Capture:
    """One output stream: a preview, a count, and everything up to a cap when asked."""

    preview_limit: int
    keep_limit: int = 0
    preview: bytearray = field(default_factory=bytearray)
    kept: bytearray = field(default_factory=bytearray)
    total: int = 0

    def add(self, chunk: bytes) -> None:
        room = self.preview_limit - len(self.preview)
        if room > 0:
            self.preview += chunk[:room]
        room = self.keep_limit - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]
        self.total += len(chunk)

    def text(self) -> str:
        return bytes(self.preview).decode("utf-8", errors="replace")

    def full(self) -> bytes | None:
        """All that was kept, when there was more than the preview and it was kept."""
        if self.keep_limit <= 0 or self.total <= self.preview_limit:
            return None
        return bytes(self.kept)


def workspace_charge(workspace: Path) -> int:
    """What ``workspace`` costs against ``disk_bytes``: its blocks plus 4 KiB per entry."""
    total = 0
    pending = [str(workspace)]
    while pending:
        try:
            entries = os.scandir(pending.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                total += info.st_blocks * 512 + INODE_CHARGE
                if stat.S_ISDIR(info.st_mode):
                    pending.append(entry.path)
    return total


def session_pids(session: int) -> list[int]:
    """Pids of the live processes of session ``session`` (the program's, on a host not root)."""
    found: list[int] = []
    for pid, stat_line in _proc_texts("stat"):
        with contextlib.suppress(ValueError, IndexError):
            fields = stat_line.rsplit(")", 1)[1].split()
            if fields[0] not in ("Z", "X") and int(fields[3]) == session:
                found.append(pid)
    return found


def scratch_charge(pids: Sequence[int], paths: Sequence[str]) -> tuple[int, set[int]]:
    """What the scratch mounts inside the program's mount namespace cost, and their devices.

    Each mount is measured once (bind mounts of one tmpfs share a device): its used blocks
    plus 4 KiB per used inode, read through ``/proc/PID/root`` of a program process.
    """
    total = 0
    devices: set[int] = set()
    try:
        own = os.stat("/proc/self/ns/mnt").st_ino
    except OSError:
        return 0, devices
    namespaces: set[int] = {own}
    for pid in pids:
        try:
            namespace = os.stat(f"/proc/{pid}/ns/mnt").st_ino
        except OSError:
            continue
        if namespace in namespaces:
            continue
        namespaces.add(namespace)
        for path in paths:
            where = f"/proc/{pid}/root{path}"
            try:
                device = os.stat(where).st_dev
                usage = os.statvfs(where)
            except OSError:
                continue
            if device in devices:
                continue
            devices.add(device)
            total += (usage.f_blocks - usage.f_bfree) * usage.f_frsize
            total += (usage.f_files - usage.f_ffree) * INODE_CHARGE
    return total, devices


def held_charge(pids: Sequence[int], counted: set[int]) -> int:
    """Bytes of files the program holds open that no directory shows any more.

    A ``memfd_create`` file, or a file unlinked while open, is storage no walk of a
    directory finds; it is found through ``/proc/PID/fd`` (files on ``counted`` devices,
    measured whole already, are skipped).
    """
    total = 0
    seen: set[tuple[int, int]] = set()
    for pid in pids:
        try:
            entries = os.scandir(f"/proc/{pid}/fd")
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    info = os.stat(entry.path)
                except OSError:
                    continue
                if not stat.S_ISREG(info.st_mode) or info.st_nlink != 0:
                    continue
                key = (info.st_dev, info.st_ino)
                if info.st_dev in counted or key in seen:
                    continue
                seen.add(key)
                total += info.st_blocks * 512 + INODE_CHARGE
    return total


@dataclass(frozen=True, slots=True)
class StorageMeter:
    """Everything one running program stores, as charged against ``disk_bytes``.

    The workspace (blocks plus 4 KiB an entry), the scratch mounts of its own mount
    namespace (used blocks plus 4 KiB an inode), and files it holds open that have no
    name (memfd, unlinked files).
    """

    workspace: Path
    pids: Callable[[], list[int]]
    scratch_paths: tuple[str, ...]

    def __call__(self) -> int:
        """Measure once."""
        pids = self.pids()
        scratch, devices = scratch_charge(pids, self.scratch_paths)
        return workspace_charge(self.workspace) + scratch + held_charge(pids, devices)


async def watch_storage(meter: Callable[[], int], limit: int, exceeded: asyncio.Event) -> None:
    """Set ``exceeded`` once the program stores more than ``limit`` bytes in all.

    A poll, so a fast writer can overshoot by what it writes between two looks (each
    scratch mount is also capped by the kernel): the backends report the quota, they
    do not claim the kernel enforces it.
    """
    while not exceeded.is_set():
        await asyncio.sleep(_DISK_POLL_SECONDS)
        if await asyncio.to_thread(meter) > limit:
            exceeded.set()
            return


@dataclass
class _Outcome:
    done: dict[str, JsonValue] | None = None
    limit: str | None = None
    calls: int = 0
    protocol_error: str | None = None


_SIGNAL_LIMITS: dict[int, str] = {
    signal.SIGXCPU: "cpu",
    signal.SIGXFSZ: "file_size",
    # Nothing but the hard CPU limit (soft + 1s) sends SIGKILL before the host does.
    signal.SIGKILL: "cpu",
}


def _exit_signal(code: int | None, launch: Launch) -> int | None:
    if code is None:
        return None
    if code < 0:
        return -code
    offset = launch.exit_signal_offset
    if offset is not None and code > offset:
        return code - offset
    return None


def _execution(
    outcome: _Outcome,
    code: int | None,
    launch: Launch,
    stdout: _Capture,
    stderr: _Capture,
    program: Program,
) -> Execution:
    """Map how the process ended to an ``Execution`` (without artifacts and duration)."""
    base = Execution(
        status=ExecutionStatus.ERROR,
        stdout=stdout.text(),
        stderr=stderr.text(),
        stdout_bytes=stdout.total,
        stderr_bytes=stderr.total,
        exit_code=code,
        binding_calls=outcome.calls,
        stdout_full=stdout.full(),
        stderr_full=stderr.full(),
    )
    limits = program.limits

    def limited(limit: str, message: str, trace: str | None = None) -> Execution:
        return replace(
            base, status=ExecutionStatus.LIMIT, limit=limit, message=message, traceback=trace
        )

    if outcome.limit == "wall":
        return limited(
            "wall", f"the program ran past its wall-clock limit of {limits.wall_seconds:g}s"
        )
    if outcome.limit == "disk":
        return limited("disk", _limit_message("disk", program))
    if outcome.limit == "output":
        return limited("output", f"the program printed more than {program.max_output_bytes} bytes")
    if outcome.protocol_error is not None:
        message = f"the sandbox lost track of the program: {outcome.protocol_error}"
        return replace(base, status=ExecutionStatus.FAILED, message=message)
    done = outcome.done
    if done is not None:
        if done.get("status") == "ok":
            return replace(base, status=ExecutionStatus.OK, value=done.get("value"))
        exception = str(done.get("exception"))
        error_number = done.get("errno")
        traceback = done.get("traceback")
        trace = traceback if isinstance(traceback, str) else None
        text = str(done.get("message", ""))
        limit: str | None = None
        if exception == "MemoryError":
            limit = "memory"
        elif error_number == errno.EFBIG:
            limit = "file_size"
        elif error_number in (errno.ENOSPC, errno.EDQUOT):
            limit = "disk"
        elif error_number == errno.EAGAIN or "can't start new thread" in text:
            limit = "processes"
        if limit is not None:
            return limited(limit, f"{_limit_message(limit, program)} ({text})", trace)
        return replace(base, traceback=trace, message=text)
    number = _exit_signal(code, launch)
    if number is not None and number in _SIGNAL_LIMITS:
        limit = launch.sigkill_limit if number == signal.SIGKILL else _SIGNAL_LIMITS[number]
        return limited(limit, _limit_message(limit, program))
    if "MemoryError" in stderr.text():
        return limited("memory", _limit_message("memory", program))
    if number is not None:
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        message = f"the program was killed by {name} before it finished"
    else:
        message = f"the program exited with status {code} before it finished"
    return replace(base, message=message)


def _limit_message(limit: str, program: Program) -> str:
    limits = program.limits
    return {
        "cpu": f"the program used more than {limits.cpu_seconds:g}s of CPU",
        "memory": f"the program ran out of its {limits.memory_bytes} bytes of memory",
        "file_size": f"the program wrote a file past {limits.file_size_bytes} bytes",
        "processes": f"the program hit its limit of {limits.process_count} processes",
        "disk": f"the program stored more than {limits.disk_bytes} bytes (workspace, scratch "
        "space and open files together)",
    }[limit]


class ProcessSandbox:
    """The shared body of the backends: one fresh process per program.

    Subclasses set ``_capabilities`` and implement ``_command``.
    """

    _capabilities: SandboxCapabilities

    def __init__(
        self,
        *,
        python: str,
        uid_base: int | None,
        uid_slots: int,
    ) -> None:
        self._python = python
        self._uids = UidPool(uid_base, uid_slots) if uid_base is not None else None
        self._running: set[asyncio.subprocess.Process] = set()
        self._closed = False

    @property
    def capabilities(self) -> SandboxCapabilities:
        """What this backend contains, as established when it was opened."""
        return self._capabilities

    @property
    def python(self) -> str:
        """The interpreter programs run with."""
        return self._python

    def _command(
        self, program: Program, workspace: Path, identity: Identity, fds: tuple[int, int]
    ) -> Launch:
        raise NotImplementedError

    async def _trial(self, source: str, *, wall_seconds: float = 20) -> Execution:
        """Run ``source`` under small limits and with no host tools, to check the setup."""

        async def no_tools(name: str, arguments: dict[str, JsonValue]) -> JsonValue:
            raise BindingRefused("unknown_tool", name)

        limits = ResolvedLimits(cpu_seconds=5, wall_seconds=wall_seconds, process_count=16)
        return await self.execute(Program(source=source, limits=limits), no_tools)

    def _limits_nproc(self) -> bool:
        """Whether RLIMIT_NPROC applies: only to a uid of our own (else it counts the host's)."""
        return self._uids is not None

    async def execute(self, program: Program, binding: Binding) -> Execution:
        """Run ``program`` in a fresh process and say what it did."""
        if self._closed:
            return Execution(status=ExecutionStatus.FAILED, message="the sandbox is closed")
        started = time.monotonic()
        uid = await self._uids.acquire() if self._uids is not None else None
        identity = Identity(uid=uid, gid=uid)
        try:
            try:
                workspace, temporary = prepare_workspace(program, identity)
            except OSError as error:
                return Execution(
                    status=ExecutionStatus.FAILED,
                    message=f"could not prepare the workspace: {error}",
                )
            try:
                before = {} if temporary else snapshot(workspace)
                result = await self._run(program, binding, workspace, identity)
                artifacts = collect_artifacts(workspace, before, program)
            finally:
                if temporary:
                    shutil.rmtree(workspace, ignore_errors=True)
        finally:
            if uid is not None and self._uids is not None:
                self._uids.release(uid)
        return replace(
            result,
            artifacts=artifacts,
            duration_seconds=time.monotonic() - started,
            network_denied=program.network is NetworkAccess.DENIED
            and Guarantee.NO_NETWORK in self._capabilities.enforced,
        )

    async def _run(
        self, program: Program, binding: Binding, workspace: Path, identity: Identity
    ) -> Execution:
        pipes = [os.pipe() for _ in range(4)]  # to child, from child, stdout, stderr
        (to_child_r, to_child_w), (from_child_r, from_child_w) = pipes[0], pipes[1]
        (out_r, out_w), (err_r, err_w) = pipes[2], pipes[3]
        child_ends = (to_child_r, from_child_w, out_w, err_w)
        host_ends = (to_child_w, from_child_r, out_r, err_r)
        launch = self._command(program, workspace, identity, (to_child_r, from_child_w))
        nproc = None
        if self._limits_nproc():
            nproc = program.limits.process_count + launch.extra_processes
        try:
            process = await asyncio.create_subprocess_exec(
                *launch.argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out_w,
                stderr=err_w,
                pass_fds=() if launch.renumber_fds else launch.pass_fds,
                close_fds=not launch.renumber_fds,
                cwd="/",  # the child changes to launch.cwd itself, after its mounts
                env=launch.env,
                start_new_session=True,
                preexec_fn=child_setup(program, launch, identity, nproc=nproc),
            )
        except (OSError, subprocess.SubprocessError) as error:
            for fd in host_ends:
                os.close(fd)
            return Execution(
                status=ExecutionStatus.FAILED, message=f"could not start the program: {error}"
            )
        finally:
            for fd in child_ends:
                os.close(fd)
        self._running.add(process)
        loop = asyncio.get_running_loop()
        transports: list[asyncio.BaseTransport] = []
        tasks: list[asyncio.Task[object]] = []
        try:
            readers = []
            for fd in (from_child_r, out_r, err_r):
                stream = asyncio.StreamReader(limit=_PROTOCOL_LINE_LIMIT)
                transport, _ = await loop.connect_read_pipe(
                    lambda stream=stream: asyncio.StreamReaderProtocol(stream),  # type: ignore[misc]
                    os.fdopen(fd, "rb", 0),
                )
                transports.append(transport)
                readers.append(stream)
            write_transport, write_protocol = await loop.connect_write_pipe(
                asyncio.streams.FlowControlMixin, os.fdopen(to_child_w, "wb", 0)
            )
            transports.append(write_transport)
            writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
            return await self._supervise(
                program, binding, process, (identity, launch, workspace), readers, writer, tasks
            )
        except BaseException:
            await asyncio.shield(self._stop(process, identity, launch))
            raise
        finally:
            for task in tasks:
                task.cancel()
            for opened in transports:
                opened.close()
            self._running.discard(process)

    async def _supervise(
        self,
        program: Program,
        binding: Binding,
        process: asyncio.subprocess.Process,
        where: tuple[Identity, Launch, Path],
        readers: list[asyncio.StreamReader],
        writer: asyncio.StreamWriter,
        tasks: list[asyncio.Task[object]],
    ) -> Execution:
        identity, launch, workspace = where
        protocol, out, err = readers
        kept = program.max_output_bytes if program.keep_full_output else 0
        stdout = _Capture(program.preview_bytes, kept)
        stderr = _Capture(program.preview_bytes, kept)
        outcome = _Outcome()
        exceeded = asyncio.Event()
        filled = asyncio.Event()
        writer.write(_line({"source": program.source, "bindings": list(program.bindings)}))
        for stream, capture in ((out, stdout), (err, stderr)):
            tasks.append(
                asyncio.create_task(_pump(stream, capture, program.max_output_bytes, exceeded))
            )
        talk = asyncio.create_task(_converse(protocol, writer, program, binding, outcome))
        waiting = asyncio.create_task(process.wait())
        flood = asyncio.create_task(exceeded.wait())
        full = asyncio.create_task(filled.wait())
        uid = identity.uid
        meter = StorageMeter(
            workspace=workspace,
            pids=(lambda: process_uids_alive(uid))
            if uid is not None
            else (lambda: session_pids(process.pid)),
            scratch_paths=launch.scratch_paths,
        )
        disk = asyncio.create_task(watch_storage(meter, program.limits.disk_bytes, filled))
        tasks += [talk, flood, full, disk]
        try:
            async with asyncio.timeout(program.limits.wall_seconds):
                # The program has ended when its process exits or when it reports its
                # end (forked children may hold the pipes open, and the process after).
                await asyncio.wait(
                    {waiting, flood, full, talk}, return_when=asyncio.FIRST_COMPLETED
                )
                if talk.done() and talk.exception() is None and not waiting.done():
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(_DRAIN_SECONDS):
                            await asyncio.shield(waiting)
        except TimeoutError:
            outcome.limit = "wall"
        if exceeded.is_set() and outcome.limit is None:
            outcome.limit = "output"
        await self._stop(process, identity, launch)
        over = await asyncio.to_thread(workspace_charge, workspace) > program.limits.disk_bytes
        if (filled.is_set() or over) and outcome.limit is None:
            outcome.limit = "disk"
        code = await waiting
        if talk.done() and talk.exception() is not None:
            raise talk.exception()  # type: ignore[misc]  # the host's own failure
        # What the program wrote before it ended is in the pipes: read it, briefly.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_DRAIN_SECONDS):
                await asyncio.gather(*tasks[:2], asyncio.shield(talk), return_exceptions=True)
        return _execution(outcome, code, launch, stdout, stderr, program)

    async def _stop(
        self, process: asyncio.subprocess.Process, identity: Identity, launch: Launch
    ) -> None:
        """Kill the program's process group, then every process of its uid."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        if identity.uid is not None and identity.gid is not None:
            await reap_uid(identity.uid, identity.gid)

    async def close(self) -> None:
        """Kill every program still running."""
        self._closed = True
        for process in list(self._running):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)


def _line(message: dict[str, JsonValue]) -> bytes:
    return (json.dumps(message, allow_nan=False) + "\n").encode("utf-8")


async def _pump(
    stream: asyncio.StreamReader, capture: _Capture, limit: int, exceeded: asyncio.Event
) -> None:
    while chunk := await stream.read(65_536):
        capture.add(chunk)
        if capture.total > limit:
            exceeded.set()


async def _converse(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    program: Program,
    binding: Binding,
    outcome: _Outcome,
) -> None:
    """Answer the program's tool calls until it reports its end (or the pipe closes)."""
    allowed = set(program.bindings)
    while True:
        try:
            line = await reader.readline()
        except (asyncio.LimitOverrunError, ValueError):
            outcome.protocol_error = "a protocol message was too long"
            return
        if not line:
            return
        try:
            message = json.loads(line)
        except ValueError:
            outcome.protocol_error = "a protocol message was not JSON"
            return
        if not isinstance(message, dict):
            outcome.protocol_error = "a protocol message was not an object"
            return
        if message.get("done"):
            outcome.done = message
            return
        name = message.get("call")
        arguments = message.get("arguments")
        ident = message.get("id")
        if not isinstance(name, str) or not isinstance(arguments, dict):
            outcome.protocol_error = "a tool call was malformed"
            return
        outcome.calls += 1
        reply: dict[str, JsonValue]
        if name not in allowed:
            reply = {
                "id": ident,
                "ok": False,
                "kind": "unknown_tool",
                "message": f"no tool named {name!r} is bound to this program",
            }
        else:
            try:
                value = await binding(name, arguments)
                reply = {"id": ident, "ok": True, "value": value}
                _line(reply)  # a value the host cannot encode is the host's failure
            except BindingRefused as refused:
                reply = {"id": ident, "ok": False, "kind": refused.kind, "message": str(refused)}
        writer.write(_line(reply))
        with contextlib.suppress(ConnectionError):
            await writer.drain()


__all__: Sequence[str] = [
    "DEFAULT_UID_BASE",
    "DEFAULT_UID_SLOTS",
    "Identity",
    "Launch",
    "ProcessSandbox",
    "SandboxUnavailable",
    "interpreter_candidates",
    "reachable_by_others",
    "reap_uid",
    "running_as_root",
]
