"""The Telemetry conformance suite.

Subclass ``TelemetryContract`` in your adapter's tests and override the
``telemetry_harness`` fixture so it yields a ``TelemetryHarness``: your adapter, and a
way to read back the spans (and, optionally, the measurements) it produced, as the
runtime's neutral ``FinishedSpan`` and ``Measurement``. The cases drive real Runs on
the in-memory store with a scripted model, then check what came out against
``PSYCH_SCHEMA`` with the runtime's own checker, so an adapter that drops attributes,
loses parents, span kinds or backdated start times, misreports errors, breaks trace
context across processes, or records metrics under the wrong attributes or units
fails here.
"""

import asyncio
import contextlib
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
import pytest_asyncio

from psych_contract._overrides import must_override
from psych_contract._overrides import overridden_without_xfail
from psych_runtime import AgentSpec
from psych_runtime import CodeTool
from psych_runtime import InMemoryStore
from psych_runtime import Runtime
from psych_runtime import Scope
from psych_runtime import TerminalState
from psych_runtime import ToolRegistry
from psych_runtime import Version
from psych_runtime import Worker
from psych_runtime import dispatch
from psych_runtime import publish
from psych_runtime.adapters.telemetry import PSYCH_SCHEMA
from psych_runtime.adapters.telemetry import FinishedSpan
from psych_runtime.adapters.telemetry import Telemetry
from psych_runtime.adapters.telemetry import TelemetrySpan
from psych_runtime.adapters.telemetry import check_spans
from psych_runtime.models import ModelClient
from psych_runtime.models import ModelPrice
from psych_runtime.models import ModelRequest
from psych_runtime.models import StaticPriceTable
from psych_runtime.records import Record
from psych_runtime.records import RunAdmitted
from psych_runtime.records import ToolCallStarted
from psych_runtime.records import Usage
from psych_runtime.testing import FakeModel
from psych_runtime.testing import crash_and_recover

_SCOPE = Scope(tenant="contract")
_PROVIDER = "openai"
"""What the suite's model client says it reaches, so ``gen_ai.provider.name`` is known."""

AGENT_RUN_SPANS = (
    "psych.run",
    "psych.attempt",
    "psych.turn",
    "psych.turn",
    "chat m",
    "chat m",
    "execute_tool lookup",
)
"""The span names of a Run whose model ``m`` calls ``lookup`` once, then answers."""

_PRICES = StaticPriceTable(
    {
        "m": ModelPrice(
            input=Decimal("1"), output=Decimal("2"), cache_read=Decimal(0), cache_write=Decimal(0)
        )
    }
)


@dataclass(frozen=True)
class Measurement:
    """The measurements of one metric that carried the same attributes, added up.

    Attributes:
        metric: the instrument's name.
        unit: the unit the instrument was created with.
        attributes: the attributes those measurements carried.
        total: the sum of their values.
        count: how many there were.
    """

    metric: str
    unit: str
    attributes: Mapping[str, object]
    total: float
    count: int


@dataclass
class TelemetryHarness:
    """What the suite needs of an adapter under test.

    Attributes:
        telemetry: the adapter, fresh for the case.
        finished: every span it has finished so far, as ``FinishedSpan`` with its
            ``kind`` and ``started_at`` filled in.
        activate: makes a span the caller's active one for the duration of a ``with``
            block, the way a consumer's own instrumentation would; None skips the case
            that needs it.
        measurements: everything recorded so far, one ``Measurement`` per metric and
            set of attributes; None skips the metric cases.
    """

    telemetry: Telemetry
    finished: Callable[[], list[FinishedSpan]]
    activate: Callable[[TelemetrySpan], contextlib.AbstractContextManager[Any]] | None = None
    measurements: Callable[[], list[Measurement]] | None = None


def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id} is packed"


def refund(order_id: str) -> str:
    """Refund an order (always fails here)."""
    raise RuntimeError(f"cannot refund {order_id}")


