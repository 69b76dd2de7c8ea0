"""The ``oci`` backend: each program in a throwaway container (podman).

``oci_command`` builds the ``run`` command: no network, a read-only root filesystem, a
pids limit, memory and CPU caps, an unprivileged user, every capability dropped,
``no-new-privileges``, size-capped tmpfs mounts for ``/tmp``, ``/var/tmp``
and ``/dev/shm`` (podman's own unsized ones turned off), System V IPC switched off in
the container's IPC namespace, and the workspace mounted at ``/workspace``; the
rlimits go in as ``--ulimit``. The container runs from an image, or from a root
filesystem directory (``rootfs=``, podman's ``--rootfs``) so no image registry is
needed. The protocol pipes are handed to the container as descriptors 3 and 4 with
podman's ``--preserve-fds``; docker has no such option, so ``open`` accepts podman
only for running programs (``oci_command`` builds either).

On a root host each running program gets a uid of its own (as the other backends
do), so the host can find and measure its processes and reap whatever it leaves.
"""

import asyncio
import contextlib
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Literal
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
from psych_sandbox._host import runner_argv
from psych_sandbox._host import running_as_root
from psych_sandbox._mounts import SCRATCH_PATHS
from psych_sandbox._mounts import Scratch

Engine = Literal["podman", "docker"]
DEFAULT_IMAGE = "docker.io/library/python:3.12-slim"
WORKSPACE = "/workspace"
CONTAINER_USER = "65534:65534"


def oci_command(
    engine: str,
    image: str,
    program: Program,
    workspace: str,
    *,
    name: str,
    python: str = "python3",
    fds: tuple[int, int] = (3, 4),
    user: str = CONTAINER_USER,
    cpus: float = 1.0,
    rootfs: str | None = None,
) -> list[str]:
    """The ``<engine> run`` command that runs ``program``'s runner in a fresh container.

    Args:
        engine: the engine binary (``podman`` or ``docker``, or a path to one).
        image: an image with a Python 3.8+ interpreter.
        program: whose limits the command carries.
        workspace: the host directory mounted read-write at ``/workspace``.
        name: the container's name (the host removes it by name when it stops).
        python: the interpreter inside the image.
        fds: the protocol descriptors (read, write), preserved into the container
            by podman.
        user: ``uid:gid`` inside the container.
        cpus: the share of CPUs it may use.
        rootfs: a root filesystem directory to run instead of ``image`` (podman).
    """
    limits = program.limits
    cpu = max(1, int(limits.cpu_seconds + 0.999))
    is_podman = Path(engine).name.startswith("podman")
    scratch = Scratch.for_disk(limits.disk_bytes, workspace)
    # podman takes no inode cap for a tmpfs: the host counts the inodes used instead.
    tmpfs = f"rw,nosuid,nodev,size={scratch.size_bytes},mode=1777"
    command = [
        engine,
        "run",
        "--rm",
        # A small init as pid 1, so the program is not: the kernel spares a namespace's
        # init every signal it has no handler for, SIGXCPU (the CPU limit) included.
        "--init",
        "--name",
        name,
        "--network",
        "none",
        "--read-only",
        "--pids-limit",
        str(limits.process_count),
        "--memory",
        f"{limits.memory_bytes}b",
        "--memory-swap",
        f"{limits.memory_bytes}b",
        "--cpus",
        f"{cpus:g}",
        "--user",
        user,
        "--cap-drop",
        "ALL",
        "--security-opt",
        "no-new-privileges",
        "--ulimit",
        f"cpu={cpu}:{cpu + 1}",
        "--ulimit",
        f"fsize={limits.file_size_bytes}:{limits.file_size_bytes}",
        "--ulimit",
        "core=0:0",
        # No POSIX message queues; a bounded descriptor table (the engine's default
        # raises it past what a host without CAP_SYS_RESOURCE may grant).
        "--ulimit",
        "msgqueue=0:0",
        "--ulimit",
        "nofile=1024:1024",
        # Set, or the engine asks for the host's own (above what podman keeps for
        # itself, which crun then cannot raise to); per uid, so the program's own.
        "--ulimit",
        f"nproc={limits.process_count}:{limits.process_count}",
        "--ipc",
        "private",
        "--sysctl",
        "kernel.shmall=0",
        "--sysctl",
        "kernel.msgmni=0",
        "--sysctl",
        "kernel.sem=0 0 0 0",
        "--tmpfs",
        f"/tmp:{tmpfs}",
        "--tmpfs",
        f"/var/tmp:{tmpfs}",
        "--shm-size",
        f"{scratch.size_bytes}b",
        "--volume",
        f"{workspace}:{WORKSPACE}:rw",
        "--workdir",
        WORKSPACE,
        "--env",
        f"PATH={SANDBOX_PATH}:/usr/local/bin",
        "--env",
        f"HOME={WORKSPACE}",
        "--env",
        "LANG=C.UTF-8",
    ]
    if is_podman:
        # podman passes descriptors 3 .. 3+N-1; the pipes keep their numbers. Its
        # own tmpfs mounts on /run, /tmp and /var/tmp would have no size.
        command += ["--preserve-fds", str(max(fds) - 2), "--read-only-tmpfs=false"]
    root = ["--rootfs", rootfs] if rootfs is not None else [image]
    command += [*root, *runner_argv(python, fds)]
    return command


