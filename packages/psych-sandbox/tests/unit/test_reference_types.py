"""The reference API's sandbox types against real backends: a program run under
``SandboxLimits`` reports through ``SandboxResult``."""

from psych_runtime.adapters import Program
from psych_runtime.adapters import SandboxLimit
from psych_runtime.adapters import SandboxLimits
from psych_runtime.spec import NetworkAccess
from psych_sandbox import NamespaceSandbox
from psych_sandbox import SubprocessSandbox

LIMITS = SandboxLimits(
    cpu_seconds=2,
    address_space_bytes=256 * 1024 * 1024,
    file_size_bytes=8 * 1024 * 1024,
    process_count=32,
    wall_seconds=2,
)


async def nothing(name: str, arguments: dict[str, object]) -> object:
    return None


async def test_a_wall_clock_kill_is_the_wall_limit() -> None:
    sandbox = await SubprocessSandbox.open()
    try:
        program = Program(
            source="import time\nprint('started', flush=True)\ntime.sleep(60)", limits=LIMITS
        )
        result = (await sandbox.execute(program, nothing)).result()
    finally:
        await sandbox.close()
    assert result.limit_hit is SandboxLimit.WALL
    assert result.failure is not None and result.failure.kind == "limit_wall"
    assert result.stdout == "started\n" and not result.stdout_truncated
    assert result.duration_seconds >= 2


async def test_a_raised_exception_is_a_failure_with_its_traceback() -> None:
    sandbox = await SubprocessSandbox.open()
    try:
        program = Program(source="raise KeyError('nope')", limits=LIMITS)
        result = (await sandbox.execute(program, nothing)).result()
    finally:
        await sandbox.close()
    assert result.limit_hit is None
    assert result.failure is not None and result.failure.kind == "program_error"
    assert result.failure.traceback is not None and "KeyError: 'nope'" in result.failure.traceback


async def test_network_denied_only_where_the_backend_enforces_it(
    namespaces: NamespaceSandbox,
) -> None:
    denied = Program(source="1", limits=LIMITS, network=NetworkAccess.DENIED)
    allowed = Program(source="1", limits=LIMITS, network=NetworkAccess.ALLOWED)
    assert (await namespaces.execute(denied, nothing)).result().network_denied is True
    assert (await namespaces.execute(allowed, nothing)).result().network_denied is False
    plain = await SubprocessSandbox.open()
    try:
        # The subprocess backend only reports the denial; it cannot enforce it.
        assert (await plain.execute(denied, nothing)).result().network_denied is False
    finally:
        await plain.close()


async def test_output_past_the_preview_is_marked_truncated() -> None:
    sandbox = await SubprocessSandbox.open()
    try:
        program = Program(source="print('x' * 5000)", limits=LIMITS, preview_bytes=256)
        result = (await sandbox.execute(program, nothing)).result()
        kept = Program(
            source="print('x' * 5000)", limits=LIMITS, preview_bytes=256, keep_full_output=True
        )
        whole = (await sandbox.execute(kept, nothing)).result()
    finally:
        await sandbox.close()
    assert result.stdout == "x" * 256 and result.stdout_truncated
    assert whole.stdout == "x" * 5000 + "\n" and not whole.stdout_truncated
