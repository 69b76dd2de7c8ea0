"""Checking finished spans against ``PSYCH_SCHEMA``.

The checker works on ``FinishedSpan``, a plain description any tracing library's spans
convert to (``psych_otel.check_spans`` does it for OpenTelemetry's), so the same rules
judge the runtime's own tests, an adapter's contract suite and a consumer's traces.

A span is the runtime's when it carries ``psych.run.id`` or its name starts with
``psych.``; every other span (a consumer's own, another library's ``chat gpt-4o``) is
ignored, except as a parent. Each of the runtime's spans is matched to its rule by its
fixed name, or else by its ``gen_ai.operation.name`` (see
``TelemetrySchema.rule_for``), and must then carry the name the rule's template gives.
"""

from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime

from psych_runtime.telemetry.port import AttributeValue
from psych_runtime.telemetry.schema import PSYCH_SCHEMA
from psych_runtime.telemetry.schema import ROOT
from psych_runtime.telemetry.schema import RUN_ID
from psych_runtime.telemetry.schema import AttributeRule
from psych_runtime.telemetry.schema import SpanKind
from psych_runtime.telemetry.schema import SpanRule
from psych_runtime.telemetry.schema import TelemetrySchema


@dataclass(frozen=True, slots=True)
class FinishedSpan:
    """A closed span, as the checker sees it.

    Attributes:
        name: the span's name.
        span_id: its id, unique within the trace (any hashable text form).
        trace_id: the trace it belongs to.
        parent_id: its parent's span id, or None for a root.
        attributes: what it carries.
        error: whether its status is ERROR.
        kind: its span kind, when the tracing library reports one (checked then).
        started_at: when it started, when known.
    """

    name: str
    span_id: str
    trace_id: str
    parent_id: str | None = None
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)
    error: bool = False
    kind: SpanKind | None = None
    started_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class SpanProblem:
    """One way a span breaks the schema.

    Attributes:
        span: the span's name.
        span_id: its id.
        problem: what is wrong, in one sentence.
    """

    span: str
    span_id: str
    problem: str

    def __str__(self) -> str:
        return f"{self.span} ({self.span_id}): {self.problem}"


def _type_ok(rule: AttributeRule, value: AttributeValue) -> bool:
    match rule.type:
        case "string":
            return isinstance(value, str)
        case "bool":
            return isinstance(value, bool)
        case "int":
            return isinstance(value, int) and not isinstance(value, bool)
        case "float":
            return isinstance(value, int | float) and not isinstance(value, bool)
        case "string[]":
            return isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)


def _attribute_problems(rule: SpanRule, span: FinishedSpan) -> list[str]:
    found: list[str] = []
    for attribute in (*rule.start, *rule.end):
        value = span.attributes.get(attribute.name)
        if value is None:
            if attribute.required:
                found.append(f"required attribute {attribute.name} is missing")
            continue
        if not _type_ok(attribute, value):
            found.append(f"attribute {attribute.name} should be {attribute.type}, got {value!r}")
        elif attribute.values is not None and str(value) not in attribute.values:
            allowed = ", ".join(sorted(attribute.values))
            found.append(f"attribute {attribute.name}={value!r} is not one of {allowed}")
    return found


def _status_problems(rule: SpanRule, span: FinishedSpan) -> list[str]:
    if rule.error is None:
        return []
    value = span.attributes.get(rule.error.attribute)
    if rule.error.values is None:
        says_error = value is not None
    else:
        says_error = value is not None and str(value) in rule.error.values
    if says_error and not span.error:
        return [f"{rule.error.attribute}={value!r} but the status is not ERROR"]
    if span.error and not says_error and not rule.error.only_implies:
        return [f"the status is ERROR but {rule.error.attribute}={value!r} does not say so"]
    return []


def is_runtime_span(span: FinishedSpan) -> bool:
    """Whether ``span`` is one the runtime emitted (rather than a consumer's own)."""
    return RUN_ID in span.attributes or span.name.startswith("psych.")


def check_spans(
    spans: Iterable[FinishedSpan], schema: TelemetrySchema = PSYCH_SCHEMA
) -> list[SpanProblem]:
    """Every way ``spans`` break ``schema``; an empty list when they conform.

    Checked for each of the runtime's spans: it answers to a rule of the schema, has
    the name that rule gives it and the rule's span kind (when the span reports one),
    carries the required attributes, every declared attribute has the declared type
    and an allowed value, its status agrees with the error rule, and its parent is a
    span it may sit under (a span of the schema must find its parent among ``spans``;
    only a ``ROOT``-allowed span may hang from a span outside them).

    Args:
        spans: finished spans, typically everything an exporter collected.
        schema: the schema to check against.
    """
    listed = list(spans)
    rules: dict[tuple[str, str], SpanRule] = {}
    for span in listed:
        if is_runtime_span(span):
            rule = schema.rule_for(span.name, span.attributes)
            if rule is not None:
                rules[span.trace_id, span.span_id] = rule
    problems: list[SpanProblem] = []
    for span in listed:
        if not is_runtime_span(span):
            continue
        rule = rules.get((span.trace_id, span.span_id))
        if rule is None:
            problems.append(SpanProblem(span.name, span.span_id, "not a span of the schema"))
            continue
        found = _name_problems(rule, span) + _attribute_problems(rule, span)
        found += _status_problems(rule, span) + _parent_problems(rule, span, rules)
        problems.extend(SpanProblem(span.name, span.span_id, text) for text in found)
    return problems


def _name_problems(rule: SpanRule, span: FinishedSpan) -> list[str]:
    found: list[str] = []
    expected = rule.render(span.attributes)
    if expected is not None and expected != span.name:
        found.append(f"should be named {expected!r} ({rule.name})")
    if span.kind is not None and span.kind != rule.kind:
        found.append(f"its kind is {span.kind}, expected {rule.kind}")
    return found


def _parent_problems(
    rule: SpanRule,
    span: FinishedSpan,
    rules: Mapping[tuple[str, str], SpanRule],
) -> list[str]:
    if span.parent_id is None:
        return [] if ROOT in rule.parents else ["has no parent"]
    parent = rules.get((span.trace_id, span.parent_id))
    if parent is None:
        if ROOT in rule.parents:
            return []
        return ["its parent span is missing"]
    if parent.key not in rule.parents:
        allowed = ", ".join(key or "a root" for key in rule.parents)
        return [f"its parent is a {parent.key!r} span, expected one of: {allowed}"]
    return []


__all__ = ["FinishedSpan", "SpanProblem", "check_spans", "is_runtime_span"]
