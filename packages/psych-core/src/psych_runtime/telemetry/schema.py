"""The telemetry schema, declared once as data: every span, its attributes, every metric.

The runtime emits exactly what this declares, the conformance checker
(``psych_runtime.telemetry.conformance``) validates spans against it, and an adapter
reads a span's kind and a metric's unit from it. Names under ``gen_ai.`` follow the
OpenTelemetry semantic conventions for generative AI; ``psych.`` names cover what
those conventions have no word for (Runs, Attempts, steps, outcomes).

A start attribute marked required must be on the span by the time it closes; end
attributes are optional (a span cut short by a crash never gets them).
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

AttributeType = Literal["string", "int", "float", "bool", "string[]"]
"""The value kinds the schema distinguishes."""

SpanKind = Literal["internal", "client"]
"""How a span relates to the outside: a model call leaves the process, the rest do not."""

ROOT = ""
"""In ``SpanRule.parents``: the span may have no parent, or one outside the schema."""

# --- attribute names -------------------------------------------------------------------

GEN_AI_OPERATION = "gen_ai.operation.name"
GEN_AI_PROVIDER = "gen_ai.provider.name"
GEN_AI_SYSTEM = "gen_ai.system"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_FINISH_REASONS = "gen_ai.response.finish_reasons"
GEN_AI_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_TOKEN_TYPE = "gen_ai.token.type"
ERROR_TYPE = "error.type"

RUN_ID = "psych.run.id"
TENANT = "psych.scope.tenant"
VERSION_HASH = "psych.version.hash"
PARENT_RUN_ID = "psych.parent_run.id"
TERMINAL_STATE = "psych.run.terminal_state"
WORKER_ID = "psych.worker.id"
ATTEMPT_NUMBER = "psych.attempt.number"
RECLAIMED = "psych.attempt.reclaimed_expired_lease"
TURN_NUMBER = "psych.turn.number"
STEP_ID = "psych.step.id"
STEP_NAME = "psych.step.name"
STEP_KIND = "psych.step.kind"
STEP_ATTEMPT = "psych.step.attempt_number"
STEP_OUTCOME = "psych.step.outcome"
TOOL_INTERRUPTIBLE = "psych.tool.interruptible"
TOOL_OUTCOME = "psych.tool.outcome"
CACHE_READ_TOKENS = "psych.usage.cache_read_tokens"
CACHE_WRITE_TOKENS = "psych.usage.cache_write_tokens"
COST_AMOUNT = "psych.cost.amount"
COST_CURRENCY = "psych.cost.currency"
TIME_TO_FIRST_TOKEN = "psych.model_call.time_to_first_token_seconds"
SUBAGENT_NAME = "psych.subagent.name"
DELEGATION_DEPTH = "psych.delegation.depth"
CHILD_RUN_ID = "psych.subagent.child_run_id"
CHILD_TERMINAL_STATE = "psych.subagent.terminal_state"
COMPACTION_REASON = "psych.compaction.reason"
COMPACTION_TO_SEQ = "psych.compaction.replaced_to_seq"

# --- span names ------------------------------------------------------------------------

RUN = "psych.run"
ATTEMPT = "psych.attempt"
TURN = "psych.turn"
MODEL_CALL = "psych.model_call"
TOOL_CALL = "psych.tool_call"
STEP = "psych.step"
DELEGATION = "psych.subagent_delegation"
COMPACTION = "psych.compaction"

# --- metric names ----------------------------------------------------------------------

TOKEN_USAGE = "gen_ai.client.token.usage"
OPERATION_DURATION = "gen_ai.client.operation.duration"
COST = "psych.cost"

PROVIDER = "psych"
"""What the runtime reports as ``gen_ai.provider.name`` (and the older ``gen_ai.system``):
the calls go through Psych's model port, which may front any provider."""

_TERMINAL_STATES = frozenset({"completed", "failed", "aborted", "abandoned", "force_settled"})
_FAILED_STATES = frozenset({"failed", "force_settled"})


@dataclass(frozen=True, slots=True)
class AttributeRule:
    """One attribute a span may carry.

    Attributes:
        name: the attribute's name.
        type: the kind of value it holds.
        required: whether the span must carry it by the time it closes.
        values: the only values allowed, when the attribute is an enumeration.
    """

    name: str
    type: AttributeType
    required: bool = True
    values: frozenset[str] | None = None


def _optional(
    name: str, kind: AttributeType, values: frozenset[str] | None = None
) -> AttributeRule:
    return AttributeRule(name, kind, required=False, values=values)


@dataclass(frozen=True, slots=True)
class ErrorRule:
    """When a span's status must be ERROR: an attribute holds one of ``values``.

    With ``values`` None, the attribute merely being present means an error. A span
    whose attribute says otherwise must not be ERROR, unless ``only_implies`` is set
    (the attribute is one reason among others, as an exception can also fail it).
    """

    attribute: str
    values: frozenset[str] | None = None
    only_implies: bool = False


