"""``failover.py``: which model a turn calls, and what a failed model call leads to."""

import asyncio
from typing import Any

import pytest

import psych_runtime
from psych_runtime.core.records import CompactionApplied
from psych_runtime.core.records import CompactionReason
from psych_runtime.core.records import ModelCallFailed
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.spec import CompactionPolicy
from psych_runtime.core.spec import Limits
from psych_runtime.core.spec import ModelRef
from psych_runtime.model.port import ContextOverflow
from psych_runtime.model.port import ModelError
from psych_runtime.runtime.abort import AbortReason
from psych_runtime.runtime.abort import AbortSignal
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.failover import model_failed
from psych_runtime.runtime.agent.failover import model_for_turn
from psych_runtime.testing import FakeModel
from psych_runtime.testing import LogBuilder
from psych_runtime.testing.fake_model import FakePermanentFailure
from psych_runtime.testing.fake_model import FakeTransientFailure

from .conftest import Attempt
from .conftest import agent
from .conftest import open_attempt
from .conftest import started

CHAIN = agent(model=ModelRef(model="primary", fallbacks=("second", "third")))
ALONE = agent(model="primary")


def _failed(
    log: LogBuilder, model: str, *, will_retry: bool = True, kind: str = "http_503"
) -> None:
    failure = ToolFailure(kind=kind, message="down")
    log.turn().model_started(model=model).model_failed(
        model=model, failure=failure, will_retry=will_retry
    )


# --- model_for_turn ------------------------------------------------------------------


async def _next_model(log: LogBuilder | None = None) -> str:
    """The model the next turn of a Run of ``CHAIN`` with ``log`` calls."""
    attempt = await open_attempt(log, spec=CHAIN)
    return model_for_turn(attempt.ctx)


async def test_a_turn_calls_the_primary_model_when_nothing_failed() -> None:
    assert await _next_model() == "primary"


async def test_after_a_failure_to_be_retried_the_next_model_in_the_chain_is_called() -> None:
    log = started()
    _failed(log, "primary")
    assert await _next_model(log) == "second"
    _failed(log, "second")
    assert await _next_model(log) == "third"
    _failed(log, "third")
    assert await _next_model(log) == "third"  # the last one is retried as it is


async def test_a_success_or_a_final_failure_starts_the_chain_over() -> None:
    log = started()
    _failed(log, "primary")
    log.turn().model_started(model="second").model_finished(model="second")
    assert await _next_model(log) == "primary"
    log = started()
    _failed(log, "primary", will_retry=False)
    assert await _next_model(log) == "primary"


@pytest.mark.parametrize(
    ("model", "kind"),
    [
        # An overflow is retried on the same chain start, after compaction.
        pytest.param("primary", "context_overflow", id="overflow-retried-on-the-primary"),
        # A failed model no longer in the chain falls to the chain's start.
        pytest.param("retired", "http_503", id="model-no-longer-in-the-chain"),
    ],
)
async def test_the_chain_starts_over_after_these_failures(model: str, kind: str) -> None:
    log = started()
    _failed(log, model, kind=kind)
    assert await _next_model(log) == "primary"


# --- model_failed --------------------------------------------------------------------