async def engine_reachable(engine: str) -> str | None:
    """None when ``engine info`` answers, else why not."""
    try:
        process = await asyncio.create_subprocess_exec(
            engine,
            "info",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(process.communicate(), 20)
    except (OSError, TimeoutError) as error:
        return f"{engine} info failed: {error}"
    if process.returncode != 0:
        detail = err.decode(errors="replace").strip().splitlines()
        return f"{engine} info exited {process.returncode}: {detail[-1] if detail else ''}"
    return None


class OciSandbox(ProcessSandbox):
    """Runs each program in a throwaway podman container (``--network none``, read-only).

    Isolation is ``CONTAINED``: the engine's namespaces, cgroup limits and seccomp
    profile are enforced by the kernel.
    """

    @classmethod
    async def open(
        cls,
        *,
        engine: str | None = None,
        image: str = DEFAULT_IMAGE,
        rootfs: str | None = None,
        python: str = "python3",
        cpus: float = 1.0,
        uid_base: int = DEFAULT_UID_BASE,
        uid_slots: int = DEFAULT_UID_SLOTS,
    ) -> Self:
        """Find a reachable engine and say what is contained.

        Args:
            engine: ``podman`` (default: found on PATH) or a path to it.
            image: an image with Python 3.8+, pulled beforehand.
            rootfs: a root filesystem directory with Python 3.8+ (every file readable
                by any user), run instead of ``image``: no registry involved.
            python: the interpreter inside the image.
            cpus: the share of CPUs a program may use.
            uid_base: on a root host, the first uid programs run as.
            uid_slots: how many programs may run at once (root host only).

        Raises:
            SandboxUnavailable: no engine is installed or reachable, or it is docker
                (which cannot hand the protocol pipes to a container).
        """
        found = engine or shutil.which("podman")
        if found is None:
            hint = " (docker is installed, but cannot pass the protocol pipes)"
            raise SandboxUnavailable(
                "no container engine found: install podman"
                + (hint if shutil.which("docker") else "")
            )
        if Path(found).name.startswith("docker"):
            raise SandboxUnavailable(
                "docker cannot hand the protocol pipes to a container (no --preserve-fds); "
                "use podman"
            )
        if rootfs is not None and not await asyncio.to_thread(os.path.isdir, rootfs):
            raise SandboxUnavailable(f"the root filesystem {rootfs} is not a directory")
        problem = await engine_reachable(found)
        if problem is not None:
            raise SandboxUnavailable(f"the container engine is not reachable: {problem}")
        sandbox = cls(
            engine=found,
            image=image,
            rootfs=rootfs,
            python=python,
            cpus=cpus,
            uid_base=uid_base if running_as_root() else None,
            uid_slots=uid_slots,
        )
        await sandbox._check_start()
        return sandbox

    def __init__(
        self,
        *,
        engine: str,
        image: str,
        python: str,
        cpus: float = 1.0,
        rootfs: str | None = None,
        uid_base: int | None = None,
        uid_slots: int = DEFAULT_UID_SLOTS,
    ) -> None:
        super().__init__(python=python, uid_base=uid_base, uid_slots=uid_slots)
        self._engine = engine
        self._image = image
        self._rootfs = rootfs
        self._cpus = cpus
        own_uid = uid_base is not None
        # With a uid of its own the host finds the program's processes: it measures
        # what they hold and reaps them; the scratch mounts are capped either way.
        extra = {Guarantee.PRIVATE_SCRATCH} if own_uid else set()
        self._capabilities = SandboxCapabilities(
            backend="oci",
            isolation=Isolation.CONTAINED,
            enforced=HOST_ENFORCED
            | {
                Guarantee.PROCESS_LIMIT,
                Guarantee.UNPRIVILEGED_USER,
                Guarantee.NO_NETWORK,
                Guarantee.READ_ONLY_SYSTEM,
                Guarantee.NO_HOST_FILES,
                Guarantee.NO_HOST_PROCESSES,
                *extra,
            },
            reported=frozenset({Guarantee.DISK_QUOTA}),
        )

    async def _check_start(self) -> None:
        """Run one program, so a setup the engine refuses is refused at ``open``."""
        execution = await self._trial("1", wall_seconds=60)
        if execution.status is not ExecutionStatus.OK or execution.value != 1:
            detail = execution.stderr.strip().splitlines()
            raise SandboxUnavailable(
                f"{self._engine} could not run a program: "
                f"{detail[-1] if detail else execution.message or execution.status.value}"
            )

    def _limits_nproc(self) -> bool:
        return False  # --pids-limit does it, inside the container's cgroup

    def _command(
        self, program: Program, workspace: Path, identity: Identity, fds: tuple[int, int]
    ) -> Launch:
        name = f"psych-sandbox-{uuid.uuid4().hex}"
        user = CONTAINER_USER if identity.uid is None else f"{identity.uid}:{identity.gid}"
        argv = oci_command(
            self._engine,
            self._image,
            program,
            str(workspace),
            name=name,
            python=self._python,
            fds=(3, 4),
            cpus=self._cpus,
            user=user,
            rootfs=self._rootfs,
        )
        # The engine's client is not the program: it gets no rlimits and no uid of its
        # own. A SIGKILL the host did not send is the memory cgroup's OOM kill (the
        # engine takes no address-space rlimit; tmpfs and memfd pages count there too).
        return Launch(
            argv=argv,
            env={"PATH": SANDBOX_PATH},
            cwd="/",
            pass_fds=fds,
            host_rlimits=False,
            container=name,
            switch_user=False,
            renumber_fds=True,
            exit_signal_offset=128,
            sigkill_limit="memory",
            scratch_paths=SCRATCH_PATHS,
        )

    async def _stop(
        self, process: asyncio.subprocess.Process, identity: Identity, launch: Launch
    ) -> None:
        """Kill the engine's client, then remove the container by name."""
        await super()._stop(process, identity, launch)
        if launch.container is None:
            return
        with contextlib.suppress(OSError):
            remover = await asyncio.create_subprocess_exec(
                self._engine,
                "rm",
                "--force",
                launch.container,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            await remover.wait()


__all__ = ["DEFAULT_IMAGE", "OciSandbox", "engine_reachable", "oci_command"]