class _Provided:
    """A scripted model that says which provider it reaches."""

    provider_name = _PROVIDER

    def __init__(self, script: FakeModel) -> None:
        self.script = script

    async def known_models(self) -> frozenset[str]:
        return await self.script.known_models()

    def stream(self, request: ModelRequest) -> Any:
        return self.script.stream(request)


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(lookup)
    registry.register(refund)
    return registry


async def _run(
    telemetry: Telemetry, spec: AgentSpec, model: ModelClient, **runtime: Any
) -> list[Record]:
    store = InMemoryStore()
    version = await publish(store, spec, scope=_SCOPE)
    worker = Worker(
        store,
        Runtime(store, _Provided(model), _registry(), telemetry=telemetry, **runtime),  # type: ignore[arg-type]
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


def _two_turns() -> FakeModel:
    return (
        FakeModel()
        .turn(tool_calls=[("lookup", {"order_id": "A1"})], usage=Usage(input=10, output=2))
        .turn(text="A1 is packed.", usage=Usage(input=20, output=4))
    )


def _by_id(spans: list[FinishedSpan]) -> dict[str, FinishedSpan]:
    return {span.span_id: span for span in spans}


def _parent_name(span: FinishedSpan, spans: list[FinishedSpan]) -> str | None:
    parent = _by_id(spans).get(span.parent_id or "")
    return parent.name if parent is not None else None


def _traceparent(log: list[Record]) -> tuple[str, str]:
    """The trace id and parent span id the Run was admitted with."""
    admitted = log[0]
    assert isinstance(admitted, RunAdmitted)
    _, trace_id, span_id, _ = admitted.trace_context["traceparent"].split("-")
    return trace_id, span_id


def _same_moment(found: datetime | None, expected: datetime) -> bool:
    """Equal to the microsecond (a tracing library may keep nanoseconds)."""
    return found is not None and abs(found - expected) < timedelta(microseconds=1)


def _points(measured: list[Measurement], metric: str) -> list[Measurement]:
    return [point for point in measured if point.metric == metric]


def _attributes_of(point: Measurement) -> dict[str, object]:
    return dict(point.attributes)


class TelemetryContract:
    """Conformance cases every Telemetry adapter must pass."""

    @pytest_asyncio.fixture
    async def telemetry_harness(self) -> AsyncIterator[TelemetryHarness]:
        """Override: yield a ``TelemetryHarness`` around a fresh adapter."""
        yield must_override(
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
        """Run, Attempt, two turns, two model calls and a tool call, in one tree.

        The Run was dispatched with no span active, so it joins the trace admission
        gave it: its span's parent is the stored context's.
        """
        log = await _run(
            telemetry_harness.telemetry,
            AgentSpec(name="clerk", model="m", tools=(CodeTool(name="lookup"),)),
            _two_turns(),
        )
        spans = telemetry_harness.finished()
        assert check_spans(spans) == []
        assert sorted(span.name for span in spans) == sorted(AGENT_RUN_SPANS)
        assert all(span.kind is not None for span in spans), "the harness must report kinds"
        trace_id, parent_id = _traceparent(log)
        assert {span.trace_id for span in spans} == {trace_id}
        [run] = [span for span in spans if span.name == "psych.run"]
        assert run.parent_id == parent_id
        assert run.attributes["psych.run.id"] == log[0].run_id
        assert run.attributes["psych.run.terminal_state"] == "completed"
        [tool] = [span for span in spans if span.name == "execute_tool lookup"]
        assert _parent_name(tool, spans) == "psych.turn"
        assert tool.kind == "internal"
        assert tool.attributes["gen_ai.tool.name"] == "lookup"
        assert tool.attributes["psych.tool.outcome"] == "ok"
        calls = [span for span in spans if span.name == "chat m"]
        assert {call.kind for call in calls} == {"client"}
        assert {call.attributes["gen_ai.provider.name"] for call in calls} == {_PROVIDER}
        assert sorted(str(call.attributes["gen_ai.usage.input_tokens"]) for call in calls) == [
            "10",
            "20",
        ]
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
        assert errors == ["chat m", "execute_tool refund", "psych.run", "psych.turn"]

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

    async def test_kinds_and_backdated_starts_are_kept(
        self, telemetry_harness: TelemetryHarness
    ) -> None:
        """Each span kind the schema uses comes out as given, and so does a start time."""
        telemetry = telemetry_harness.telemetry
        earlier = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
        for kind in ("internal", "client", "producer"):
            telemetry.start_span(f"consumer.{kind}", {}, kind=kind).end()
        telemetry.start_span("consumer.earlier", {}, start_time=earlier).end()
        named = {span.name: span for span in telemetry_harness.finished()}
        for kind in ("internal", "client", "producer"):
            assert named[f"consumer.{kind}"].kind == kind
        assert _same_moment(named["consumer.earlier"].started_at, earlier)
        assert named["consumer.internal"].started_at is not None
        assert named["consumer.internal"].started_at > earlier

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

    async def test_an_abandoned_attempt_is_told_by_the_next_one(
        self, telemetry_harness: TelemetryHarness
    ) -> None:
        """An Attempt stopped dead mid-call: the next one tells it, from the log.

        Its process's spans never end in a real crash, so the reclaiming Attempt opens
        its Attempt and the call it left in doubt again, backdated to the records'
        times and marked ``psych.recovered``: the Attempt ERROR, the call closed
        ``unknown`` as ``orphaned``, ERROR. Both Attempts are in the Run's one trace.
        """
        telemetry = telemetry_harness.telemetry
        spec = AgentSpec(name="clerk", model="m", tools=(CodeTool(name="lookup"),))
        store = InMemoryStore()
        model = _Provided(FakeModel().turn(tool_calls=[("lookup", {"order_id": "A1"})]))
        model.script.turn(text="A1 may be packed.")
        recovery = await crash_and_recover(
            store,
            model,
            _registry(),
            Version.of(spec, datetime.now(UTC)),
            "go",
            scope=_SCOPE,
            crash_before="tool_call_finished",
            runtime_for=lambda on: Runtime(on, model, _registry(), telemetry=telemetry),
        )
        log = recovery.final_log
        assert log[-1].state is TerminalState.COMPLETED  # type: ignore[union-attr]
        spans = telemetry_harness.finished()
        assert check_spans(spans) == []
        trace_id, _ = _traceparent(log)
        assert {span.trace_id for span in spans} == {trace_id}
        recovered = [span for span in spans if span.attributes.get("psych.recovered") is True]
        [attempt] = [span for span in recovered if span.name == "psych.attempt"]
        [first] = [record for record in log if record.type == "attempt_started"][:1]
        assert attempt.attributes["psych.attempt.number"] == 1
        assert attempt.error is True
        assert _same_moment(attempt.started_at, first.at)
        [call] = [span for span in recovered if span.name == "execute_tool lookup"]
        [started] = [record for record in log if isinstance(record, ToolCallStarted)]
        assert call.attributes["gen_ai.tool.call.id"] == started.call_id
        assert call.attributes["psych.tool.outcome"] == "unknown"
        assert call.attributes["error.type"] == "orphaned"
        assert call.error is True
        assert _same_moment(call.started_at, started.at)
        assert _parent_name(call, spans) == "psych.turn"
        [run] = [span for span in recovered if span.name == "psych.run"]
        assert run.error is True
        reclaiming = [
            span
            for span in spans
            if span.name == "psych.attempt" and span.attributes["psych.attempt.number"] == 2
        ]
        assert [
            span.attributes["psych.attempt.reclaimed_expired_lease"] for span in reclaiming
        ] == [True]

    async def test_model_calls_are_measured(self, telemetry_harness: TelemetryHarness) -> None:
        """Tokens per token type and durations per call, with the schema's attributes and units.

        No cost is measured for an unpriced call.
        """
        if telemetry_harness.measurements is None:
            pytest.skip("the harness cannot read measurements back")
        spec = AgentSpec(name="clerk", model="m", tools=(CodeTool(name="lookup"),))
        await _run(telemetry_harness.telemetry, spec, _two_turns())
        measured = telemetry_harness.measurements()
        _check_units_and_attributes(measured)
        call = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": _PROVIDER,
            "gen_ai.request.model": "m",
        }
        tokens = sorted(
            (
                (_attributes_of(point), point.total, point.count)
                for point in _points(measured, "gen_ai.client.token.usage")
            ),
            key=lambda found: str(found[0].get("gen_ai.token.type")),
        )
        assert tokens == [
            ({**call, "gen_ai.token.type": "input"}, 30, 2),
            ({**call, "gen_ai.token.type": "output"}, 6, 2),
        ]
        [duration] = _points(measured, "gen_ai.client.operation.duration")
        assert _attributes_of(duration) == call
        assert duration.count == 2
        assert 0 < duration.total < 10
        assert _points(measured, "psych.cost") == []

    async def test_a_priced_call_is_measured_in_its_currency(
        self, telemetry_harness: TelemetryHarness
    ) -> None:
        """A priced call's cost is one measurement, in its currency, per call."""
        if telemetry_harness.measurements is None:
            pytest.skip("the harness cannot read measurements back")
        spec = AgentSpec(name="clerk", model="m", tools=(CodeTool(name="lookup"),))
        await _run(telemetry_harness.telemetry, spec, _two_turns(), prices=_PRICES)
        measured = telemetry_harness.measurements()
        _check_units_and_attributes(measured)
        [cost] = _points(measured, "psych.cost")
        assert _attributes_of(cost) == {
            "gen_ai.provider.name": _PROVIDER,
            "gen_ai.request.model": "m",
            "psych.cost.currency": "USD",
        }
        assert cost.count == 2
        # 30 input tokens at 1 and 6 output tokens at 2, per million tokens.
        assert cost.total == pytest.approx(42 / 1_000_000)

    async def test_a_failed_call_is_timed_with_its_error_type(
        self, telemetry_harness: TelemetryHarness
    ) -> None:
        """A failed model call's duration carries ``error.type``; a good one's does not."""
        if telemetry_harness.measurements is None:
            pytest.skip("the harness cannot read measurements back")
        model = (
            FakeModel()
            .turn(tool_calls=[("lookup", {"order_id": "A1"})], usage=Usage(input=10, output=2))
            .raises_permanent(400, message="refused")
        )
        spec = AgentSpec(name="clerk", model="m", tools=(CodeTool(name="lookup"),))
        await _run(telemetry_harness.telemetry, spec, model)
        measured = telemetry_harness.measurements()
        _check_units_and_attributes(measured)
        durations = sorted(
            (str(_attributes_of(point).get("error.type")), point.count)
            for point in _points(measured, "gen_ai.client.operation.duration")
        )
        assert durations == [("None", 1), ("http_400", 1)]


def _check_units_and_attributes(measured: list[Measurement]) -> None:
    """Every measurement names a metric of the schema, in its unit, with its attributes."""
    assert measured, "nothing was measured"
    for point in measured:
        rule = PSYCH_SCHEMA.metrics.get(point.metric)
        assert rule is not None, f"{point.metric} is not a metric of the schema"
        assert point.unit == rule.unit, f"{point.metric} is in {point.unit!r}, not {rule.unit!r}"
        keys = set(point.attributes)
        missing = set(rule.attributes) - keys
        extra = keys - set(rule.attributes) - set(rule.optional)
        assert not missing, f"{point.metric} lacks {sorted(missing)}"
        assert not extra, f"{point.metric} carries {sorted(extra)}, not in the schema"


__all__ = ["AGENT_RUN_SPANS", "Measurement", "TelemetryContract", "TelemetryHarness"]
