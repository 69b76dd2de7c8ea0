"""The OCI backend's command construction, and its refusal when no engine is reachable."""

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from psych_runtime.adapters import Guarantee
from psych_runtime.adapters import Program
from psych_runtime.spec import Isolation
from psych_sandbox import OciSandbox
from psych_sandbox import SandboxUnavailable
from psych_sandbox import oci_command

from ..conftest import LIMITS as SMALL_LIMITS

# A fractional CPU limit (``--ulimit cpu`` rounds it up) and a pids limit of its own.
LIMITS = replace(SMALL_LIMITS, cpu_seconds=2.5, process_count=64)


def _option(command: list[str], name: str) -> list[str]:
    return [command[i + 1] for i, part in enumerate(command) if part == name]


def _command(engine: str, image: str, workspace: str, **options: Any) -> list[str]:
    """The command ``oci_command`` builds for the program ``1`` under ``LIMITS``."""
    return oci_command(engine, image, Program(source="1", limits=LIMITS), workspace, **options)


def test_podman_command_contains_the_program() -> None:
    command = _command("podman", "python:3.12-slim", "/tmp/ws", name="psych-sandbox-x", fds=(7, 9))
    assert command[:2] == ["podman", "run"]
    assert "--rm" in command and "--read-only" in command
    assert _option(command, "--network") == ["none"]
    assert _option(command, "--pids-limit") == ["64"]
    assert _option(command, "--memory") == [f"{256 * 1024 * 1024}b"]
    assert _option(command, "--memory-swap") == [f"{256 * 1024 * 1024}b"]
    assert _option(command, "--cpus") == ["1"]
    assert _option(command, "--user") == ["65534:65534"]
    assert _option(command, "--cap-drop") == ["ALL"]
    assert _option(command, "--security-opt") == ["no-new-privileges"]
    assert _option(command, "--ulimit") == [
        "cpu=3:4",
        f"fsize={8 * 1024 * 1024}:{8 * 1024 * 1024}",
        "core=0:0",
        "msgqueue=0:0",
        "nofile=1024:1024",
        "nproc=64:64",
    ]
    assert "--init" in command and "--read-only-tmpfs=false" in command
    assert _option(command, "--ipc") == ["private"]
    assert _option(command, "--sysctl") == [
        "kernel.shmall=0",
        "kernel.msgmni=0",
        "kernel.sem=0 0 0 0",
    ]
    assert _option(command, "--volume") == ["/tmp/ws:/workspace:rw"]
    assert _option(command, "--workdir") == ["/workspace"]
    assert _option(command, "--name") == ["psych-sandbox-x"]
    disk = LIMITS.disk_bytes
    assert _option(command, "--tmpfs") == [
        f"/tmp:rw,nosuid,nodev,size={disk},mode=1777",
        f"/var/tmp:rw,nosuid,nodev,size={disk},mode=1777",
    ]
    assert _option(command, "--shm-size") == [f"{disk}b"]
    # podman hands descriptors 3..3+N-1 to the container: up to 9 here.
    assert _option(command, "--preserve-fds") == ["7"]
    image_at = command.index("python:3.12-slim")
    assert command[image_at + 1 : image_at + 4] == ["python3", "-I", "-S"]
    assert command[-2:] == ["7", "9"]
    env = _option(command, "--env")
    assert "HOME=/workspace" in env and not any(e.startswith("SECRET") for e in env)


def test_rootfs_replaces_the_image() -> None:
    command = _command("podman", "unused-image", "/w", name="n", rootfs="/srv/rootfs")
    assert "unused-image" not in command
    at = command.index("--rootfs")
    assert command[at + 1 : at + 5] == ["/srv/rootfs", "python3", "-I", "-S"]


async def test_open_refuses_a_missing_rootfs(tmp_path: Path) -> None:
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed here")
    with pytest.raises(SandboxUnavailable, match="not a directory"):
        await OciSandbox.open(rootfs=str(tmp_path / "missing"))


def test_docker_command_has_no_preserve_fds_and_keeps_the_limits() -> None:
    command = _command("/usr/bin/docker", "img", "/w", name="n", user="1000:1000", cpus=0.5)
    assert "--preserve-fds" not in command
    assert _option(command, "--cpus") == ["0.5"]
    assert _option(command, "--user") == ["1000:1000"]
    assert _option(command, "--network") == ["none"]


async def test_open_refuses_without_a_reachable_engine() -> None:
    if shutil.which("podman") is not None:
        pytest.skip("podman is installed here")
    with pytest.raises(SandboxUnavailable, match="podman"):
        await OciSandbox.open()


async def test_open_refuses_docker_and_unreachable_engines() -> None:
    with pytest.raises(SandboxUnavailable, match="docker cannot"):
        await OciSandbox.open(engine="/usr/bin/docker")
    with pytest.raises(SandboxUnavailable, match="not reachable"):
        await OciSandbox.open(engine="/nonexistent/podman")


def test_capabilities_claim_containment() -> None:
    sandbox = OciSandbox(engine="podman", image="img", python="python3")
    capabilities = sandbox.capabilities
    assert capabilities.isolation is Isolation.CONTAINED
    assert Guarantee.NO_NETWORK in capabilities.enforced
    assert capabilities.reported == frozenset({Guarantee.DISK_QUOTA})
