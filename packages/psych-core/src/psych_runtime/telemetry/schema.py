"""The telemetry schema, declared once as data: every span, its attributes, every metric.

The runtime emits exactly what this declares, the conformance checker
(``psych_runtime.telemetry.conformance``) validates spans against it, and an adapter
reads a metric's unit from it. Spans and attributes follow the OpenTelemetry semantic
conventions for generative AI where those have a word for the thing: a model call is
a CLIENT span named ``chat {gen_ai.request.model}``, a tool call an INTERNAL span named
``execute_tool {gen_ai.tool.name}``, a hand-over to a subagent an INTERNAL span named
``invoke_agent {gen_ai.agent.name}``. ``psych.`` names cover what the conventions do
not describe (Runs, Attempts, turns, workflow steps, outcomes, cost).

Rules are keyed by a stable ``key`` (``"model_call"``, ``"tool_call"``...), since most
span names carry a value. A start attribute marked required must be on the span by the
time it closes; end attributes are optional (a span cut short by a crash never gets
them).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from types import MappingProxyType
from typing import Literal

from psych_runtime.core.spec.workflow import STEP_KINDS

AttributeType = Literal["string", "int", "float", "bool", "string[]"]
"""The value kinds the schema distinguishes."""

SpanKind = Literal["internal", "client", "producer"]
"""How a span relates to the outside: a model call leaves the process (client), a
dispatch hands a Run to whichever Worker claims it (producer), the rest stay inside."""

ROOT = ""
"""In ``SpanRule.parents``: the span may have no parent, or one outside the schema."""

# --- attribute names -------------------------------------------------------------------

GEN_AI_OPERATION = "gen_ai.operation.name"
GEN_AI_PROVIDER = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_FINISH_REASONS = "gen_ai.response.finish_reasons"
GEN_AI_TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk"
GEN_AI_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_CACHE_CREATION_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
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
RECOVERED = "psych.recovered"
TURN_NUMBER = "psych.turn.number"
STEP_ID = "psych.step.id"
STEP_NAME = "psych.step.name"
STEP_KIND = "psych.step.kind"
STEP_ATTEMPT = "psych.step.attempt_number"
STEP_OUTCOME = "psych.step.outcome"
TOOL_INTERRUPTIBLE = "psych.tool.interruptible"
TOOL_OUTCOME = "psych.tool.outcome"
COST_AMOUNT = "psych.cost.amount"
COST_CURRENCY = "psych.cost.currency"
DELEGATION_DEPTH = "psych.delegation.depth"
CHILD_RUN_ID = "psych.subagent.child_run_id"
CHILD_TERMINAL_STATE = "psych.subagent.terminal_state"
COMPACTION_REASON = "psych.compaction.reason"
COMPACTION_TO_SEQ = "psych.compaction.replaced_to_seq"

# --- span names (fixed) and name templates ---------------------------------------------

DISPATCH = "psych.dispatch"
RUN = "psych.run"
ATTEMPT = "psych.attempt"
TURN = "psych.turn"
STEP = "psych.step"
CHAT = "chat"
EXECUTE_TOOL = "execute_tool"
INVOKE_AGENT = "invoke_agent"
MODEL_CALL_NAME = "{gen_ai.operation.name} {gen_ai.request.model}"
TOOL_CALL_NAME = "execute_tool {gen_ai.tool.name}"
DELEGATION_NAME = "invoke_agent {gen_ai.agent.name}"

# --- rule keys -------------------------------------------------------------------------

K_DISPATCH = "dispatch"
K_RUN = "run"
K_ATTEMPT = "attempt"
K_TURN = "turn"
K_MODEL_CALL = "model_call"
K_TOOL_CALL = "tool_call"
K_STEP = "step"
K_DELEGATION = "delegation"
K_COMPACTION = "compaction"

# --- metric names ----------------------------------------------------------------------

TOKEN_USAGE = "gen_ai.client.token.usage"
OPERATION_DURATION = "gen_ai.client.operation.duration"
COST = "psych.cost"

OTHER_PROVIDER = "_OTHER"
"""``gen_ai.provider.name`` when the model client does not say which provider it
reaches (see ``psych_runtime.telemetry.providers``)."""

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
        key: the rule's stable identifier, used in ``parents`` and as its key in
            ``TelemetrySchema.spans``.
        name: the span name, or its template: ``{attribute}`` stands for that
            attribute's value (``"execute_tool {gen_ai.tool.name}"``).
        kind: internal, client for work that leaves the process, producer for a
            hand-over to another process.
        parents: the keys of the spans it may sit under; ``ROOT`` allows no parent
            (or one outside the schema, such as a consumer's own span).
        start: attributes set when the span opens.
        end: attributes set when it closes, all optional.
        error: when the span's status must be ERROR.
        marker: for two rules whose names share a template, the attribute only this
            one carries (a compaction's ``psych.compaction.reason``).
        description: what the span covers.
    """

    key: str
    name: str
    kind: SpanKind
    parents: tuple[str, ...]
    start: tuple[AttributeRule, ...]
    end: tuple[AttributeRule, ...] = ()
    error: ErrorRule | None = None
    marker: str | None = None
    description: str = ""

    def attribute(self, name: str) -> AttributeRule | None:
        """The rule for ``name``, or None when the schema does not declare it here."""
        for rule in (*self.start, *self.end):
            if rule.name == name:
                return rule
        return None

    @property
    def templated(self) -> bool:
        """Whether the span's name carries attribute values."""
        return "{" in self.name

    @property
    def operation(self) -> str | None:
        """The ``gen_ai.operation.name`` this span carries, when it carries exactly one."""
        rule = self.attribute(GEN_AI_OPERATION)
        if rule is None or rule.values is None or len(rule.values) != 1:
            return None
        return next(iter(rule.values))

    def render(self, attributes: Mapping[str, object]) -> str | None:
        """The name a span with ``attributes`` must have; None when one is missing."""
        if not self.templated:
            return self.name
        rendered = self.name
        for rule in self.start:
            slot = "{" + rule.name + "}"
            if slot in rendered:
                value = attributes.get(rule.name)
                if value is None:
                    return None
                rendered = rendered.replace(slot, str(value))
        return rendered


