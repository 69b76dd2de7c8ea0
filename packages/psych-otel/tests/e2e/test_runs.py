"""Real Runs traced through the OpenTelemetry SDK's in-memory exporters.

Each test runs a Run end to end on the in-memory store with a scripted model and
checks the exported spans: the tree, the attributes the schema requires, the error
statuses, and that ``check_spans`` finds nothing wrong.
"""

import logging
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace import Span
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import SpanKind
from opentelemetry.trace import StatusCode

import psych_runtime
from psych_contract.subagents import lead_spawning_the_finder
from psych_otel import check_spans
from psych_runtime import AgentSpec
from psych_runtime import CodeTool
from psych_runtime import InMemoryStore
from psych_runtime import ModelRef
from psych_runtime import Runtime
from psych_runtime import TerminalState
from psych_runtime import dispatch
from psych_runtime import publish
from psych_runtime.records import Usage
from psych_runtime.spec import AgentStep
from psych_runtime.spec import CompactionPolicy
from psych_runtime.spec import MapStep
from psych_runtime.spec import SpawnEnvelope
from psych_runtime.spec import SubagentRef
from psych_runtime.spec import ValuePath
from psych_runtime.spec import WorkflowSpec
from psych_runtime.testing import FakeModel
from psych_runtime.testing import ModelsByName
from psych_runtime.testing import crash_and_recover
from psych_runtime.testing import settled_log

from ..conftest import ACME
from ..conftest import Otel
from ..conftest import registry_of
from ..conftest import running_worker

PRICES = psych_runtime.models.StaticPriceTable(
    {
        "priced": psych_runtime.models.ModelPrice(
            input=Decimal("1"), output=Decimal("2"), cache_read=Decimal(0), cache_write=Decimal(0)
        )
    }
)


def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id} is packed"


def broken(order_id: str) -> str:
    """A tool that always fails."""
    raise RuntimeError(f"no such order {order_id}")


def _one(spans: Sequence[ReadableSpan], name: str) -> ReadableSpan:
    found = [span for span in spans if span.name == name]
    assert len(found) == 1, [span.name for span in spans]
    return found[0]


