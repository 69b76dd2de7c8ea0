"""The Telemetry conformance suite.

Subclass ``TelemetryContract`` in your adapter's tests and override the
``telemetry_harness`` fixture so it yields a ``TelemetryHarness``: your adapter, and a
way to read back the spans (and, optionally, the measurements) it produced, as the
runtime's neutral ``FinishedSpan``. The cases drive real Runs on the in-memory store
with a scripted model, then check what came out against ``PSYCH_SCHEMA`` with the
runtime's own checker, so an adapter that drops attributes, loses parents, misreports
errors or breaks trace context across processes fails here.
"""

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio

from psych_contract._overrides import overridden_without_xfail
from psych_runtime import (
    AgentSpec,
    CodeTool,
    InMemoryStore,
    Runtime,
    Scope,
    TerminalState,
    ToolRegistry,
    Worker,
    dispatch,
    publish,
)
from psych_runtime.adapters import (
    PSYCH_SCHEMA,
    FinishedSpan,
    Telemetry,
    TelemetrySpan,
    check_spans,
)
from psych_runtime.models import ModelClient
from psych_runtime.records import Record, Usage
from psych_runtime.testing import FakeModel

_SCOPE = Scope(tenant="contract")

_AGENT_TURNS = [
    "psych.run",
    "psych.attempt",
    "psych.turn",
    "psych.turn",
    "psych.model_call",
    "psych.model_call",
    "psych.tool_call",
]
"""The spans of an agent Run that calls one tool, then answers."""


@dataclass
class TelemetryHarness:
    """What the suite needs of an adapter under test.

    Attributes:
        telemetry: the adapter, fresh for the case.
        finished: every span it has finished so far, as ``FinishedSpan``.
        activate: makes a span the caller's active one for the duration of a ``with``
            block, the way a consumer's own instrumentation would; None skips the case
            that needs it.
        measurements: the sum of every measurement recorded so far, by metric name;
            None skips the metric cases.
    """

    telemetry: Telemetry
    finished: Callable[[], list[FinishedSpan]]
    activate: Callable[[TelemetrySpan], contextlib.AbstractContextManager[Any]] | None = None
    measurements: Callable[[], Mapping[str, float]] | None = None


def _must_override(message: str) -> TelemetryHarness:
    """Stand-in body of the fixture a subclass has to provide; never returns."""
    pytest.fail(message)


def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id} is packed"


def refund(order_id: str) -> str:
    """Refund an order (always fails here)."""
    raise RuntimeError(f"cannot refund {order_id}")


async def _run(telemetry: Telemetry, spec: AgentSpec, model: ModelClient) -> list[Record]:
    store = InMemoryStore()
    registry = ToolRegistry()
    registry.register(lookup)
    registry.register(refund)
    version = await publish(store, spec, scope=_SCOPE)
    worker = Worker(
        store,
        Runtime(store, model, registry, telemetry=telemetry),
        poll_interval=0.02,
        lease_seconds=5.0,
        heartbeat_seconds=1.0,
    )
    task = asyncio.create_task(worker.run())
    try:
        run = await dispatch(store, version, "go", scope=_SCOPE, trace_context={})
        async with asyncio.timeout(10):
            while True:
                log = await store.read(run.run_id)
                if log and log[-1].type == "run_settled":
                    return log
                await asyncio.sleep(0.01)
    finally:
        worker.request_stop()
        await asyncio.gather(task, return_exceptions=True)
        await store.close()


def _by_id(spans: list[FinishedSpan]) -> dict[str, FinishedSpan]:
    return {span.span_id: span for span in spans}


def _parent_name(span: FinishedSpan, spans: list[FinishedSpan]) -> str | None:
    parent = _by_id(spans).get(span.parent_id or "")
    return parent.name if parent is not None else None