@dataclass(frozen=True, slots=True)
class MetricRule:
    """One metric the runtime records.

    Attributes:
        name: the instrument's name.
        instrument: always a histogram for now.
        unit: the UCUM unit.
        description: what one measurement is.
        attributes: the attributes every measurement carries.
        optional: attributes a measurement may carry besides (``error.type`` on the
            duration of a failed call).
    """

    name: str
    unit: str
    description: str
    attributes: tuple[str, ...]
    optional: tuple[str, ...] = ()
    instrument: Literal["histogram"] = "histogram"


@dataclass(frozen=True, slots=True)
class TelemetrySchema:
    """Every span and metric of one schema version."""

    version: int
    spans: Mapping[str, SpanRule] = field(default_factory=dict)
    metrics: Mapping[str, MetricRule] = field(default_factory=dict)

    def rule_for(self, name: str, attributes: Mapping[str, object]) -> SpanRule | None:
        """The rule a span called ``name`` with ``attributes`` answers to, if any.

        A fixed name picks its rule; otherwise the span's ``gen_ai.operation.name``
        picks among the templated rules, a rule whose ``marker`` the span carries
        winning over one without.
        """
        for rule in self.spans.values():
            if not rule.templated and rule.name == name:
                return rule
        operation = attributes.get(GEN_AI_OPERATION)
        if operation is None:
            return None
        found: SpanRule | None = None
        for rule in self.spans.values():
            if not rule.templated or rule.operation != operation:
                continue
            if rule.marker is not None:
                if rule.marker in attributes:
                    return rule
            elif found is None:
                found = rule
        return found


