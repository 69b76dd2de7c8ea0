"""The reference API's sandbox types: SandboxLimits, SandboxResult, SandboxFailure,
SandboxLimit and HostBinding, and how they map onto the port's own."""

import math

import pytest

from psych_runtime.adapters import Binding
from psych_runtime.adapters import Execution
from psych_runtime.adapters import ExecutionStatus
from psych_runtime.adapters import HostBinding
from psych_runtime.adapters import InvalidSandboxValue
from psych_runtime.adapters import Program
from psych_runtime.adapters import ResolvedLimits
from psych_runtime.adapters import SandboxFailure
from psych_runtime.adapters import SandboxLimit
from psych_runtime.adapters import SandboxLimits
from psych_runtime.adapters import SandboxResult
from psych_runtime.core.errors import PsychError

REFERENCE = {
    "cpu_seconds": 2.5,
    "address_space_bytes": 256 * 1024 * 1024,
    "file_size_bytes": 8 * 1024 * 1024,
    "process_count": 16,
    "wall_seconds": 5.0,
}


def test_sandbox_limits_take_the_reference_fields_and_resolve() -> None:
    limits = SandboxLimits(**REFERENCE)  # type: ignore[arg-type]
    resolved = limits.resolved(disk_bytes=64 * 1024 * 1024)
    assert resolved == ResolvedLimits(
        cpu_seconds=2.5,
        wall_seconds=5.0,
        memory_bytes=256 * 1024 * 1024,
        file_size_bytes=8 * 1024 * 1024,
        process_count=16,
        disk_bytes=64 * 1024 * 1024,
    )
    assert resolved.address_space_bytes == resolved.memory_bytes
    assert resolved.reference() == limits
    assert limits.resolved().disk_bytes == ResolvedLimits().disk_bytes


def test_sandbox_limits_are_all_required_and_keyword_only() -> None:
    with pytest.raises(TypeError):
        SandboxLimits(2.5, 1, 1, 1, 1.0)  # type: ignore[misc]
    partial = {k: v for k, v in REFERENCE.items() if k != "wall_seconds"}
    with pytest.raises(TypeError):
        SandboxLimits(**partial)  # type: ignore[arg-type]


@pytest.mark.parametrize("field", sorted(REFERENCE))
@pytest.mark.parametrize("bad", [0, -1, True, "5", None, math.inf, math.nan])
def test_sandbox_limits_refuse_anything_but_a_positive_number(field: str, bad: object) -> None:
    with pytest.raises(InvalidSandboxValue, match=f"SandboxLimits.{field}") as caught:
        SandboxLimits(**{**REFERENCE, field: bad})  # type: ignore[arg-type]
    assert isinstance(caught.value, PsychError)


@pytest.mark.parametrize("field", ["address_space_bytes", "file_size_bytes", "process_count"])
def test_counts_and_sizes_are_whole_numbers(field: str) -> None:
    with pytest.raises(InvalidSandboxValue, match="whole number"):
        SandboxLimits(**{**REFERENCE, field: 1.5})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "field",
    [
        "cpu_seconds",
        "wall_seconds",
        "memory_bytes",
        "file_size_bytes",
        "process_count",
        "disk_bytes",
    ],
)
def test_resolved_limits_refuse_zero(field: str) -> None:
    with pytest.raises(InvalidSandboxValue, match=f"ResolvedLimits.{field}"):
        ResolvedLimits(**{field: 0})  # type: ignore[arg-type]


def test_a_program_accepts_sandbox_limits_and_refuses_other_things() -> None:
    program = Program(source="1", limits=SandboxLimits(**REFERENCE))  # type: ignore[arg-type]
    assert isinstance(program.limits, ResolvedLimits)
    assert program.limits.memory_bytes == REFERENCE["address_space_bytes"]
    with pytest.raises(InvalidSandboxValue, match=r"Program\.limits"):
        Program(source="1", limits={"cpu_seconds": 1})  # type: ignore[arg-type]


def test_sandbox_limit_names_every_limit_an_execution_reports() -> None:
    assert {limit.value for limit in SandboxLimit} == {
        "cpu",
        "memory",
        "file_size",
        "processes",
        "wall",
        "disk",
        "output",
    }
    execution = Execution(status=ExecutionStatus.LIMIT, limit="wall", message="too long")
    assert execution.limit_hit is SandboxLimit.WALL
    assert execution.limit == SandboxLimit.WALL


def test_sandbox_failure_bounds() -> None:
    SandboxFailure(kind="k" * 128, message="m" * 8192, traceback="t" * 65536)
    for bad in (
        {"kind": "", "message": "m"},
        {"kind": "k" * 129, "message": "m"},
        {"kind": "k", "message": "m" * 8193},
        {"kind": "k", "message": "m", "traceback": "t" * 65537},
        {"kind": 3, "message": "m"},
    ):
        with pytest.raises(InvalidSandboxValue):
            SandboxFailure(**bad)  # type: ignore[arg-type]


def test_an_execution_becomes_a_result() -> None:
    ok = Execution(
        status=ExecutionStatus.OK,
        value={"a": 1},
        stdout="ab",
        stdout_bytes=5,
        stdout_full=b"abcde",
        stderr="x",
        stderr_bytes=1,
        duration_seconds=0.25,
        network_denied=True,
    ).result()
    assert ok == SandboxResult(
        stdout="abcde",
        stderr="x",
        value={"a": 1},
        duration_seconds=0.25,
        network_denied=True,
    )
    cut = Execution(status=ExecutionStatus.OK, stdout="ab", stdout_bytes=9).result()
    assert cut.stdout == "ab" and cut.stdout_truncated and not cut.stderr_truncated


@pytest.mark.parametrize(
    ("status", "limit", "kind"),
    [
        (ExecutionStatus.ERROR, None, "program_error"),
        (ExecutionStatus.LIMIT, "memory", "limit_memory"),
        (ExecutionStatus.FAILED, None, "sandbox_failed"),
    ],
)
def test_a_failed_execution_carries_a_failure(
    status: ExecutionStatus, limit: str | None, kind: str
) -> None:
    long_trace = "Traceback:\n" + "x" * 70_000 + "\nValueError: boom"
    execution = Execution(
        status=status, limit=limit, message="m" * 9000, traceback=long_trace, value=3
    )
    result = execution.result()
    assert result.value is None
    assert result.failure is not None and result.failure.kind == kind
    assert len(result.failure.message) == 8192
    assert result.failure.traceback is not None
    assert result.failure.traceback.endswith("ValueError: boom")
    assert len(result.failure.traceback) == 65_536
    assert result.limit_hit == (SandboxLimit(limit) if limit else None)


@pytest.mark.parametrize("bad", [-0.1, math.inf, math.nan, "1", True])
def test_a_result_refuses_a_bad_duration(bad: object) -> None:
    with pytest.raises(InvalidSandboxValue, match="duration_seconds"):
        SandboxResult(duration_seconds=bad)  # type: ignore[arg-type]


def test_host_binding_is_the_binding_type() -> None:
    assert HostBinding is Binding