@dataclass(frozen=True, slots=True)
class SpanRule:
    """What one kind of span looks like.

    Attributes:
        name: the span name.
        kind: internal, or client for work that leaves the process.
        parents: the span names it may sit under; ``ROOT`` allows no parent (or one
            outside the schema, such as a consumer's own span).
        start: attributes set when the span opens.
        end: attributes set when it closes, all optional.
        error: when the span's status must be ERROR.
        description: what the span covers.
    """

    name: str
    kind: SpanKind
    parents: tuple[str, ...]
    start: tuple[AttributeRule, ...]
    end: tuple[AttributeRule, ...] = ()
    error: ErrorRule | None = None
    description: str = ""

    def attribute(self, name: str) -> AttributeRule | None:
        """The rule for ``name``, or None when the schema does not declare it here."""
        for rule in (*self.start, *self.end):
            if rule.name == name:
                return rule
        return None


@dataclass(frozen=True, slots=True)
class MetricRule:
    """One metric the runtime records.

    Attributes:
        name: the instrument's name.
        instrument: always a histogram for now.
        unit: the UCUM unit.
        description: what one measurement is.
        attributes: the attributes every measurement carries.
    """

    name: str
    unit: str
    description: str
    attributes: tuple[str, ...]
    instrument: Literal["histogram"] = "histogram"


@dataclass(frozen=True, slots=True)
class TelemetrySchema:
    """Every span and metric of one schema version."""

    version: int
    spans: Mapping[str, SpanRule] = field(default_factory=dict)
    metrics: Mapping[str, MetricRule] = field(default_factory=dict)


def _schema(version: int, spans: list[SpanRule], metrics: list[MetricRule]) -> TelemetrySchema:
    return TelemetrySchema(
        version=version,
        spans=MappingProxyType({rule.name: rule for rule in spans}),
        metrics=MappingProxyType({rule.name: rule for rule in metrics}),
    )


_USAGE = (
    _optional(GEN_AI_INPUT_TOKENS, "int"),
    _optional(GEN_AI_OUTPUT_TOKENS, "int"),
    _optional(CACHE_READ_TOKENS, "int"),
    _optional(CACHE_WRITE_TOKENS, "int"),
    _optional(COST_AMOUNT, "float"),
    _optional(COST_CURRENCY, "string"),
    _optional(ERROR_TYPE, "string"),
)

