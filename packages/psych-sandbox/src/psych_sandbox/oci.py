"""The ``oci`` backend: each program in a throwaway container (podman).

``oci_command`` builds the ``run`` command: no network, a read-only root filesystem, a
pids limit, memory and CPU caps, an unprivileged user, every capability dropped,
``no-new-privileges``, a size-capped tmpfs ``/tmp`` and the workspace mounted at
``/workspace``; the rlimits go in as ``--ulimit``. The protocol pipes are handed to the
container with podman's ``--preserve-fds``; docker has no such option, so ``open``
accepts podman only for running programs (``oci_command`` builds either).

No engine runs on the machines this package is tested on: the command construction is
unit-tested, running a program through an engine is not.
"""

import asyncio
import contextlib
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Literal, Self

from psych_runtime.adapters import Guarantee, Program, SandboxCapabilities
from psych_runtime.spec import Isolation
from psych_sandbox._host import (
    RUNNER_SOURCE,
    SANDBOX_PATH,
    Identity,
    Launch,
    ProcessSandbox,
    SandboxUnavailable,
)

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
    """
    limits = program.limits
    cpu = max(1, int(limits.cpu_seconds + 0.999))
    is_podman = Path(engine).name.startswith("podman")
    command = [
        engine,
        "run",
        "--rm",
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
        "--tmpfs",
        f"/tmp:rw,nosuid,nodev,size={max(1024 * 1024, limits.file_size_bytes)}",
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
        # podman passes descriptors 3 .. 3+N-1; the pipes keep their numbers.
        command += ["--preserve-fds", str(max(fds) - 2)]
    command += [image, python, "-I", "-S", "-c", RUNNER_SOURCE, str(fds[0]), str(fds[1])]
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
        python: str = "python3",
        cpus: float = 1.0,
    ) -> Self:
        """Find a reachable engine and say what is contained.

        Args:
            engine: ``podman`` (default: found on PATH) or a path to it.
            image: an image with Python 3.8+, pulled beforehand.
            python: the interpreter inside the image.
            cpus: the share of CPUs a program may use.

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
        problem = await engine_reachable(found)
        if problem is not None:
            raise SandboxUnavailable(f"the container engine is not reachable: {problem}")
        return cls(engine=found, image=image, python=python, cpus=cpus)

    def __init__(self, *, engine: str, image: str, python: str, cpus: float = 1.0) -> None:
        super().__init__(python=python, uid_base=None, uid_slots=1)
        self._engine = engine
        self._image = image
        self._cpus = cpus
        self._capabilities = SandboxCapabilities(
            backend="oci",
            isolation=Isolation.CONTAINED,
            enforced=frozenset(
                {
                    Guarantee.SEPARATE_PROCESS,
                    Guarantee.CLEAN_ENVIRONMENT,
                    Guarantee.PRIVATE_WORKSPACE,
                    Guarantee.CPU_LIMIT,
                    Guarantee.MEMORY_LIMIT,
                    Guarantee.FILE_SIZE_LIMIT,
                    Guarantee.PROCESS_LIMIT,
                    Guarantee.WALL_CLOCK_KILL,
                    Guarantee.UNPRIVILEGED_USER,
                    Guarantee.NO_NETWORK,
                    Guarantee.READ_ONLY_SYSTEM,
                    Guarantee.NO_HOST_FILES,
                    Guarantee.NO_HOST_PROCESSES,
                }
            ),
            reported=frozenset({Guarantee.DISK_QUOTA}),
        )

    def _limits_nproc(self) -> bool:
        return False  # --pids-limit does it, inside the container's cgroup

    def _command(
        self, program: Program, workspace: Path, identity: Identity, fds: tuple[int, int]
    ) -> Launch:
        name = f"psych-sandbox-{uuid.uuid4().hex}"
        argv = oci_command(
            self._engine,
            self._image,
            program,
            str(workspace),
            name=name,
            python=self._python,
            fds=fds,
            cpus=self._cpus,
        )
        # The engine's client is not the program: it gets no rlimits of its own.
        return Launch(
            argv=argv,
            env={"PATH": SANDBOX_PATH},
            cwd="/",
            pass_fds=fds,
            host_rlimits=False,
            container=name,
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
