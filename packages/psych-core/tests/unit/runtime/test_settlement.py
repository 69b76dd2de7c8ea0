"""Settling a Run happens in one place, and every way of ending closes what is open.

``settlement.settle`` is the only code that stages ``run_settled``: the structural test
below reads every module of the runtime and fails when another one builds the record,
so a new way of ending a Run has to be an ``Ending`` there.
"""

import ast
from pathlib import Path

import pytest

from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolOutcome
from psych_runtime.runtime import settlement
from psych_runtime.runtime.abort import AbortReason
from psych_runtime.runtime.external import ExternalBatch
from psych_runtime.runtime.settlement import Ending
from psych_runtime.runtime.settlement import settle
from psych_runtime.testing import LogBuilder

RUNTIME = Path(settlement.__file__).resolve().parent


def _builds_run_settled(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            callee = node.func
            named = isinstance(callee, ast.Name) and callee.id == "RunSettled"
            staged = any(isinstance(arg, ast.Name) and arg.id == "RunSettled" for arg in node.args)
            if named or staged:
                lines.append(node.lineno)
    return lines


def test_only_the_settlement_module_builds_a_run_settled_record() -> None:
    found = {
        str(path.relative_to(RUNTIME)): lines
        for path in sorted(RUNTIME.rglob("*.py"))
        if (lines := _builds_run_settled(ast.parse(path.read_text())))
    }
    assert set(found) == {"settlement.py"}, found


def _open_call_state() -> ExternalBatch:
    log = (
        LogBuilder()
        .first_model_call()
        .model_finished(tool_calls=("c1",))
        .tool_started("c1", tool="refund")
        .build()
    )
    from psych_runtime.core.reducer import reduce

    state = reduce(log)
    return ExternalBatch(state, state.head_seq + 1, log[0].scope, at=log[-1].at)


@pytest.mark.parametrize(
    ("ending", "outcome", "kind", "terminal"),
    [
        (
            settlement.cut_short(AbortReason.INTERRUPT),
            ToolOutcome.ABORTED,
            "interrupted",
            "aborted",
        ),
        (settlement.cut_short(AbortReason.DEADLINE), ToolOutcome.ABORTED, "deadline", "aborted"),
        (settlement.past_deadline_when_claimed(), ToolOutcome.UNKNOWN, "orphaned", "aborted"),
        (
            settlement.forced(5, AbortReason.DEADLINE),
            ToolOutcome.UNKNOWN,
            "orphaned",
            "force_settled",
        ),
        (settlement.abandoned("late", "never run"), ToolOutcome.ERROR, "not_executed", "abandoned"),
        (
            settlement.not_finished("child_suspended", "m"),
            ToolOutcome.ERROR,
            "not_executed",
            "failed",
        ),
    ],
)
def test_an_ending_closes_every_open_call_before_it_settles(
    ending: Ending, outcome: ToolOutcome, kind: str, terminal: str
) -> None:
    batch = _open_call_state()
    settle(batch, ending)
    closed, settled = batch.records
    assert closed.type == "tool_call_finished" and closed.outcome is outcome
    assert closed.failure is not None and closed.failure.kind == kind
    assert settled.type == "run_settled" and settled.state is TerminalState(terminal)
    assert batch.state.settled and not batch.state.open_tool_calls