def _children(spans: Sequence[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    assert parent.context is not None
    return [
        span
        for span in spans
        if span.parent is not None and span.parent.span_id == parent.context.span_id
    ]


def _names(spans: Sequence[ReadableSpan]) -> list[str]:
    return sorted(span.name for span in spans)


def _has_attributes(span: ReadableSpan, expected: dict[str, Any]) -> None:
    """``span`` carries each of ``expected`` with that value and type, among any others."""
    assert span.attributes is not None
    found = {key: span.attributes.get(key) for key in expected}
    assert found == expected
    assert {k: type(v) for k, v in found.items()} == {k: type(v) for k, v in expected.items()}


async def _run(
    otel: Otel,
    spec: AgentSpec | WorkflowSpec,
    model: psych_runtime.models.ModelClient,
    *tools: Any,
    **options: Any,
) -> list[psych_runtime.records.Record]:
    store = InMemoryStore()
    version = await publish(store, spec, scope=ACME)
    async with running_worker(store, model, registry_of(*tools), otel.telemetry, **options):
        run = await dispatch(store, version, "go", scope=ACME)
        return await settled_log(store, run.run_id)


async def _traced(
    otel: Otel,
    spec: AgentSpec | WorkflowSpec,
    model: psych_runtime.models.ModelClient,
    *tools: Any,
    ends: TerminalState = TerminalState.COMPLETED,
    **options: Any,
) -> tuple[list[psych_runtime.records.Record], list[ReadableSpan]]:
    """``_run``, checking that the Run ``ends`` so and that its spans conform; the log and spans."""
    log = await _run(otel, spec, model, *tools, **options)
    assert log[-1].state is ends  # type: ignore[union-attr]
    spans = otel.spans()
    assert check_spans(spans) == []
    return log, spans


async def test_an_agent_with_tools_gives_a_conforming_span_tree(otel: Otel) -> None:
    model = (
        FakeModel()
        .turn(
            tool_calls=[("lookup", {"order_id": "A1"}), ("lookup", {"order_id": "B2"})],
            usage=Usage(input=100, output=10, cache_read=20),
        )
        .turn(text="Both are packed.", usage=Usage(input=150, output=5))
    )
    spec = AgentSpec(name="clerk", model=ModelRef(model="priced"), tools=(CodeTool(name="lookup"),))
    log, spans = await _traced(otel, spec, model, lookup, prices=PRICES)
    run = _one(spans, "psych.run")
    # Dispatched with no span active: the Run joins the trace minted at admission.
    minted = log[0].trace_context["traceparent"].split("-")  # type: ignore[attr-defined]
    assert run.parent is not None and run.parent.is_remote
    assert format(run.parent.span_id, "016x") == minted[2]
    _has_attributes(
        run,
        {
            "psych.run.id": log[0].run_id,
            "psych.scope.tenant": "acme",
            "psych.run.terminal_state": "completed",
        },
    )
    assert run.status.status_code is StatusCode.UNSET
    [attempt] = _children(spans, run)
    assert attempt.name == "psych.attempt"
    _has_attributes(
        attempt, {"psych.attempt.number": 1, "psych.attempt.reclaimed_expired_lease": False}
    )
    turns = _children(spans, attempt)
    assert [t.attributes["psych.turn.number"] for t in turns if t.attributes] == [1, 2]
    first, second = turns
    assert _names(_children(spans, first)) == [
        "chat priced",
        "execute_tool lookup",
        "execute_tool lookup",
    ]
    assert _names(_children(spans, second)) == ["chat priced"]
    calls = [s for s in _children(spans, first) if s.name == "execute_tool lookup"]
    started = [r.call_id for r in log if r.type == "tool_call_started"]
    assert [c.attributes["gen_ai.tool.call.id"] for c in calls if c.attributes] == started
    assert {c.attributes["gen_ai.tool.name"] for c in calls if c.attributes} == {"lookup"}
    assert all(c.attributes and c.attributes["psych.tool.outcome"] == "ok" for c in calls)
    model_call = _one(_children(spans, first), "chat priced")
    assert model_call.kind is SpanKind.CLIENT
    assert all(c.kind is SpanKind.INTERNAL for c in calls)
    _has_attributes(
        model_call,
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "priced",
            "gen_ai.usage.input_tokens": 120,
            "gen_ai.usage.output_tokens": 10,
            "gen_ai.usage.cache_read.input_tokens": 20,
            "gen_ai.usage.cache_creation.input_tokens": 0,
            "gen_ai.provider.name": "_OTHER",  # FakeModel says nothing
            "gen_ai.response.finish_reasons": ("tool_calls",),
            "psych.cost.currency": "USD",
        },
    )
    assert model_call.attributes is not None
    assert model_call.attributes["psych.cost.amount"] > 0
    # Every span of the Run is in one trace.
    assert {s.context.trace_id for s in spans if s.context} == {run.context.trace_id}  # type: ignore[union-attr]


async def test_the_metrics_follow_the_genai_conventions(otel: Otel) -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[("lookup", {"order_id": "A1"})], usage=Usage(input=100, output=10))
        .turn(text="Packed.", usage=Usage(input=150, output=5))
    )
    spec = AgentSpec(name="clerk", model=ModelRef(model="priced"), tools=(CodeTool(name="lookup"),))
    await _run(otel, spec, model, lookup, prices=PRICES)
    tokens = otel.points("gen_ai.client.token.usage")
    by_type = {attrs["gen_ai.token.type"]: total for total, attrs in tokens}
    assert by_type == {"input": 250, "output": 15}
    assert all(attrs["gen_ai.request.model"] == "priced" for _, attrs in tokens)
    assert all(attrs["gen_ai.operation.name"] == "chat" for _, attrs in tokens)
    [(_, duration_attrs)] = otel.points("gen_ai.client.operation.duration")
    assert duration_attrs["gen_ai.provider.name"] == "_OTHER"
    [(cost, cost_attrs)] = otel.points("psych.cost")
    # 250 input tokens at 1 and 15 output tokens at 2, per million tokens.
    assert cost == pytest.approx(float(Decimal(250 + 30) / Decimal(1_000_000)))
    assert cost_attrs["psych.cost.currency"] == "USD"


async def test_an_unpriced_call_records_no_cost(otel: Otel) -> None:
    model = FakeModel().turn(text="Hello.", usage=Usage(input=10, output=2))
    await _run(otel, AgentSpec(name="clerk", model="unpriced"), model)
    assert otel.points("psych.cost") == []
    model_call = otel.named("chat unpriced")[0]
    assert model_call.attributes is not None
    assert "psych.cost.amount" not in model_call.attributes