class Backoff:
    """A retry backoff answering ``seconds``, keeping what it was asked."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = seconds
        self.asked: list[tuple[int, float | None]] = []
        self.called = asyncio.Event()

    def __call__(self, retries_used: int, retry_after: float | None) -> float:
        self.asked.append((retries_used, retry_after))
        self.called.set()
        return self.seconds


async def _calling(spec: psych_runtime.AgentSpec = ALONE, **deps: Any) -> Attempt:
    """Turn 1's call of the Spec's primary model is open."""
    log = started().turn().model_started(model=spec.model.model)
    return await open_attempt(log, spec=spec, **deps)


def _recorded(attempt: Attempt) -> ModelCallFailed:
    (failed,) = attempt.new(ModelCallFailed)
    assert isinstance(failed, ModelCallFailed)
    return failed


async def test_a_transient_failure_is_retried_after_the_backoff_the_provider_asked_for() -> None:
    backoff = Backoff()
    attempt = await _calling(retry_delay=backoff)
    error = FakeTransientFailure(503, retry_after=2.5)
    assert await model_failed(attempt.ctx, 1, "primary", error) is Next.CONTINUE
    failed = _recorded(attempt)
    assert failed.will_retry and failed.failure.transient and failed.failure.kind == "http_503"
    assert backoff.asked == [(0, 2.5)]  # the retries used before this one
    assert [r.type for r in await attempt.durable()] == ["model_call_failed"]
    assert attempt.state.transient_retries_used == 1


async def test_a_transient_failure_past_the_retry_budget_fails_the_run() -> None:
    log = started()
    _failed(log, "primary")
    log.turn().model_started(model="primary")
    attempt = await open_attempt(
        log, spec=agent(model="primary", limits=Limits(transient_retry_budget=1))
    )
    assert await model_failed(attempt.ctx, 2, "primary", FakeTransientFailure(503)) is Next.STOP
    assert not _recorded(attempt).will_retry
    settled = attempt.settlement()
    assert settled.state is TerminalState.FAILED
    assert settled.failure is not None and settled.failure.kind == "http_503"


async def test_a_failure_retrying_cannot_fix_fails_the_run_at_once() -> None:
    backoff = Backoff()
    attempt = await _calling(CHAIN, retry_delay=backoff)
    error = FakePermanentFailure(400, message="bad request \ud800")
    assert await model_failed(attempt.ctx, 1, "primary", error) is Next.STOP
    failed = _recorded(attempt)
    assert not failed.will_retry and failed.failure.message == "bad request \ufffd"
    assert attempt.settlement().failure == failed.failure
    assert backoff.asked == []


async def test_a_model_that_is_gone_is_failed_over_from_without_waiting() -> None:
    backoff = Backoff()
    attempt = await _calling(CHAIN, retry_delay=backoff)
    assert await model_failed(attempt.ctx, 1, "primary", FakePermanentFailure(404)) is (
        Next.CONTINUE
    )
    assert _recorded(attempt).will_retry
    assert backoff.asked == []
    assert model_for_turn(attempt.ctx) == "second"


async def test_a_model_that_is_gone_with_nothing_to_fall_over_to_fails_the_run() -> None:
    attempt = await _calling(ALONE)
    assert await model_failed(attempt.ctx, 1, "primary", FakePermanentFailure(404)) is Next.STOP
    assert attempt.settlement().state is TerminalState.FAILED


async def test_a_transient_failure_with_a_fallback_left_moves_on_without_waiting() -> None:
    backoff = Backoff()
    attempt = await _calling(CHAIN, retry_delay=backoff)
    assert await model_failed(attempt.ctx, 1, "primary", FakeTransientFailure(529)) is (
        Next.CONTINUE
    )
    assert backoff.asked == []


async def test_the_backoff_is_cut_short_by_the_workers_abort() -> None:
    abort = AbortSignal()
    abort.fire(AbortReason.SHUTDOWN)
    backoff = Backoff(3_600)
    attempt = await _calling(retry_delay=backoff, abort=abort)
    async with asyncio.timeout(10):
        assert await model_failed(attempt.ctx, 1, "primary", FakeTransientFailure(503)) is (
            Next.CONTINUE
        )
    assert backoff.asked == [(0, None)]


async def test_the_backoff_is_cut_short_by_a_record_landing_in_the_log() -> None:
    backoff = Backoff(3_600)
    attempt = await _calling(retry_delay=backoff)
    failing = asyncio.create_task(
        model_failed(attempt.ctx, 1, "primary", FakeTransientFailure(503))
    )
    async with asyncio.timeout(10):
        await backoff.called.wait()
        assert not failing.done()
        # An interrupt lands while the Attempt waits: the next turn's checks see it now.
        assert await psych_runtime.interrupt(attempt.store, attempt.journal.run_id)
        assert await failing is Next.CONTINUE


def _long_conversation(turns: int) -> LogBuilder:
    log = started()
    for _ in range(turns):
        log.turn().model_started(model="primary").model_finished(model="primary", text="ok")
    return log.turn().model_started(model="primary")


async def test_an_overflow_is_rescued_by_summarising_the_older_turns() -> None:
    policy = CompactionPolicy(trigger_tokens=1_000, keep_recent_turns=1)
    model = FakeModel().turn(text="  what happened so far  ")
    spec = agent(model="primary", compaction=policy)
    attempt = await open_attempt(_long_conversation(2), spec=spec, model=model)
    overflow = ContextOverflow("too long", status_code=400)
    assert await model_failed(attempt.ctx, 3, "primary", overflow) is Next.CONTINUE
    assert _recorded(attempt).will_retry
    (applied,) = attempt.new(CompactionApplied)
    assert isinstance(applied, CompactionApplied)
    assert applied.reason is CompactionReason.OVERFLOW
    assert applied.summary == "what happened so far"
    assert len(model.requests) == 1


async def test_an_overflow_with_nothing_to_summarise_fails_the_run() -> None:
    for spec in (
        agent(model="primary"),
        agent(model="primary", compaction=CompactionPolicy(trigger_tokens=1_000)),
    ):
        attempt = await open_attempt(_long_conversation(1), spec=spec)
        overflow = ContextOverflow("too long", status_code=400)
        assert await model_failed(attempt.ctx, 2, "primary", overflow) is Next.STOP
        settled = attempt.settlement()
        assert settled.failure is not None and settled.failure.kind == "context_overflow"


async def test_a_failure_without_a_status_is_named_by_its_class() -> None:
    attempt = await _calling()
    assert await model_failed(attempt.ctx, 1, "primary", ModelError("odd")) is Next.STOP
    assert _recorded(attempt).failure.kind == "ModelError"
