"""The Telemetry port without any tracing library: the no-op default, the tracer, the
record field that carries trace context, and how an adapter is found."""

import asyncio
import logging
from typing import Any

import pytest

from psych_runtime import AgentSpec
from psych_runtime import CodeTool
from psych_runtime import InMemoryStore
from psych_runtime import Runtime
from psych_runtime import Scope
from psych_runtime import ToolRegistry
from psych_runtime import Worker
from psych_runtime import dispatch
from psych_runtime import publish
from psych_runtime.adapters import NO_TELEMETRY
from psych_runtime.adapters import PSYCH_SCHEMA
from psych_runtime.adapters import check_spans
from psych_runtime.adapters import installed_telemetry
from psych_runtime.adapters import register_plugin
from psych_runtime.core.reducer import reduce
from psych_runtime.records import RunAdmitted
from psych_runtime.records import record_from_json
from psych_runtime.records import record_to_json
from psych_runtime.runtime.admission import InvalidDispatch
from psych_runtime.testing import FakeModel
from psych_runtime.testing import worker_in_background

from .conftest import RecordingTelemetry
from .conftest import telemetry_plugin

ACME = Scope(tenant="acme")
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id} is packed"


async def _run(runtime_telemetry: Any, worker_telemetry: Any = None, **dispatched: Any) -> Any:
    store = InMemoryStore()
    registry = ToolRegistry()
    registry.register(lookup)
    spec = AgentSpec(name="clerk", model="m", tools=(CodeTool(name="lookup"),))
    version = await publish(store, spec, scope=ACME)
    model = FakeModel().turn(tool_calls=[("lookup", {"order_id": "A1"})]).turn(text="Packed.")
    runtime = Runtime(store, model, registry, telemetry=runtime_telemetry)
    observers: list[object] = []

    async def runner(journal: Any, header: Any, abort: Any) -> None:
        observers.append(journal.observer)
        await runtime(journal, header, abort)

    runner.telemetry = runtime.telemetry  # type: ignore[attr-defined]
    async with worker_in_background(
        Worker(store, runner, poll_interval=0.02, telemetry=worker_telemetry)
    ) as worker:
        run = await dispatch(store, version, "go", scope=ACME, **dispatched)
        async with asyncio.timeout(10):
            while (log := await store.read(run.run_id))[-1].type != "run_settled":
                await asyncio.sleep(0.01)
    return log, observers, worker


async def test_without_an_adapter_no_tracer_is_built() -> None:
    log, observers, worker = await _run(NO_TELEMETRY)
    assert log[-1].state == "completed"
    assert worker.telemetry is NO_TELEMETRY
    assert observers == [None]


async def test_a_run_dispatched_outside_any_span_gets_a_trace_of_its_own() -> None:
    """Minted at admission and kept in the log, so every Attempt can join it."""
    first, _, _ = await _run(NO_TELEMETRY)
    second, _, _ = await _run(NO_TELEMETRY, trace_context={})
    contexts = [log[0].trace_context["traceparent"] for log in (first, second)]
    for context in contexts:
        version, trace_id, span_id, flags = context.split("-")
        assert (version, flags) == ("00", "01")
        assert len(trace_id) == 32 and int(trace_id, 16) != 0
        assert len(span_id) == 16 and int(span_id, 16) != 0
    assert contexts[0].split("-")[1] != contexts[1].split("-")[1]
    assert "traceparent" in record_to_json(first[0]).decode()


async def test_the_worker_takes_the_runtimes_telemetry_and_spans_follow_the_records() -> None:
    telemetry = RecordingTelemetry()
    log, observers, worker = await _run(telemetry)
    assert log[-1].state == "completed"
    assert worker.telemetry is telemetry
    assert observers[0] is not None
    assert check_spans(telemetry.finished()) == []
    assert all(span.ended for span in telemetry.spans)
    assert [(s.name, s.kind) for s in telemetry.spans] == [
        ("psych.run", "internal"),
        ("psych.attempt", "internal"),
        ("psych.turn", "internal"),
        ("chat m", "client"),
        ("execute_tool lookup", "internal"),
        ("psych.turn", "internal"),
        ("chat m", "client"),
    ]
    assert all(s.start_time is None for s in telemetry.spans)
    names = [metric for metric, _, _ in telemetry.measurements]
    assert names.count("gen_ai.client.operation.duration") == 2
    assert set(names) <= set(PSYCH_SCHEMA.metrics)


async def test_a_stored_trace_context_becomes_the_runs_remote_parent() -> None:
    telemetry = RecordingTelemetry()
    log, _, _ = await _run(telemetry, trace_context={"traceparent": TRACEPARENT})
    assert log[0].trace_context == {"traceparent": TRACEPARENT}
    assert reduce(log).trace_context == {"traceparent": TRACEPARENT}
    [run] = [span for span in telemetry.spans if span.name == "psych.run"]
    assert run.carrier_in == {"traceparent": TRACEPARENT}


@pytest.mark.parametrize(
    "bad",
    [{"traceparent": 7}, {"k" * 65: "v"}, {f"k{n}": "v" for n in range(9)}, ["traceparent"]],
    ids=["not-text", "long-key", "too-many", "not-a-mapping"],
)
async def test_a_malformed_trace_context_is_refused_before_anything_is_written(bad: Any) -> None:
    store = InMemoryStore()
    spec = AgentSpec(name="clerk", model="m")
    version = await publish(store, spec, scope=ACME)
    with pytest.raises(InvalidDispatch, match="trace_context"):
        await dispatch(store, version, "go", scope=ACME, trace_context=bad)


def test_a_log_written_before_trace_context_existed_still_folds() -> None:
    old = (
        b'{"type":"run_admitted","run_id":"run_1","seq":1,"at":"2026-01-01T00:00:00Z",'
        b'"scope":{"tenant":"acme"},"version_hash":"sha256:' + b"a" * 64 + b'",'
        b'"deadline_at":"2026-01-01T01:00:00Z"}'
    )
    record = record_from_json(old)
    assert isinstance(record, RunAdmitted)
    assert record.trace_context == {}
    assert reduce([record]).trace_context == {}


class _Boom(Exception):
    pass


def _raises() -> Any:
    raise _Boom("cannot build")


def test_with_no_adapter_installed_the_default_is_the_no_op(fresh_plugins: None) -> None:
    assert installed_telemetry() is NO_TELEMETRY


def test_an_adapter_is_found_through_the_plugin_hook(fresh_plugins: None) -> None:
    telemetry = RecordingTelemetry()

    register_plugin(telemetry_plugin(lambda: telemetry), "recording")
    assert installed_telemetry() is telemetry


def test_an_adapter_that_fails_to_build_leaves_the_no_op(
    fresh_plugins: None, caplog: pytest.LogCaptureFixture
) -> None:
    register_plugin(telemetry_plugin(_raises, "broken"), "broken")
    with caplog.at_level(logging.ERROR):
        assert installed_telemetry() is NO_TELEMETRY
    assert "failed to build" in caplog.text
