"""``compact.py``: when the oldest turns are summarised, and what the summary records."""

from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import Usage
from psych_runtime.core.records import CompactionApplied
from psych_runtime.core.records import CompactionReason
from psych_runtime.core.records import TerminalState
from psych_runtime.core.spec import CompactionPolicy
from psych_runtime.model.pricing import StaticPriceTable
from psych_runtime.runtime.agent.compact import compact
from psych_runtime.runtime.agent.compact import compaction_due
from psych_runtime.runtime.agent.compact import next_cut
from psych_runtime.runtime.agent.context import Next
from psych_runtime.testing import FakeModel
from psych_runtime.testing import LogBuilder

from .conftest import EURO_PRICE
from .conftest import ONE_DOLLAR
from .conftest import agent
from .conftest import open_attempt
from .conftest import started

POLICY = CompactionPolicy(trigger_tokens=1_000, keep_recent_turns=2)
SPEC = agent(compaction=POLICY)


def _turns(count: int, prompt_tokens: int = 10, cost: Cost | None = None) -> LogBuilder:
    """``count`` answered turns, the last prompt ``prompt_tokens`` long."""
    log = started()
    for _ in range(count):
        usage = Usage(input=prompt_tokens, output=5)
        log.turn().model_started(model="m")
        log.model_finished(model="m", usage=usage, text="an answer", cost=cost)
    return log


async def test_no_policy_never_compacts() -> None:
    attempt = await open_attempt(_turns(5, prompt_tokens=50_000))
    assert not compaction_due(attempt.ctx) and next_cut(attempt.ctx) is None
    assert await compact(attempt.ctx, CompactionReason.THRESHOLD) is None
    assert attempt.new() == []


async def test_a_prompt_below_the_trigger_is_left_alone() -> None:
    attempt = await open_attempt(_turns(5, prompt_tokens=999), spec=SPEC)
    assert not compaction_due(attempt.ctx)


async def test_a_prompt_at_the_trigger_compacts_when_there_are_turns_to_spare() -> None:
    attempt = await open_attempt(_turns(3, prompt_tokens=1_000), spec=SPEC)
    assert compaction_due(attempt.ctx)
    attempt = await open_attempt(_turns(2, prompt_tokens=50_000), spec=SPEC)
    assert not compaction_due(attempt.ctx)  # both turns are the ones kept verbatim


async def test_the_summary_stands_in_for_the_turns_before_the_ones_kept() -> None:
    model = FakeModel().turn(text="  the user wants a refund for A1  ", usage={"input": 7})
    log = _turns(3, prompt_tokens=1_000)
    attempt = await open_attempt(log, spec=SPEC, model=model)
    cut = next_cut(attempt.ctx)
    assert cut is not None
    assert await compact(attempt.ctx, CompactionReason.THRESHOLD) is None
    (applied,) = attempt.new(CompactionApplied)
    assert isinstance(applied, CompactionApplied)
    turn_two = next(r.seq for r in log.records if r.type == "turn_started" and r.turn == 2)
    assert (applied.replaced_from_seq, applied.replaced_to_seq) == (1, turn_two - 1)
    assert applied.summary == "the user wants a refund for A1"
    assert applied.model == "m" and applied.usage_reported and applied.usage.input == 7
    assert applied.reason is CompactionReason.THRESHOLD
    assert attempt.state.compaction_boundary_seq == turn_two - 1
    assert model.last_request.model == "m"
    # Nothing more to cut until more turns pass.
    assert next_cut(attempt.ctx) is None


async def test_the_policys_own_model_writes_the_summary() -> None:
    model = FakeModel().turn(text="summary")
    spec = agent(compaction=POLICY.model_copy(update={"model": "small"}))
    attempt = await open_attempt(_turns(3), spec=spec, model=model)
    await compact(attempt.ctx, CompactionReason.THRESHOLD)
    assert model.last_request.model == "small"
    (applied,) = attempt.new(CompactionApplied)
    assert applied.model == "small"


async def test_a_summarising_call_that_fails_fails_the_run() -> None:
    attempt = await open_attempt(_turns(3), spec=SPEC, model=FakeModel().raises_permanent(400))
    assert await compact(attempt.ctx, CompactionReason.THRESHOLD) is Next.STOP
    settled = attempt.settlement()
    assert settled.state is TerminalState.FAILED
    assert settled.failure is not None and settled.failure.kind == "compaction_failed"
    assert settled.failure.message.startswith("the summarising call failed: ")
    assert attempt.new(CompactionApplied) == []


async def test_a_summary_with_no_text_fails_the_run() -> None:
    attempt = await open_attempt(_turns(3), spec=SPEC, model=FakeModel().turn(text="  \n "))
    assert await compact(attempt.ctx, CompactionReason.THRESHOLD) is Next.STOP
    failure = attempt.settlement().failure
    assert failure is not None
    assert failure.message == "the summarising call returned no text"


async def test_a_summary_priced_in_another_currency_is_kept_unpriced_and_fails_the_run() -> None:
    model = FakeModel().turn(text="summary", usage={"input": 100})
    attempt = await open_attempt(
        _turns(3, cost=ONE_DOLLAR),
        spec=SPEC,
        model=model,
        prices=StaticPriceTable({"m": EURO_PRICE}),
    )
    assert await compact(attempt.ctx, CompactionReason.THRESHOLD) is Next.STOP
    (applied,) = attempt.new(CompactionApplied)
    assert applied.cost is None
    failure = attempt.settlement().failure
    assert failure is not None and failure.kind == "inconsistent_cost"
