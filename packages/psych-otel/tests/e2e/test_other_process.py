"""The W3C trace context crosses processes with the Run.

The test dispatches a Run inside a span of its own, relying on the installed ``otel``
plugin to read that span from the context, and a Worker in a second process runs it:
the spans that process exports must hang from the test's span, in the test's trace.
"""

from pathlib import Path

from psych_contract.telemetry import AGENT_RUN_SPANS
from psych_otel import OtelTelemetry
from psych_runtime import dispatch
from psych_runtime.adapters import check_spans
from psych_runtime.adapters import installed_telemetry

from ..conftest import ACME
from ..conftest import Otel
from ..conftest import as_finished
from ..conftest import clerk_on_sqlite
from ..conftest import read_exported
from ..conftest import work_in_another_process


async def test_a_worker_in_another_process_parents_the_run_on_the_dispatchers_span(
    otel: Otel, tmp_path: Path
) -> None:
    assert isinstance(installed_telemetry(), OtelTelemetry)  # the plugin is what is tested
    async with clerk_on_sqlite(tmp_path) as (url, store, version):
        tracer = otel.tracer_provider.get_tracer("consumer")
        with tracer.start_as_current_span("handle request") as consumer:
            run = await dispatch(store, version, "Where is A1?", scope=ACME)
        [admitted] = await store.read(run.run_id, limit=1)
    assert admitted.trace_context["traceparent"].split("-")[2] == format(  # type: ignore[union-attr]
        consumer.get_span_context().span_id, "016x"
    )
    spans_file = tmp_path / "spans.jsonl"
    await work_in_another_process(url, spans_file, run.run_id)
    exported = read_exported(spans_file)
    [run_span] = [s for s in exported if s["name"] == "psych.run"]
    context = consumer.get_span_context()
    assert run_span["parent_id"] == format(context.span_id, "016x")
    assert run_span["parent_is_remote"] is True
    assert {s["trace_id"] for s in exported} == {format(context.trace_id, "032x")}
    assert run_span["attributes"]["psych.run.id"] == run.run_id
    names = sorted(s["name"] for s in exported)
    assert names == sorted(AGENT_RUN_SPANS)
    assert check_spans(as_finished(exported)) == []
