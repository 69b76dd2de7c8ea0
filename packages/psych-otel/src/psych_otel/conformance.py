"""Checking OpenTelemetry spans against the runtime's span schema.

``check_spans`` takes the finished spans an exporter collected (the SDK's
``ReadableSpan``, or anything shaped like it) and lists how the ones the runtime
emitted break ``PSYCH_SCHEMA``. Run it over your own traces to see whether a
collector, sampler or processor in between changed what the runtime sent.
"""

from collections.abc import Iterable
from collections.abc import Mapping
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Protocol

from opentelemetry.trace import SpanContext
from opentelemetry.trace import SpanKind
from opentelemetry.trace import StatusCode
from opentelemetry.trace.status import Status

from psych_runtime.adapters.telemetry import PSYCH_SCHEMA
from psych_runtime.adapters.telemetry import FinishedSpan
from psych_runtime.adapters.telemetry import SpanKind as PsychSpanKind
from psych_runtime.adapters.telemetry import SpanProblem
from psych_runtime.adapters.telemetry import TelemetrySchema
from psych_runtime.adapters.telemetry import check_spans as check_finished

_KINDS: dict[SpanKind, PsychSpanKind] = {
    SpanKind.INTERNAL: "internal",
    SpanKind.CLIENT: "client",
    SpanKind.PRODUCER: "producer",
}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class ExportedSpan(Protocol):
    """What the checker reads of a finished span (the SDK's ``ReadableSpan`` has it)."""

    @property
    def name(self) -> str:
        """The span name."""
        ...

    @property
    def context(self) -> SpanContext | None:
        """The span's own trace and span ids."""
        ...

    @property
    def parent(self) -> SpanContext | None:
        """Its parent's context, None for a root."""
        ...

    @property
    def attributes(self) -> Mapping[str, object] | None:
        """Its attributes."""
        ...

    @property
    def status(self) -> Status:
        """Its status (OK, ERROR or unset)."""
        ...

    @property
    def kind(self) -> SpanKind:
        """Its span kind."""
        ...

    @property
    def start_time(self) -> int | None:
        """When it started, in nanoseconds since the epoch."""
        ...


def finished_span(span: ExportedSpan) -> FinishedSpan:
    """The checker's view of one exported OpenTelemetry span."""
    context = span.context
    span_id = format(context.span_id, "016x") if context is not None else ""
    trace_id = format(context.trace_id, "032x") if context is not None else ""
    parent = format(span.parent.span_id, "016x") if span.parent is not None else None
    return FinishedSpan(
        name=span.name,
        span_id=span_id,
        trace_id=trace_id,
        parent_id=parent,
        attributes={
            name: tuple(value) if isinstance(value, list | tuple) else value  # type: ignore[misc]
            for name, value in (span.attributes or {}).items()
        },
        error=span.status.status_code is StatusCode.ERROR,
        # A kind the schema has no word for (SERVER, CONSUMER) is reported as is, so
        # the checker names it: it is never one of the runtime's.
        kind=_KINDS.get(span.kind, span.kind.name.lower()),  # type: ignore[arg-type]
        started_at=(
            _EPOCH + timedelta(microseconds=span.start_time // 1000)
            if span.start_time is not None
            else None
        ),
    )


def check_spans(
    spans: Iterable[ExportedSpan], schema: TelemetrySchema = PSYCH_SCHEMA
) -> list[SpanProblem]:
    """Every way the runtime's spans among ``spans`` break ``schema``; empty when none.

    Spans the schema does not name (your own, a database driver's) are ignored except
    as parents. See ``psych_runtime.adapters.check_spans`` for the rules.

    Args:
        spans: finished spans, e.g. ``InMemorySpanExporter().get_finished_spans()``.
        schema: the schema to check against.
    """
    return check_finished([finished_span(span) for span in spans], schema)


__all__ = ["ExportedSpan", "check_spans", "finished_span"]
