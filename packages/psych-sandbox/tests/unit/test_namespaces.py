"""The namespaces backend: what it probes, how it calls bwrap, and its refusals."""

import os
from pathlib import Path

import pytest

from psych_runtime.adapters import ExecutionStatus
from psych_runtime.adapters import Guarantee
from psych_runtime.adapters import Program
from psych_runtime.adapters import ResolvedLimits
from psych_runtime.spec import Isolation
from psych_runtime.spec import NetworkAccess
from psych_sandbox import NamespaceSandbox
from psych_sandbox import SandboxUnavailable
from psych_sandbox.namespaces import find_bwrap

LIMITS = ResolvedLimits(cpu_seconds=2, wall_seconds=5, process_count=32)


async def nothing(name: str, arguments: dict[str, object]) -> object:
    return None


@pytest.fixture
def sandbox(namespaces: NamespaceSandbox) -> NamespaceSandbox:
    return namespaces


async def test_probe_establishes_containment(sandbox: NamespaceSandbox) -> None:
    capabilities = sandbox.capabilities
    assert capabilities.isolation is Isolation.CONTAINED, sandbox.probe_report
    for guarantee in (
        Guarantee.NO_NETWORK,
        Guarantee.NO_HOST_FILES,
        Guarantee.NO_HOST_PROCESSES,
        Guarantee.READ_ONLY_SYSTEM,
        Guarantee.UNPRIVILEGED_USER,
    ):
        assert guarantee in capabilities.enforced
    assert capabilities.reported == frozenset({Guarantee.DISK_QUOTA})
    assert capabilities.provides(Isolation.CONTAINED, NetworkAccess.DENIED) is None
    assert sandbox.probe_report["interfaces"] == ["lo"]


async def test_bwrap_arguments(sandbox: NamespaceSandbox) -> None:
    args = sandbox.bwrap_arguments(Program(source="1", limits=LIMITS), Path("/tmp/ws"))
    for flag in (
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-uts",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ):
        assert flag in args
    assert args[args.index("--bind") + 1 : args.index("--bind") + 3] == ["/tmp/ws", "/workspace"]
    assert args[args.index("/usr") - 1 : args.index("/usr") + 2] == ["--ro-bind", "/usr", "/usr"]
    assert "/etc" not in args  # only a few files of it
    assert args[-3:] == ["--remount-ro", "/", "--"]
    # On a root host the child makes the IPC namespace itself (System V IPC switched off).
    assert ("--unshare-ipc" in args) == (os.geteuid() != 0)
    disk = str(LIMITS.disk_bytes)
    for scratch in ("/tmp", "/dev/shm"):
        at = args.index(scratch, args.index("--dev"))
        assert args[at - 3 : at] == ["--size", disk, "--tmpfs"], scratch
    assert args[args.index("/dev/shm") + 1 : args.index("/dev/shm") + 3] == ["--remount-ro", "/dev"]


async def test_the_program_sees_little(sandbox: NamespaceSandbox) -> None:
    source = (
        "import os\n{'root': sorted(os.listdir('/')), 'cwd': os.getcwd(), "
        "'pids': sorted(p for p in os.listdir('/proc') if p.isdigit()), "
        "'hostname': os.uname().nodename}"
    )
    execution = await sandbox.execute(Program(source=source, limits=LIMITS), nothing)
    assert execution.status is ExecutionStatus.OK, execution
    value = execution.value
    assert isinstance(value, dict)
    assert value["cwd"] == "/workspace"
    assert value["hostname"] == "sandbox"
    assert "root" not in value["root"] and "home" not in value["root"]
    assert len(value["pids"]) <= 3


async def test_nested_user_namespaces_are_refused(sandbox: NamespaceSandbox) -> None:
    """--disable-userns: the program cannot make a user namespace of its own."""
    source = (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "[libc.unshare(0x10000000), ctypes.get_errno()]"  # CLONE_NEWUSER
    )
    execution = await sandbox.execute(Program(source=source, limits=LIMITS), nothing)
    assert execution.status is ExecutionStatus.OK, execution
    assert isinstance(execution.value, list) and execution.value[0] == -1


async def test_missing_bwrap_is_refused_clearly() -> None:
    with pytest.raises(SandboxUnavailable, match="bwrap was not found"):
        await NamespaceSandbox.open(bwrap="/nonexistent/bwrap")


def test_bwrap_is_found() -> None:
    found = find_bwrap()
    assert found is None or os.access(found, os.X_OK)


async def test_disabled_user_namespaces_are_refused_clearly(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(SandboxUnavailable, match="user namespaces may be disabled"):
        await NamespaceSandbox.open(bwrap=str(fake))
