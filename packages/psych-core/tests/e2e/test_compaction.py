"""Compaction end to end: the model's view shrinks, the log does not, the call is metered."""

from decimal import Decimal

import psych_runtime
from psych_runtime import AgentSpec
from psych_runtime import CodeTool
from psych_runtime import ModelRef
from psych_runtime import TerminalState
from psych_runtime.records import CompactionReason
from psych_runtime.records import Usage
from psych_runtime.runtime.compaction import SUMMARY_INSTRUCTION
from psych_runtime.runtime.conversation import SUMMARY_PREFIX
from psych_runtime.runtime.reads import read_log as read_records
from psych_runtime.spec import CompactionPolicy
from psych_runtime.testing import FakeModel

from .conftest import ACME
from .conftest import price
from .conftest import run_once

PRICES = psych_runtime.models.StaticPriceTable(
    {"agent-model": price("1", "2", "0", "0"), "summary-model": price("0.1", "0.4", "0", "0")}
)


async def lookup(order_id: str) -> dict[str, str]:
    """Look up an order."""
    return {"order_id": order_id, "state": "packed"}


def _spec(**policy: object) -> AgentSpec:
    return AgentSpec(
        name="long",
        model=ModelRef(model="agent-model"),
        tools=(CodeTool(name="lookup"),),
        compaction=CompactionPolicy(trigger_tokens=1000, keep_recent_turns=1, **policy),  # type: ignore[arg-type]
    )


async def _run(spec: AgentSpec, model: FakeModel) -> list[psych_runtime.records.Record]:
    log, _ = await _run_with_report(spec, model)
    return log


async def _run_with_report(
    spec: AgentSpec, model: FakeModel
) -> tuple[list[psych_runtime.records.Record], psych_runtime.RunReport]:
    store, run_id, log = await run_once(
        spec, model, lookup, message="track A1, B2 and C3", prices=PRICES
    )
    assert await read_records(store, run_id) == log
    return log, await psych_runtime.report(store, run_id, scope=ACME)


async def test_a_long_conversation_is_summarised_for_the_model_only() -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[("lookup", {"order_id": "A1"})], usage=Usage(input=400, output=10))
        .turn(tool_calls=[("lookup", {"order_id": "B2"})], usage=Usage(input=1200, output=10))
        # The previous call's prompt (1200) passed the trigger: this is the summary call.
        .turn(text="A1 and B2 are packed.", usage=Usage(input=300, output=20))
        .turn(tool_calls=[("lookup", {"order_id": "C3"})], usage=Usage(input=200, output=10))
        .turn(text="All three are packed.", usage=Usage(input=250, output=15))
    )
    log, report = await _run_with_report(_spec(model="summary-model"), model)
    assert log[-1].state is TerminalState.COMPLETED
    [compaction] = [r for r in log if r.type == "compaction_applied"]
    assert compaction.reason is CompactionReason.THRESHOLD
    assert compaction.summary == "A1 and B2 are packed."
    assert compaction.model == "summary-model"
    # Everything up to the start of the newest turn is replaced, nothing after it.
    turn_starts = [r.seq for r in log if r.type == "turn_started" and r.seq < compaction.seq]
    assert compaction.replaced_from_seq == 1
    assert compaction.replaced_to_seq == turn_starts[-1] - 1
    # The summary call was a separate, priced model call with its own instructions.
    summary_request = model.requests[2]
    assert summary_request.model == "summary-model"
    assert summary_request.messages[0].content.startswith(SUMMARY_INSTRUCTION[:40])
    assert "track A1, B2 and C3" in summary_request.messages[1].content
    assert compaction.cost is not None
    assert compaction.cost.amount == Decimal("0.00003800")  # 300 x 0.1/M + 20 x 0.4/M
    # The model's view shrank: the next request carries the summary, not the old turns.
    after = model.requests[3]
    contents = [m.content for m in after.messages]
    assert any("A1 and B2 are packed." in c for c in contents)
    assert not any(c == "track A1, B2 and C3" for c in contents)
    before = model.requests[1]
    assert len(after.messages) < len(before.messages) + 2
    # The log is whole: every record is still there, and the report counts the call.
    assert sum(1 for r in log if r.type == "tool_call_finished") == 3
    assert report.totals.compaction_calls == 1
    assert report.totals.model_calls == 4
    assert [c.summary for c in report.compactions] == ["A1 and B2 are packed."]
    agent_cost = Decimal(400 + 1200 + 200 + 250) / 10**6 + Decimal(2 * (10 + 10 + 10 + 15)) / 10**6
    assert report.totals.cost is not None
    assert report.totals.cost.amount == agent_cost + compaction.cost.amount
    assert report.totals.usage == Usage(input=2350, output=65)


async def test_a_second_compaction_leaves_the_model_one_summary() -> None:
    big = Usage(input=1200, output=10)
    model = (
        FakeModel()
        .turn(tool_calls=[("lookup", {"order_id": "A1"})], usage=big)
        .turn(tool_calls=[("lookup", {"order_id": "B2"})], usage=big)
        .turn(text="FIRST: A1 is packed.")
        .turn(tool_calls=[("lookup", {"order_id": "C3"})], usage=big)
        .turn(text="SECOND: A1 and B2 are packed.")
        .turn(text="All three are packed.", usage=big)
    )
    log = await _run(_spec(), model)
    assert log[-1].state is TerminalState.COMPLETED
    first, second = [r for r in log if r.type == "compaction_applied"]
    assert second.replaced_from_seq == first.replaced_to_seq + 1
    # The second summary was written from a transcript holding the first...
    assert "FIRST: A1 is packed." in model.requests[4].messages[1].content
    # ...so from then on the model is shown the second summary alone.
    summaries = [
        m.content for m in model.requests[5].messages if m.content.startswith(SUMMARY_PREFIX)
    ]
    assert summaries == [SUMMARY_PREFIX + "SECOND: A1 and B2 are packed."]


async def test_a_refused_overlong_prompt_is_rescued_by_compacting_once() -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[("lookup", {"order_id": "A1"})], usage=Usage(input=100, output=10))
        .turn(tool_calls=[("lookup", {"order_id": "B2"})], usage=Usage(input=100, output=10))
        .raises_overflow()
        .turn(text="Summary: A1 and B2 are packed.")
        .turn(text="Both are packed.")
    )
    log = await _run(
        AgentSpec(
            name="long",
            model=ModelRef(model="agent-model"),
            tools=(CodeTool(name="lookup"),),
            compaction=CompactionPolicy(trigger_tokens=10**9, keep_recent_turns=1),
        ),
        model,
    )
    failed = [r for r in log if r.type == "model_call_failed"]
    assert [(f.failure.kind, f.will_retry) for f in failed] == [("context_overflow", True)]
    [compaction] = [r for r in log if r.type == "compaction_applied"]
    assert compaction.reason is CompactionReason.OVERFLOW
    assert compaction.seq == failed[0].seq + 1
    assert log[-1].state is TerminalState.COMPLETED
    assert log[-1].output == {"text": "Both are packed."}


async def test_without_a_policy_an_overflow_fails_the_run() -> None:
    model = FakeModel().raises_overflow()
    log = await _run(AgentSpec(name="short", model=ModelRef(model="agent-model")), model)
    assert log[-1].state is TerminalState.FAILED
    assert log[-1].failure is not None and log[-1].failure.kind == "context_overflow"
    assert not any(r.type == "compaction_applied" for r in log)