class TelemetryContract:
    """Conformance cases every Telemetry adapter must pass."""

    @pytest_asyncio.fixture
    async def telemetry_harness(self) -> AsyncIterator[TelemetryHarness]:
        """Override: yield a ``TelemetryHarness`` around a fresh adapter."""
        yield _must_override(
            "override the telemetry_harness fixture in your TelemetryContract subclass"
        )

    async def test_overridden_cases_are_marked_xfail(self) -> None:
        """A subclass may override a case only to mark it ``xfail(reason=...)``."""
        offenders = overridden_without_xfail(TelemetryContract, type(self))
        assert offenders == [], f"overridden without xfail(reason=...): {offenders}"

    async def test_the_adapter_satisfies_the_protocol(
        self, telemetry_harness: TelemetryHarness
    ) -> None:
        """It has every method of the ``Telemetry`` protocol and says it is enabled."""
        telemetry = telemetry_harness.telemetry
        assert isinstance(telemetry, Telemetry)
        assert telemetry.enabled is True

    async def test_a_run_with_a_tool_gives_conforming_spans(
        self, telemetry_harness: TelemetryHarness
    ) -> None:
        """Run, Attempt, two turns, two model calls and a tool call, in one tree."""
        model = (
            FakeModel()
            .turn(tool_calls=[("lookup", {"order_id": "A1"})], usage=Usage(input=10, output=2))
            .turn(text="A1 is packed.", usage=Usage(input=20, output=4))
        )
        spec = AgentSpec(name="clerk", model="m", tools=(CodeTool(name="lookup"),))
        log = await _run(telemetry_harness.telemetry, spec, model)
        spans = telemetry_harness.finished()
        assert check_spans(spans) == []
        names = sorted(span.name for span in spans)
        assert names == sorted(_AGENT_TURNS)
        assert len({span.trace_id for span in spans}) == 1
        [run] = [span for span in spans if span.name == "psych.run"]
        assert run.parent_id is None
        assert run.attributes["psych.run.id"] == log[0].run_id
        assert run.attributes["psych.run.terminal_state"] == "completed"
        [tool] = [span for span in spans if span.name == "psych.tool_call"]
        assert _parent_name(tool, spans) == "psych.turn"
        assert tool.attributes["gen_ai.tool.name"] == "lookup"
        assert tool.attributes["psych.tool.outcome"] == "ok"
        assert not any(span.error for span in spans)

    async def test_failures_are_error_statuses(self, telemetry_harness: TelemetryHarness) -> None:
        """A failing tool, a failed model call and a failed Run are ERROR spans."""
        model = (
            FakeModel()
            .turn(tool_calls=[("refund", {"order_id": "A1"})])
            .raises_permanent(400, message="refused")
        )
        spec = AgentSpec(name="clerk", model="m", tools=(CodeTool(name="refund"),))
        log = await _run(telemetry_harness.telemetry, spec, model)
        assert log[-1].state is TerminalState.FAILED  # type: ignore[union-attr]
        spans = telemetry_harness.finished()
        assert check_spans(spans) == []
        errors = sorted(span.name for span in spans if span.error)
        assert errors == ["psych.model_call", "psych.run", "psych.tool_call", "psych.turn"]

    async def test_a_carrier_continues_the_trace(self, telemetry_harness: TelemetryHarness) -> None:
        """A span opened from another span's carrier is its child, in the same trace."""
        telemetry = telemetry_harness.telemetry
        outer = telemetry.start_span("consumer.work", {})
        carrier = outer.carrier()
        assert "traceparent" in carrier
        inner = telemetry.start_span(
            "psych.run",
            {"psych.run.id": "r", "psych.scope.tenant": "t", "psych.version.hash": "h"},
            carrier=carrier,
        )
        inner.end()
        outer.end()
        spans = _by_id(telemetry_harness.finished())
        [consumer] = [span for span in spans.values() if span.name == "consumer.work"]
        [run] = [span for span in spans.values() if span.name == "psych.run"]
        assert run.parent_id == consumer.span_id
        assert run.trace_id == consumer.trace_id

    async def test_an_explicit_parent_wins_and_no_parent_is_a_root(
        self, telemetry_harness: TelemetryHarness
    ) -> None:
        """``parent=`` nests a span; neither parent nor carrier starts a new trace."""
        telemetry = telemetry_harness.telemetry
        first = telemetry.start_span("consumer.first", {})
        child = telemetry.start_span("consumer.child", {"k": "v"}, parent=first)
        child.set_attributes({"late": 1})
        child.end(error="it broke")
        first.end()
        other = telemetry.start_span("consumer.other", {})
        other.end()
        spans = telemetry_harness.finished()
        named = {span.name: span for span in spans}
        assert named["consumer.child"].parent_id == named["consumer.first"].span_id
        assert named["consumer.child"].attributes["late"] == 1
        assert named["consumer.child"].error is True
        assert named["consumer.first"].error is False
        assert named["consumer.other"].parent_id is None
        assert named["consumer.other"].trace_id != named["consumer.first"].trace_id

    async def test_current_carrier_follows_the_active_span(
        self, telemetry_harness: TelemetryHarness
    ) -> None:
        """Outside any span the carrier is empty; inside one it names that span."""
        telemetry = telemetry_harness.telemetry
        assert telemetry.current_carrier() == {}
        if telemetry_harness.activate is None:
            pytest.skip("the harness cannot make a span active")
        span = telemetry.start_span("consumer.request", {})
        with telemetry_harness.activate(span):
            inside = telemetry.current_carrier()
        span.end()
        assert inside == span.carrier()

    async def test_model_calls_are_measured(self, telemetry_harness: TelemetryHarness) -> None:
        """Token usage and duration are recorded per call; cost only when priced."""
        if telemetry_harness.measurements is None:
            pytest.skip("the harness cannot read measurements back")
        model = (
            FakeModel()
            .turn(tool_calls=[("lookup", {"order_id": "A1"})], usage=Usage(input=10, output=2))
            .turn(text="A1 is packed.", usage=Usage(input=20, output=4))
        )
        spec = AgentSpec(name="clerk", model="m", tools=(CodeTool(name="lookup"),))
        await _run(telemetry_harness.telemetry, spec, model)
        measured = telemetry_harness.measurements()
        assert measured["gen_ai.client.token.usage"] == 36
        assert measured["gen_ai.client.operation.duration"] > 0
        assert "psych.cost" not in measured  # nothing was priced
        assert set(measured) <= set(PSYCH_SCHEMA.metrics)


__all__ = ["TelemetryContract", "TelemetryHarness"]