def _schema(version: int, spans: list[SpanRule], metrics: list[MetricRule]) -> TelemetrySchema:
    return TelemetrySchema(
        version=version,
        spans=MappingProxyType({rule.key: rule for rule in spans}),
        metrics=MappingProxyType({rule.name: rule for rule in metrics}),
    )


_RECOVERED = _optional(RECOVERED, "bool")
"""On a span a later Attempt rebuilt from the log, because the process that opened it
ended without closing it (SIGKILL, a crash)."""

_USAGE = (
    _optional(GEN_AI_INPUT_TOKENS, "int"),
    _optional(GEN_AI_OUTPUT_TOKENS, "int"),
    _optional(GEN_AI_CACHE_READ_TOKENS, "int"),
    _optional(GEN_AI_CACHE_CREATION_TOKENS, "int"),
    _optional(COST_AMOUNT, "float"),
    _optional(COST_CURRENCY, "string"),
    _optional(ERROR_TYPE, "string"),
)

_CHAT_START = (
    AttributeRule(GEN_AI_OPERATION, "string", values=frozenset({CHAT})),
    AttributeRule(GEN_AI_REQUEST_MODEL, "string"),
    AttributeRule(GEN_AI_PROVIDER, "string"),
    AttributeRule(RUN_ID, "string"),
)

