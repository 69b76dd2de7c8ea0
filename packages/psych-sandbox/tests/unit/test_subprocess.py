"""Subprocess-backend behaviour beyond the contract: limits, host failures, interpreters."""

import asyncio
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from psych_runtime.adapters import BindingRefused
from psych_runtime.adapters import ExecutionStatus
from psych_runtime.adapters import Guarantee
from psych_runtime.adapters import Program
from psych_runtime.spec import Isolation
from psych_runtime.spec import NetworkAccess
from psych_sandbox import SubprocessSandbox
from psych_sandbox._host import UidPool
from psych_sandbox._host import reachable_by_others
from psych_sandbox.process import sandbox_environment

from ..conftest import LIMITS


async def echo(name: str, arguments: dict[str, object]) -> object:
    if name == "refuse":
        raise BindingRefused("denied", "no")
    if name == "explode":
        raise RuntimeError("the host broke")
    return arguments


@pytest.fixture
async def sandbox() -> AsyncIterator[SubprocessSandbox]:
    sandbox = await SubprocessSandbox.open()
    yield sandbox
    await sandbox.close()


async def test_capabilities_are_honest(sandbox: SubprocessSandbox) -> None:
    capabilities = sandbox.capabilities
    assert capabilities.isolation is Isolation.ISOLATED
    assert capabilities.reported == frozenset({Guarantee.NO_NETWORK, Guarantee.DISK_QUOTA})
    assert Guarantee.NO_HOST_FILES not in capabilities.enforced
    assert Guarantee.NO_NETWORK not in capabilities.enforced
    if os.geteuid() == 0:
        assert Guarantee.UNPRIVILEGED_USER in capabilities.enforced
    assert capabilities.provides(Isolation.CONTAINED, NetworkAccess.DENIED) is not None
    assert capabilities.provides(Isolation.ISOLATED, NetworkAccess.DENIED) is None


async def test_environment_is_only_path_lang_home(sandbox: SubprocessSandbox) -> None:
    execution = await sandbox.execute(
        Program(source="import os\ndict(os.environ)", limits=LIMITS), echo
    )
    assert execution.status is ExecutionStatus.OK, execution
    assert isinstance(execution.value, dict)
    assert set(execution.value) - {"LC_CTYPE"} == {"PATH", "LANG", "HOME"}
    assert execution.value["PATH"] == "/usr/bin:/bin"


async def test_runs_as_its_own_uid_when_root(sandbox: SubprocessSandbox) -> None:
    if os.geteuid() != 0:
        pytest.skip("the host is not root")
    execution = await sandbox.execute(
        Program(source="import os\n[os.getuid(), os.getgid(), os.getgroups()]", limits=LIMITS),
        echo,
    )
    uid, gid, groups = execution.value  # type: ignore[misc]
    assert uid != 0 and gid != 0 and groups == []


async def test_output_past_the_cap_stops_the_program(sandbox: SubprocessSandbox) -> None:
    source = "while True:\n    print('x' * 1000)"
    program = Program(source=source, limits=LIMITS, max_output_bytes=100_000, preview_bytes=300)
    execution = await sandbox.execute(program, echo)
    assert execution.status is ExecutionStatus.LIMIT
    assert execution.limit == "output"
    assert len(execution.stdout) == 300
    assert execution.stdout_bytes > 100_000


async def test_a_host_binding_failure_raises_out_of_execute(sandbox: SubprocessSandbox) -> None:
    program = Program(source="tools.explode()", limits=LIMITS, bindings=("explode",))
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="the host broke"):
        await sandbox.execute(program, echo)
    assert time.monotonic() - started < 3


async def test_non_json_tool_arguments_fail_in_the_program(sandbox: SubprocessSandbox) -> None:
    program = Program(source="tools.echo(x=object())", limits=LIMITS, bindings=("echo",))
    execution = await sandbox.execute(program, echo)
    assert execution.status is ExecutionStatus.ERROR
    assert execution.traceback is not None and "must be JSON" in execution.traceback


async def test_forked_children_cannot_call_tools(sandbox: SubprocessSandbox) -> None:
    source = (
        "import os\npid = os.fork()\nif pid == 0:\n"
        "    try:\n        tools.echo(x=1)\n    except RuntimeError:\n        os._exit(7)\n"
        "    os._exit(0)\n_, status = os.waitpid(pid, 0)\nos.waitstatus_to_exitcode(status)"
    )
    program = Program(source=source, limits=LIMITS, bindings=("echo",))
    execution = await sandbox.execute(program, echo)
    assert execution.value == 7, execution
    assert execution.binding_calls == 0


async def test_system_exit(sandbox: SubprocessSandbox) -> None:
    ok = await sandbox.execute(Program(source="import sys\nsys.exit(0)", limits=LIMITS), echo)
    assert ok.status is ExecutionStatus.OK
    bad = await sandbox.execute(Program(source="import sys\nsys.exit(3)", limits=LIMITS), echo)
    assert bad.status is ExecutionStatus.ERROR and "status 3" in bad.message


async def test_hard_exit_without_a_report(sandbox: SubprocessSandbox) -> None:
    execution = await sandbox.execute(Program(source="import os\nos._exit(5)", limits=LIMITS), echo)
    assert execution.status is ExecutionStatus.ERROR
    assert execution.exit_code == 5


async def test_programs_run_concurrently(sandbox: SubprocessSandbox) -> None:
    program = Program(source="import time\ntime.sleep(0.5)\n1", limits=LIMITS)
    started = time.monotonic()
    results = await asyncio.gather(*(sandbox.execute(program, echo) for _ in range(4)))
    assert [r.value for r in results] == [1, 1, 1, 1]
    assert time.monotonic() - started < 2


async def test_closed_sandbox_fails_programs(sandbox: SubprocessSandbox) -> None:
    await sandbox.close()
    execution = await sandbox.execute(Program(source="1", limits=LIMITS), echo)
    assert execution.status is ExecutionStatus.FAILED


def test_sandbox_environment() -> None:
    assert sandbox_environment("/w") == {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/w"}


def test_reachable_by_others() -> None:
    assert reachable_by_others("/usr/bin/env")
    assert not reachable_by_others("/nonexistent/python")
    if os.geteuid() == 0 and not os.stat("/root").st_mode & 0o001:
        assert not reachable_by_others("/root")


async def test_unusable_interpreter_is_refused() -> None:
    from psych_sandbox import SandboxUnavailable

    with pytest.raises(SandboxUnavailable, match="python="):
        await SubprocessSandbox.open(python="/nonexistent/python3")


async def test_uid_claims_are_exclusive_across_pools(tmp_path: Path) -> None:
    first, second = (
        UidPool(3_000_000_000, 2, str(tmp_path)),
        UidPool(3_000_000_000, 2, str(tmp_path)),
    )
    a = await first.acquire()
    b = await second.acquire()
    assert a != b
    waiting = asyncio.create_task(first.acquire())
    await asyncio.sleep(0.1)
    assert not waiting.done()  # both uids are claimed
    second.release(b)
    assert await asyncio.wait_for(waiting, 2) == b
    first.release(a)
    first.release(b)