async def test_a_failing_tool_and_a_failed_model_call_are_errors(otel: Otel) -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[("broken", {"order_id": "A1"})])
        .raises_permanent(400, message="bad request")
    )
    spec = AgentSpec(name="clerk", model="m", tools=(CodeTool(name="broken"),))
    _, spans = await _traced(otel, spec, model, broken, ends=TerminalState.FAILED)
    tool = _one(spans, "execute_tool broken")
    assert tool.status.status_code is StatusCode.ERROR
    assert tool.attributes is not None and tool.attributes["psych.tool.outcome"] == "error"
    failed_call = [
        s for s in otel.named("chat m") if s.attributes and s.attributes.get("error.type")
    ]
    assert len(failed_call) == 1 and failed_call[0].status.status_code is StatusCode.ERROR
    last_turn = max(otel.named("psych.turn"), key=lambda s: s.attributes["psych.turn.number"])  # type: ignore[index]
    assert last_turn.status.status_code is StatusCode.ERROR
    run = _one(spans, "psych.run")
    assert run.status.status_code is StatusCode.ERROR
    assert run.attributes is not None and run.attributes["psych.run.terminal_state"] == "failed"


async def test_a_workflow_has_a_span_per_step_and_its_agent_run_below_it(otel: Otel) -> None:
    agent = AgentSpec(name="describer", model="m", tools=(CodeTool(name="lookup"),))
    spec = WorkflowSpec(
        name="flow",
        steps=(
            AgentStep(
                name="describe", spec=agent, input={"message": ValuePath(path="input.message")}
            ),
            MapStep(name="shape", output={"text": ValuePath(path="steps.describe.output.text")}),
        ),
    )
    model = FakeModel().turn(tool_calls=[("lookup", {"order_id": "A1"})]).turn(text="A1 is packed.")
    log, spans = await _traced(otel, spec, model, lookup)
    runs = otel.named("psych.run")
    assert len(runs) == 2
    [root] = [r for r in runs if r.attributes and "psych.parent_run.id" not in r.attributes]
    [attempt] = _children(spans, root)
    steps = _children(spans, attempt)
    assert sorted((s.name, s.attributes["psych.step.name"]) for s in steps if s.attributes) == [
        ("psych.step", "describe"),
        ("psych.step", "shape"),
    ]
    describe = next(
        s for s in steps if s.attributes and s.attributes["psych.step.name"] == "describe"
    )
    _has_attributes(describe, {"psych.step.kind": "agent", "psych.step.outcome": "succeeded"})
    [child_run] = _children(spans, describe)
    assert child_run.name == "psych.run"
    _has_attributes(child_run, {"psych.parent_run.id": log[0].run_id})
    [child_attempt] = _children(spans, child_run)
    assert [t.name for t in _children(spans, child_attempt)] == ["psych.turn", "psych.turn"]
    assert len(otel.named("execute_tool lookup")) == 1


async def test_a_delegation_sits_under_its_tool_call_with_the_child_run_below(otel: Otel) -> None:
    clerk = AgentSpec(name="clerk", model="clerk-m", tools=("lookup",))
    lead = AgentSpec(
        name="lead",
        model="lead-m",
        tools=("lookup",),
        subagents=(
            SubagentRef(
                name="clerk", description="Finds where an order is and says so.", spec=clerk
            ),
        ),
    )
    model = ModelsByName(
        {
            "lead-m": FakeModel()
            .turn(tool_calls=[("delegate", {"agent": "clerk", "task": "Where is A1?"})])
            .turn(text="The clerk says A1 is packed."),
            "clerk-m": FakeModel()
            .turn(tool_calls=[("lookup", {"order_id": "A1"})])
            .turn(text="A1 is packed."),
        }
    )
    log, spans = await _traced(otel, lead, model, lookup)
    delegation = _one(spans, "invoke_agent clerk")
    assert delegation.kind is SpanKind.INTERNAL
    [spawned] = [r for r in log if r.type == "subagent_spawned"]
    _has_attributes(
        delegation,
        {
            "gen_ai.agent.name": "clerk",
            "gen_ai.operation.name": "invoke_agent",
            "psych.delegation.depth": 1,
            "psych.subagent.terminal_state": "completed",
            "psych.subagent.child_run_id": spawned.child_run_id,
        },
    )
    call = next(
        s
        for s in spans
        if s.context and delegation.parent and s.context.span_id == delegation.parent.span_id
    )
    assert call.name == "execute_tool delegate"
    assert call.attributes is not None and call.attributes["gen_ai.tool.name"] == "delegate"
    [child_run] = _children(spans, delegation)
    assert child_run.name == "psych.run"
    _has_attributes(child_run, {"psych.run.id": spawned.child_run_id})
    child_tools = [
        s
        for s in otel.named("execute_tool lookup")
        if s.attributes and s.attributes["psych.run.id"] == spawned.child_run_id
    ]
    assert [s.attributes["gen_ai.tool.name"] for s in child_tools if s.attributes] == ["lookup"]


