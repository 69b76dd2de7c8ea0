"""Which finished calls feed a tool's failure streak, in the reducer and the report alike."""

import pytest

from psych_runtime.core.projections.report_rows import failure_streak_trips
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.reducer import REFUSED_CALL_KINDS
from psych_runtime.core.reducer import counts_toward_streak
from psych_runtime.core.reducer import reduce
from psych_runtime.testing import LogBuilder


def _one_call_each(kinds: list[str], tool: str = "refund") -> LogBuilder:
    log = LogBuilder().admitted().attempt().turn()
    for number, kind in enumerate(kinds, start=1):
        log.tool_started(f"c{number}", tool=tool)
        log.tool_finished(f"c{number}", ToolOutcome.ERROR, failure=ToolFailure(kind=kind))
    return log


@pytest.mark.parametrize("kind", sorted(REFUSED_CALL_KINDS))
def test_a_call_the_runtime_refused_to_run_leaves_the_streak_alone(kind: str) -> None:
    log = _one_call_each(["RuntimeError", kind, kind, kind, kind, kind, kind])
    assert reduce(log.build()).failure_streaks == {"refund": 1}
    assert not counts_toward_streak(ToolOutcome.ERROR, ToolFailure(kind=kind))


@pytest.mark.parametrize(
    "kind",
    [
        "RuntimeError",
        "SystemExit",
        "malformed_arguments",
        "invalid_arguments",
        "withheld_tool",
        "unstorable_result",
        "invalid_result",
        "timeout",
    ],
)
def test_the_tools_own_failures_and_misuse_of_it_keep_counting(kind: str) -> None:
    log = _one_call_each([kind] * 4)
    assert reduce(log.build()).failure_streaks == {"refund": 4}


def test_the_report_counts_trips_by_the_same_rule() -> None:
    records = _one_call_each(
        ["RuntimeError", "not_executed", "unknown_tool", "RuntimeError", "repeated_call"]
    ).build()
    assert failure_streak_trips(records, threshold=3) == ()
    kinds = ["RuntimeError", "not_executed", "RuntimeError", "malformed_arguments"]
    (trip,) = failure_streak_trips(_one_call_each(kinds).build(), threshold=3)
    assert trip.call_id == "c4" and trip.streak == 3


def test_calls_left_in_doubt_count_and_cancelled_ones_do_not() -> None:
    assert counts_toward_streak(ToolOutcome.UNKNOWN, ToolFailure(kind="orphaned"))
    assert not counts_toward_streak(ToolOutcome.ABORTED, ToolFailure(kind="cancelled"))
    assert not counts_toward_streak(ToolOutcome.OK, None)
    assert counts_toward_streak(ToolOutcome.ERROR, None)
