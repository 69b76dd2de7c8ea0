"""``check_spans`` over hand-built SDK spans: what it accepts and what it reports."""

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from psych_otel import OtelTelemetry
from psych_otel import check_spans

RUN = {"psych.run.id": "run_1", "psych.scope.tenant": "acme", "psych.version.hash": "h"}
ATTEMPT = {
    "psych.run.id": "run_1",
    "psych.worker.id": "w",
    "psych.attempt.number": 1,
    "psych.attempt.reclaimed_expired_lease": False,
}
TOOL = {
    "psych.run.id": "run_1",
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "lookup",
    "gen_ai.tool.call.id": "c1",
    "psych.tool.interruptible": True,
    "psych.turn.number": 1,
}


class Traced:
    """Telemetry over an in-memory exporter, and the spans a test's tree left open."""

    def __init__(self, telemetry: OtelTelemetry, exporter: InMemorySpanExporter) -> None:
        self.telemetry = telemetry
        self.exporter = exporter
        self.still_open: list[Any] = []

    def start_span(self, name: str, attributes: dict[str, Any], **options: Any) -> Any:
        """``OtelTelemetry.start_span`` on this test's telemetry."""
        return self.telemetry.start_span(name, attributes, **options)

    def tree(self) -> tuple[Any, Any]:
        """A run, its attempt and the attempt's first turn, open until ``problems``.

        Returns the attempt and the turn, the parents a test hangs its spans from.
        """
        run = self.start_span("psych.run", RUN)
        attempt = self.start_span("psych.attempt", ATTEMPT, parent=run)
        turn = self.start_span(
            "psych.turn", {"psych.run.id": "run_1", "psych.turn.number": 1}, parent=attempt
        )
        self.still_open = [turn, attempt, run]
        return attempt, turn

    def problems(self, *still_open: Any) -> list[str]:
        """End ``still_open``, then the tree innermost first; what ``check_spans`` says."""
        for span in (*still_open, *self.still_open):
            span.end()
        spans: list[ReadableSpan] = list(self.exporter.get_finished_spans())
        return [problem.problem for problem in check_spans(spans)]


@pytest.fixture
def traced() -> Iterator[Traced]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield Traced(OtelTelemetry(tracer_provider=provider), exporter)
    provider.shutdown()


def test_a_well_formed_tree_passes(traced: Traced) -> None:
    _, turn = traced.tree()
    tool = traced.start_span("execute_tool lookup", TOOL, parent=turn)
    tool.set_attributes({"psych.tool.outcome": "error"})
    tool.end(error="it failed")
    assert traced.problems() == []


def test_missing_attributes_wrong_types_and_values_are_reported(traced: Traced) -> None:
    run = traced.start_span(
        "psych.run", {**RUN, "psych.scope.tenant": 7, "psych.run.terminal_state": "exploded"}
    )
    attempt = traced.start_span("psych.attempt", {"psych.run.id": "run_1"}, parent=run)
    problems = traced.problems(attempt, run)
    assert "attribute psych.scope.tenant should be string, got 7" in problems
    assert any("psych.run.terminal_state='exploded' is not one of" in p for p in problems)
    assert "required attribute psych.worker.id is missing" in problems
    assert "required attribute psych.attempt.number is missing" in problems


def test_a_misplaced_or_orphaned_span_is_reported(traced: Traced) -> None:
    run = traced.start_span("psych.run", RUN)
    misplaced = traced.start_span(
        "execute_tool lookup", {**TOOL, "psych.tool.outcome": "ok"}, parent=run
    )
    misplaced.end()
    run.end()
    orphan = traced.start_span("psych.attempt", ATTEMPT)
    orphan.end()
    unknown = traced.start_span("psych.mystery", {})
    unknown.end()
    problems = traced.problems()
    assert "its parent is a 'run' span, expected one of: turn, step" in problems
    assert "has no parent" in problems
    assert "not a span of the schema" in problems


def test_a_status_that_contradicts_the_outcome_is_reported(traced: Traced) -> None:
    _, turn = traced.tree()
    silent = traced.start_span(
        "execute_tool lookup", {**TOOL, "psych.tool.outcome": "error"}, parent=turn
    )
    silent.end()
    loud = traced.start_span(
        "execute_tool lookup",
        {**TOOL, "gen_ai.tool.call.id": "c2", "psych.tool.outcome": "ok"},
        parent=turn,
    )
    loud.end(error="nothing was wrong")
    problems = traced.problems()
    assert "psych.tool.outcome='error' but the status is not ERROR" in problems
    assert "the status is ERROR but psych.tool.outcome='ok' does not say so" in problems


def test_spans_of_other_instrumentation_are_ignored(traced: Traced) -> None:
    mine = traced.start_span("GET /orders", {"http.method": "GET"})
    run = traced.start_span("psych.run", RUN, parent=mine)
    assert traced.problems(run, mine) == []


CHAT = {
    "psych.run.id": "run_1",
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "gpt-4o-mini",
    "psych.turn.number": 1,
}


def test_a_name_that_does_not_follow_its_template_is_reported(traced: Traced) -> None:
    _, turn = traced.tree()
    traced.start_span("chat gpt-4o", CHAT, parent=turn, kind="client").end()
    traced.start_span("psych.tool_call", TOOL, parent=turn).end()
    problems = traced.problems()
    assert (
        "should be named 'chat gpt-4o-mini' "
        "({gen_ai.operation.name} {gen_ai.request.model})" in problems
    )
    assert "should be named 'execute_tool lookup' (execute_tool {gen_ai.tool.name})" in problems


def test_a_span_of_the_wrong_kind_is_reported(traced: Traced) -> None:
    _, turn = traced.tree()
    traced.start_span("chat gpt-4o-mini", CHAT, parent=turn).end()  # internal: wrong
    traced.start_span("execute_tool lookup", TOOL, parent=turn, kind="client").end()
    problems = traced.problems()
    assert problems.count("its kind is internal, expected client") == 1
    assert problems.count("its kind is client, expected internal") == 1


def test_a_compaction_and_a_model_call_share_a_name_and_are_told_apart(traced: Traced) -> None:
    attempt, _ = traced.tree()
    compaction = {
        **{k: v for k, v in CHAT.items() if k != "psych.turn.number"},
        "psych.compaction.reason": "threshold",
        "psych.compaction.replaced_to_seq": 7,
    }
    traced.start_span("chat gpt-4o-mini", compaction, parent=attempt, kind="client").end()
    # Without its marker, the same span is taken for a model call, which needs a turn.
    traced.start_span(
        "chat gpt-4o-mini",
        {k: v for k, v in compaction.items() if k != "psych.compaction.reason"},
        parent=attempt,
        kind="client",
    ).end()
    problems = traced.problems()
    assert problems == [
        "required attribute psych.turn.number is missing",
        "its parent is a 'attempt' span, expected one of: turn",
    ]


def test_another_librarys_genai_spans_are_ignored(traced: Traced) -> None:
    theirs = {k: v for k, v in CHAT.items() if k != "psych.run.id"}
    traced.start_span("chat gpt-4o", theirs, kind="client").end()
    traced.start_span("execute_tool search", {"gen_ai.operation.name": "execute_tool"}).end()
    assert traced.problems() == []