def _compacting(summary: str) -> tuple[AgentSpec, FakeModel]:
    spec = AgentSpec(
        name="long",
        model=ModelRef(model="agent-model"),
        tools=(CodeTool(name="lookup"),),
        compaction=CompactionPolicy(
            trigger_tokens=1000, keep_recent_turns=1, model="summary-model"
        ),
    )
    model = (
        FakeModel()
        .turn(tool_calls=[("lookup", {"order_id": "A1"})], usage=Usage(input=400, output=10))
        .turn(tool_calls=[("lookup", {"order_id": "B2"})], usage=Usage(input=1200, output=10))
        .turn(text=summary, usage=Usage(input=300, output=20))
        .turn(text="All packed.", usage=Usage(input=250, output=15))
    )
    return spec, model


async def test_a_compaction_has_its_own_span(otel: Otel) -> None:
    spec, model = _compacting("A1 and B2 are packed.")
    log, spans = await _traced(otel, spec, model, lookup)
    compaction = _one(spans, "chat summary-model")
    assert compaction.kind is SpanKind.CLIENT
    [applied] = [r for r in log if r.type == "compaction_applied"]
    _has_attributes(
        compaction,
        {
            "psych.compaction.reason": "threshold",
            "gen_ai.request.model": "summary-model",
            "gen_ai.usage.output_tokens": 20,
            "psych.compaction.replaced_to_seq": applied.replaced_to_seq,
        },
    )
    assert compaction.status.status_code is StatusCode.UNSET
    attempt = _one(spans, "psych.attempt")
    assert compaction.parent is not None and attempt.context is not None
    assert compaction.parent.span_id == attempt.context.span_id


async def test_a_compaction_that_says_nothing_is_an_error(otel: Otel) -> None:
    spec, model = _compacting("   ")
    _, spans = await _traced(otel, spec, model, lookup, ends=TerminalState.FAILED)
    compaction = _one(spans, "chat summary-model")
    assert compaction.status.status_code is StatusCode.ERROR
    _has_attributes(compaction, {"error.type": "compaction_failed"})
    assert _one(spans, "psych.run").status.status_code is StatusCode.ERROR