PSYCH_SCHEMA = _schema(
    2,
    [
        SpanRule(
            K_DISPATCH,
            DISPATCH,
            "producer",
            parents=(ROOT,),
            start=(
                AttributeRule(RUN_ID, "string"),
                AttributeRule(TENANT, "string"),
                AttributeRule(VERSION_HASH, "string"),
            ),
            description="The admission of a Run dispatched with no span active: the root "
            "of the trace every Attempt of the Run joins, in whichever process.",
        ),
        SpanRule(
            K_RUN,
            RUN,
            "internal",
            parents=(ROOT, K_DISPATCH, K_DELEGATION, K_STEP, K_TOOL_CALL),
            start=(
                AttributeRule(RUN_ID, "string"),
                AttributeRule(TENANT, "string"),
                AttributeRule(VERSION_HASH, "string"),
                _optional(PARENT_RUN_ID, "string"),
                _optional(DELEGATION_DEPTH, "int"),
            ),
            end=(_optional(TERMINAL_STATE, "string", _TERMINAL_STATES), _RECOVERED),
            error=ErrorRule(TERMINAL_STATE, _FAILED_STATES, only_implies=True),
            description="One Run's stay in one process: from the claim (or the inline "
            "start of a child) to the end of its Attempt.",
        ),
        SpanRule(
            K_ATTEMPT,
            ATTEMPT,
            "internal",
            parents=(K_RUN,),
            start=(
                AttributeRule(RUN_ID, "string"),
                AttributeRule(WORKER_ID, "string"),
                AttributeRule(ATTEMPT_NUMBER, "int"),
                AttributeRule(RECLAIMED, "bool"),
            ),
            end=(_RECOVERED,),
            description="One execution pass under a lease; ERROR when it raised, was "
            "abandoned (its process died: the next Attempt tells it from the log) or was "
            "settled by force.",
        ),
        SpanRule(
            K_TURN,
            TURN,
            "internal",
            parents=(K_ATTEMPT,),
            start=(
                AttributeRule(RUN_ID, "string"),
                AttributeRule(TURN_NUMBER, "int"),
                _optional(STEP_ID, "string"),
            ),
            end=(_RECOVERED,),
            description="One turn of the agent loop: a model call and the tools it asked for; "
            "ERROR when the model call failed for good.",
        ),
        SpanRule(
            K_MODEL_CALL,
            MODEL_CALL_NAME,
            "client",
            parents=(K_TURN,),
            start=(*_CHAT_START, AttributeRule(TURN_NUMBER, "int")),
            end=(
                _optional(GEN_AI_RESPONSE_MODEL, "string"),
                _optional(GEN_AI_FINISH_REASONS, "string[]"),
                _optional(GEN_AI_TIME_TO_FIRST_CHUNK, "float"),
                *_USAGE,
                _RECOVERED,
            ),
            error=ErrorRule(ERROR_TYPE),
            description="One request to the model; ERROR when it failed (retried or not).",
        ),
        SpanRule(
            K_TOOL_CALL,
            TOOL_CALL_NAME,
            "internal",
            parents=(K_TURN, K_STEP),
            start=(
                AttributeRule(GEN_AI_OPERATION, "string", values=frozenset({EXECUTE_TOOL})),
                AttributeRule(GEN_AI_TOOL_NAME, "string"),
                AttributeRule(GEN_AI_TOOL_CALL_ID, "string"),
                AttributeRule(RUN_ID, "string"),
                AttributeRule(TOOL_INTERRUPTIBLE, "bool"),
                AttributeRule(TURN_NUMBER, "int"),
            ),
            end=(
                _optional(TOOL_OUTCOME, "string", frozenset({"ok", "error", "aborted", "unknown"})),
                _optional(ERROR_TYPE, "string"),
                _RECOVERED,
            ),
            error=ErrorRule(TOOL_OUTCOME, frozenset({"error", "unknown"})),
            description="One tool call, from its durable start to its finish; ERROR when it "
            "failed or its outcome is unknown (its Attempt vanished while it ran).",
        ),
        SpanRule(
            K_STEP,
            STEP,
            "internal",
            parents=(K_ATTEMPT, K_STEP),
            start=(
                AttributeRule(RUN_ID, "string"),
                AttributeRule(STEP_ID, "string"),
                AttributeRule(STEP_NAME, "string"),
                AttributeRule(
                    STEP_KIND,
                    "string",
                    # Every workflow step kind, and the step a delegated subagent runs as.
                    values=frozenset({*STEP_KINDS, "subagent"}),
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
                _RECOVERED,
            ),
            error=ErrorRule(STEP_OUTCOME, frozenset({"failed"})),
            description="One attempt of one workflow step.",
        ),
        SpanRule(
            K_DELEGATION,
            DELEGATION_NAME,
            "internal",
            parents=(K_TOOL_CALL,),
            start=(
                AttributeRule(GEN_AI_OPERATION, "string", values=frozenset({INVOKE_AGENT})),
                AttributeRule(GEN_AI_AGENT_NAME, "string"),
                _optional(GEN_AI_PROVIDER, "string"),
                AttributeRule(RUN_ID, "string"),
                AttributeRule(DELEGATION_DEPTH, "int"),
                AttributeRule(CHILD_RUN_ID, "string"),
            ),
            end=(_optional(CHILD_TERMINAL_STATE, "string", _TERMINAL_STATES), _RECOVERED),
            error=ErrorRule(CHILD_TERMINAL_STATE, _FAILED_STATES),
            description="Handing work to a child Run (in this process): the child's own "
            "psych.run sits under it when the child runs inline.",
        ),
        SpanRule(
            K_COMPACTION,
            MODEL_CALL_NAME,
            "client",
            parents=(K_ATTEMPT, K_TURN),
            start=(
                *_CHAT_START,
                AttributeRule(COMPACTION_REASON, "string"),
                AttributeRule(COMPACTION_TO_SEQ, "int"),
            ),
            end=_USAGE,
            error=ErrorRule(ERROR_TYPE),
            marker=COMPACTION_REASON,
            description="The model call that summarises the oldest turns; ERROR when it "
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
            optional=(ERROR_TYPE,),
        ),
        MetricRule(
            COST,
            "{currency}",
            "What one priced model call cost, in psych.cost.currency; unpriced calls "
            "are not measured.",
            (GEN_AI_PROVIDER, GEN_AI_REQUEST_MODEL, COST_CURRENCY),
        ),
    ],
)
"""Schema version 2."""


__all__ = [
    "OTHER_PROVIDER",
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