PSYCH_SCHEMA = _schema(
    1,
    [
        SpanRule(
            RUN,
            "internal",
            parents=(ROOT, DELEGATION, STEP, TOOL_CALL),
            start=(
                AttributeRule(RUN_ID, "string"),
                AttributeRule(TENANT, "string"),
                AttributeRule(VERSION_HASH, "string"),
                _optional(PARENT_RUN_ID, "string"),
                _optional(DELEGATION_DEPTH, "int"),
            ),
            end=(_optional(TERMINAL_STATE, "string", _TERMINAL_STATES),),
            error=ErrorRule(TERMINAL_STATE, _FAILED_STATES, only_implies=True),
            description="One Run's stay in one process: from the claim (or the inline "
            "start of a child) to the end of its Attempt.",
        ),
        SpanRule(
            ATTEMPT,
            "internal",
            parents=(RUN,),
            start=(
                AttributeRule(RUN_ID, "string"),
                AttributeRule(WORKER_ID, "string"),
                AttributeRule(ATTEMPT_NUMBER, "int"),
                AttributeRule(RECLAIMED, "bool"),
            ),
            description="One execution pass under a lease; ERROR when it raised, was "
            "abandoned or was settled by force.",
        ),
        SpanRule(
            TURN,
            "internal",
            parents=(ATTEMPT,),
            start=(
                AttributeRule(RUN_ID, "string"),
                AttributeRule(TURN_NUMBER, "int"),
                _optional(STEP_ID, "string"),
            ),
            description="One turn of the agent loop: a model call and the tools it asked for; "
            "ERROR when the model call failed for good.",
        ),
        SpanRule(
            MODEL_CALL,
            "client",
            parents=(TURN,),
            start=(
                AttributeRule(RUN_ID, "string"),
                AttributeRule(GEN_AI_OPERATION, "string", values=frozenset({"chat"})),
                AttributeRule(GEN_AI_PROVIDER, "string"),
                AttributeRule(GEN_AI_SYSTEM, "string"),
                AttributeRule(GEN_AI_REQUEST_MODEL, "string"),
                AttributeRule(TURN_NUMBER, "int"),
            ),
            end=(
                _optional(GEN_AI_RESPONSE_MODEL, "string"),
                _optional(GEN_AI_FINISH_REASONS, "string[]"),
                _optional(TIME_TO_FIRST_TOKEN, "float"),
                *_USAGE,
            ),
            error=ErrorRule(ERROR_TYPE),
            description="One request to the model; ERROR when it failed (retried or not).",
        ),
        SpanRule(
            TOOL_CALL,
            "internal",
            parents=(TURN, STEP),
            start=(
                AttributeRule(RUN_ID, "string"),
                AttributeRule(GEN_AI_OPERATION, "string", values=frozenset({"execute_tool"})),
                AttributeRule(GEN_AI_TOOL_NAME, "string"),
                AttributeRule(GEN_AI_TOOL_CALL_ID, "string"),
                AttributeRule(TOOL_INTERRUPTIBLE, "bool"),
                AttributeRule(TURN_NUMBER, "int"),
            ),
            end=(
                _optional(TOOL_OUTCOME, "string", frozenset({"ok", "error", "aborted", "unknown"})),
                _optional(ERROR_TYPE, "string"),
            ),
            error=ErrorRule(TOOL_OUTCOME, frozenset({"error"})),
            description="One tool call, from its durable start to its finish.",
        ),
        SpanRule(
            STEP,
            "internal",
            parents=(ATTEMPT, STEP),
            start=(
                AttributeRule(RUN_ID, "string"),
                AttributeRule(STEP_ID, "string"),
                AttributeRule(STEP_NAME, "string"),
                AttributeRule(
                    STEP_KIND,
                    "string",
                    values=frozenset(
                        {
                            "agent",
                            "tool",
                            "workflow",
                            "subagent",
                            "parallel",
                            "branch",
                            "foreach",
                            "loop",
                            "map",
                            "set_state",
                            "sleep",
                            "wait",
                            "human",
                        }
                    ),
                ),
                AttributeRule(STEP_ATTEMPT, "int"),
            ),
            end=(
                _optional(
                    STEP_OUTCOME,
                    "string",
                    frozenset({"succeeded", "failed", "aborted", "skipped", "suspended"}),
                ),
                _optional(ERROR_TYPE, "string"),
            ),
            error=ErrorRule(STEP_OUTCOME, frozenset({"failed"})),
            description="One attempt of one workflow step.",
        ),
        SpanRule(
            DELEGATION,
            "internal",
            parents=(TOOL_CALL,),
            start=(
                AttributeRule(RUN_ID, "string"),
                AttributeRule(GEN_AI_OPERATION, "string", values=frozenset({"invoke_agent"})),
                AttributeRule(GEN_AI_AGENT_NAME, "string"),
                AttributeRule(SUBAGENT_NAME, "string"),
                AttributeRule(DELEGATION_DEPTH, "int"),
                AttributeRule(CHILD_RUN_ID, "string"),
            ),
            end=(_optional(CHILD_TERMINAL_STATE, "string", _TERMINAL_STATES),),
            error=ErrorRule(CHILD_TERMINAL_STATE, _FAILED_STATES),
            description="Handing work to a child Run: the child's own psych.run sits under "
            "it when the child runs inline.",
        ),
        SpanRule(
            COMPACTION,
            "client",
            parents=(ATTEMPT, TURN),
            start=(
                AttributeRule(RUN_ID, "string"),
                AttributeRule(GEN_AI_OPERATION, "string", values=frozenset({"chat"})),
                AttributeRule(GEN_AI_PROVIDER, "string"),
                AttributeRule(GEN_AI_SYSTEM, "string"),
                AttributeRule(GEN_AI_REQUEST_MODEL, "string"),
                AttributeRule(COMPACTION_REASON, "string"),
                AttributeRule(COMPACTION_TO_SEQ, "int"),
            ),
            end=_USAGE,
            error=ErrorRule(ERROR_TYPE),
            description="Summarising the oldest turns; ERROR when the summarising call "
            "failed or said nothing.",
        ),
    ],
    [
        MetricRule(
            TOKEN_USAGE,
            "{token}",
            "Tokens one model call used, one measurement per token type.",
            (GEN_AI_OPERATION, GEN_AI_PROVIDER, GEN_AI_REQUEST_MODEL, GEN_AI_TOKEN_TYPE),
        ),
        MetricRule(
            OPERATION_DURATION,
            "s",
            "Seconds one model call took, failed calls included (with error.type).",
            (GEN_AI_OPERATION, GEN_AI_PROVIDER, GEN_AI_REQUEST_MODEL),
        ),
        MetricRule(
            COST,
            "{currency}",
            "What one priced model call cost, in psych.cost.currency; unpriced calls "
            "are not measured.",
            (GEN_AI_REQUEST_MODEL, COST_CURRENCY),
        ),
    ],
)
"""Schema version 1."""


__all__ = [
    "PROVIDER",
    "PSYCH_SCHEMA",
    "ROOT",
    "AttributeRule",
    "AttributeType",
    "ErrorRule",
    "MetricRule",
    "SpanKind",
    "SpanRule",
    "TelemetrySchema",
]