async def test_a_crashed_attempt_and_its_reclaim_join_the_dispatchers_trace(otel: Otel) -> None:
    store = InMemoryStore()
    spec = AgentSpec(name="clerk", model="m", tools=(CodeTool(name="lookup"),))
    version = psych_runtime.Version.of(spec, psych_runtime.runtime.clock.utcnow())  # type: ignore[attr-defined]
    model = FakeModel().turn(tool_calls=[("lookup", {"order_id": "A1"})]).turn(text="A1 is packed.")
    tracer = otel.tracer_provider.get_tracer("consumer")
    with tracer.start_as_current_span("consumer request") as consumer:
        recovery = await crash_and_recover(
            store,
            model,
            registry_of(lookup),
            version,
            "go",
            scope=ACME,
            crash_before="tool_call_finished",
            runtime_for=lambda on: Runtime(
                on, model, registry_of(lookup), telemetry=otel.telemetry
            ),
        )
    assert recovery.final_log[-1].state is TerminalState.COMPLETED  # type: ignore[union-attr]
    spans = otel.spans()
    assert check_spans(spans) == []
    consumer_id = consumer.get_span_context().span_id
    runs = otel.named("psych.run")
    # The Worker killed in this process still ends its own spans; the reclaiming
    # Attempt adds the abandoned one as the log tells it (marked psych.recovered).
    assert len(runs) == 3
    assert all(r.parent is not None and r.parent.span_id == consumer_id for r in runs)
    trace_ids = {s.context.trace_id for s in spans if s.context}
    assert trace_ids == {consumer.get_span_context().trace_id}
    attempts = otel.named("psych.attempt")
    [recovered] = [a for a in attempts if a.attributes and a.attributes.get("psych.recovered")]
    _has_attributes(recovered, {"psych.attempt.number": 1})
    assert recovered.status.status_code is StatusCode.ERROR
    [second] = [a for a in attempts if a.attributes and a.attributes["psych.attempt.number"] == 2]
    _has_attributes(second, {"psych.attempt.reclaimed_expired_lease": True})
    assert second.status.status_code is StatusCode.UNSET
    # The call the crash left in doubt: closed by the second Attempt, under the first.
    orphaned = [
        c
        for c in otel.named("execute_tool lookup")
        if c.attributes and c.attributes.get("error.type") == "orphaned"
    ]
    assert len(orphaned) == 1
    _has_attributes(orphaned[0], {"psych.tool.outcome": "unknown", "psych.recovered": True})
    assert orphaned[0].status.status_code is StatusCode.ERROR


class _RaisingProcessor(SpanProcessor):
    """A span processor with a bug: it raises on every start and end."""

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        raise RuntimeError("processor start failed")

    def on_end(self, span: ReadableSpan) -> None:
        raise RuntimeError("processor end failed")


class _RaisingExporter(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        raise ConnectionError("collector unreachable")


class _RaisingTelemetry:
    enabled = True

    def start_span(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no spans today")

    def current_carrier(self) -> dict[str, str]:
        raise RuntimeError("no context today")

    def record(self, *args: Any) -> None:
        raise RuntimeError("no metrics today")


@pytest.mark.parametrize("failure", ["processor", "exporter", "adapter"])
async def test_a_broken_exporter_processor_or_adapter_never_fails_a_run(
    otel: Otel, failure: str, caplog: pytest.LogCaptureFixture
) -> None:
    if failure == "processor":
        otel.tracer_provider.add_span_processor(_RaisingProcessor())
    elif failure == "exporter":
        otel.tracer_provider.add_span_processor(SimpleSpanProcessor(_RaisingExporter()))
    telemetry = _RaisingTelemetry() if failure == "adapter" else otel.telemetry
    spec = AgentSpec(name="clerk", model="m", tools=(CodeTool(name="lookup"),))
    model = FakeModel().turn(tool_calls=[("lookup", {"order_id": "A1"})]).turn(text="Packed.")
    store = InMemoryStore()
    version = await publish(store, spec, scope=ACME)
    caplog.set_level(logging.CRITICAL)
    async with running_worker(store, model, registry_of(lookup), telemetry):  # type: ignore[arg-type]
        run = await dispatch(store, version, "go", scope=ACME, trace_context={})
        log = await settled_log(store, run.run_id)
    assert log[-1].state is TerminalState.COMPLETED  # type: ignore[union-attr]
    assert [r.type for r in log].count("tool_call_finished") == 1


async def test_a_background_child_claimed_by_a_worker_joins_the_parents_trace(
    otel: Otel,
) -> None:
    model = lead_spawning_the_finder(
        meanwhile="The finder is on it.", relayed="The finder says A1 is at the depot."
    )
    spec = AgentSpec(
        name="lead",
        model="lead-m",
        tools=("lookup",),
        spawn=SpawnEnvelope(models=("finder-m",)),
    )
    log, _ = await _traced(otel, spec, model, lookup)
    [spawned] = [r for r in log if r.type == "subagent_spawned"]
    [child_run] = [
        s
        for s in otel.named("psych.run")
        if s.attributes and s.attributes["psych.run.id"] == spawned.child_run_id
    ]
    spawn_call = next(s for s in otel.named("execute_tool spawn_subagent"))
    assert spawn_call.context is not None and child_run.parent is not None
    assert child_run.parent.span_id == spawn_call.context.span_id
    assert child_run.parent.is_remote  # it came through the child's admission record
    assert child_run.context is not None
    assert child_run.context.trace_id == spawn_call.context.trace_id
