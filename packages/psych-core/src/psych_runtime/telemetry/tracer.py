"""``RunTracer``: the spans and metrics of one Run in one process, read off its records.

Every record an Attempt stages already says what just happened (a turn opened, a model
answered, a tool finished, a step ended), so the tracer watches the Journal's records
and opens and closes spans from them. The agent loop and the workflow engine need no
tracing calls of their own; only compaction tells the tracer when it starts, because
its record is written after the call.

A process that dies (SIGKILL, a crash) never ends the spans it had open, so no
exporter ever sees them. The next Attempt, in whatever process, tells that part of the
story from the log instead: when the previous Attempt ended with no record saying how
(no settlement, no suspension), the tracer replays that Attempt's records, and opens,
with the times the log gives, exactly the spans that were still open when it stopped:
its ``psych.run`` and ``psych.attempt`` (ended ERROR, as abandoned), the turn and the
model call in flight, and every tool call it left in doubt. Each is marked
``psych.recovered``. The calls stay open until the new Attempt settles them (closed
``unknown`` as orphaned, or run again), so their spans end with the outcome the log
records; the rest end as soon as the leftovers are settled.

Every call into the adapter is guarded: an exception is logged once per tracer and
swallowed, so a broken exporter or span processor never fails a Run.
"""

import logging
import time
from collections.abc import Callable
from collections.abc import Sequence
from datetime import datetime
from typing import TypeVar

from psych_runtime.core.ids import StepId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import Usage
from psych_runtime.core.records import AttemptStarted
from psych_runtime.core.records import CompactionApplied
from psych_runtime.core.records import CompactionReason
from psych_runtime.core.records import ModelCallFailed
from psych_runtime.core.records import ModelCallFinished
from psych_runtime.core.records import ModelCallStarted
from psych_runtime.core.records import Record
from psych_runtime.core.records import RunSettled
from psych_runtime.core.records import StepCompleted
from psych_runtime.core.records import StepStarted
from psych_runtime.core.records import SubagentFinished
from psych_runtime.core.records import SubagentSpawned
from psych_runtime.core.records import Suspended
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolCallFinished
from psych_runtime.core.records import ToolCallStarted
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.records import TurnStarted
from psych_runtime.core.state import RunStateView
from psych_runtime.telemetry import schema as s
from psych_runtime.telemetry.port import NO_SPAN
from psych_runtime.telemetry.port import Attributes
from psych_runtime.telemetry.port import AttributeValue
from psych_runtime.telemetry.port import Carrier
from psych_runtime.telemetry.port import Telemetry
from psych_runtime.telemetry.port import TelemetrySpan
from psych_runtime.telemetry.providers import provider_resolver
from psych_runtime.telemetry.schema import SpanKind

log = logging.getLogger(__name__)

T = TypeVar("T")

_FAILED = frozenset({TerminalState.FAILED, TerminalState.FORCE_SETTLED})
_IN_DOUBT = frozenset({ToolOutcome.ERROR, ToolOutcome.UNKNOWN})

Provider = Callable[[str], str]
"""Gives ``gen_ai.provider.name`` for a model id (see ``telemetry.providers``)."""


def _no_provider(model: str) -> str:
    return s.OTHER_PROVIDER


def _usage_attributes(usage: Usage, cost: Cost | None) -> dict[str, int | float | str]:
    attributes: dict[str, int | float | str] = {
        # The conventions count cached input as input, and name the cached part apart.
        s.GEN_AI_INPUT_TOKENS: usage.input + usage.cache_read + usage.cache_write,
        s.GEN_AI_OUTPUT_TOKENS: usage.output,
        s.GEN_AI_CACHE_READ_TOKENS: usage.cache_read,
        s.GEN_AI_CACHE_CREATION_TOKENS: usage.cache_write,
    }
    if cost is not None:
        attributes[s.COST_AMOUNT] = float(cost.amount)
        attributes[s.COST_CURRENCY] = cost.currency
    return attributes


class RunTracer:
    """Turns one Run's records into spans while one process works on it.

    Opening the tracer opens the Run's ``psych.run`` span; ``close`` ends whatever is
    still open. The tracer is attached to a Journal (``journal.observer``), which
    hands it every record it stages.

    Args:
        telemetry: the adapter (an enabled one; the caller checks).
        state: the Run's fold when the process takes it up.
        parent: the span a nested child Run sits under (a step or a delegation).
        carrier: the W3C trace context the Run was admitted with, for a Run claimed
            from the store.
        provider: gives ``gen_ai.provider.name`` for a model id; None reports every
            model call as ``_OTHER``.
        history: the Run's log as the process found it, for a Run claimed from the
            store: when its last Attempt ended without a record saying so, that
            Attempt's open spans are rebuilt from it (see the module docstring).
    """

    __slots__ = (
        "_attempt",
        "_children",
        "_closed",
        "_compaction",
        "_delegations",
        "_failed_once",
        "_model",
        "_model_attributes",
        "_model_started",
        "_provider",
        "_recovery",
        "_run",
        "_run_id",
        "_steps",
        "_telemetry",
        "_tools",
        "_turn",
        "_turn_number",
    )

    def __init__(
        self,
        telemetry: Telemetry,
        state: RunStateView,
        *,
        parent: TelemetrySpan | None = None,
        carrier: Carrier | None = None,
        provider: Provider | None = None,
        history: Sequence[Record] = (),
    ) -> None:
        self._telemetry = telemetry
        self._run_id = str(state.run_id)
        self._provider: Provider = provider if provider is not None else _no_provider
        self._failed_once = False
        self._closed = False
        self._attempt: TelemetrySpan | None = None
        self._turn: TelemetrySpan | None = None
        self._turn_number = 0
        self._model: TelemetrySpan | None = None
        self._model_started = 0.0
        self._model_attributes: dict[str, str] = {}
        self._compaction: TelemetrySpan | None = None
        self._tools: dict[ToolCallId, TelemetrySpan] = {}
        self._steps: dict[StepId, TelemetrySpan] = {}
        self._delegations: dict[ToolCallId, TelemetrySpan] = {}
        self._children: dict[str, ToolCallId] = {}
        self._recovery: _Recovery | None = None
        if history:
            self._recovery = self._guard(lambda: _Recovery.of(self, state, carrier, history))
        attributes: dict[str, str | int] = {
            s.RUN_ID: self._run_id,
            s.TENANT: state.scope.tenant,
            s.VERSION_HASH: str(state.version_hash or ""),
        }
        if state.parent_run_id is not None:
            attributes[s.PARENT_RUN_ID] = str(state.parent_run_id)
            attributes[s.DELEGATION_DEPTH] = state.delegation_depth
        self._run = self._guard(
            lambda: telemetry.start_span(s.RUN, attributes, parent=parent, carrier=carrier)
        )

    @classmethod
    def for_attempt(
        cls, telemetry: Telemetry, records: Sequence[Record], state: RunStateView, model: object
    ) -> "RunTracer":
        """The tracer of an Attempt a Worker starts on a Run it claimed.

        Args:
            telemetry: the Worker's adapter.
            records: the Run's log as the Worker read it.
            state: its fold.
            model: the model client the Attempt calls (for ``gen_ai.provider.name``).
        """
        return cls(
            telemetry,
            state,
            carrier=state.trace_context or None,
            provider=provider_resolver(model),
            history=records,
        )

    # --- guarded adapter calls ----------------------------------------------------------

    def _guard(self, call: Callable[[], T]) -> T | None:
        try:
            return call()
        except Exception:
            self._note_failure()
            return None

    def _note_failure(self) -> None:
        """Log the first telemetry failure of this Run (with its traceback), then stay quiet."""
        if not self._failed_once:
            self._failed_once = True
            log.warning(
                "run %s: telemetry failed; the run goes on without it",
                self._run_id,
                exc_info=True,
            )

    def _start(
        self,
        name: str,
        attributes: Attributes,
        parent: TelemetrySpan | None,
        kind: SpanKind = "internal",
    ) -> TelemetrySpan | None:
        return self._guard(
            lambda: self._telemetry.start_span(name, attributes, parent=parent, kind=kind)
        )

    def _end(
        self,
        span: TelemetrySpan | None,
        attributes: Attributes | None = None,
        error: str | None = None,
    ) -> None:
        if span is None:
            return

        def end() -> None:
            if attributes:
                span.set_attributes(attributes)
            span.end(error=error)

        self._guard(end)

    def _record(self, metric: str, value: float, attributes: Attributes) -> None:
        self._guard(lambda: self._telemetry.record(metric, value, attributes))

    # --- what the rest of the runtime asks ------------------------------------------------

    def parent_for(
        self, *, call_id: ToolCallId | None = None, step_id: StepId | None = None
    ) -> TelemetrySpan | None:
        """The span a child Run started by this call or step belongs under."""
        if call_id is not None:
            return self._delegations.get(call_id) or self._tools.get(call_id)
        if step_id is not None:
            return self._steps.get(step_id)
        return self._attempt or self._run

    def child(
        self,
        state: RunStateView,
        *,
        call_id: ToolCallId | None = None,
        step_id: StepId | None = None,
    ) -> "RunTracer":
        """A tracer for a child Run this process drives inline, under its call or step."""
        return RunTracer(
            self._telemetry,
            state,
            parent=self.parent_for(call_id=call_id, step_id=step_id),
            provider=self._provider,
        )

    def carrier(self, *, call_id: ToolCallId | None = None) -> dict[str, str]:
        """The trace context a child Run admitted for ``call_id`` should carry."""
        span = self.parent_for(call_id=call_id)
        if span is None:
            return {}
        found = self._guard(span.carrier)
        return found if found is not None else {}

    def _chat(self, model: str) -> dict[str, str]:
        """The attributes every span and measurement of a model call carries."""
        return {
            s.GEN_AI_OPERATION: s.CHAT,
            s.GEN_AI_PROVIDER: self._provider(model),
            s.GEN_AI_REQUEST_MODEL: model,
        }

    def compaction_started(self, reason: CompactionReason, model: str, to_seq: int) -> None:
        """Open the compaction's ``chat`` span; its record (or the failure) closes it."""
        attributes: dict[str, str | int] = {
            **self._chat(model),
            s.RUN_ID: self._run_id,
            s.COMPACTION_REASON: str(reason),
            s.COMPACTION_TO_SEQ: to_seq,
        }
        self._end(self._compaction, {s.ERROR_TYPE: "superseded"}, "superseded")
        if reason is not CompactionReason.OVERFLOW:
            # Between turns: the previous turn is over. An overflow is summarised inside
            # the turn whose request did not fit, so that turn stays its parent.
            self._end_turn(None)
        self._compaction = self._start(
            f"{s.CHAT} {model}", attributes, self._turn or self._attempt, "client"
        )

    # --- records ------------------------------------------------------------------------

    def on_record(self, record: Record) -> None:
        """Open or close the spans ``record`` says opened or closed."""
        if self._closed:
            return
        try:
            recovery = self._recovery
            if recovery is not None:
                taken = recovery.takes(record)
                if recovery.done:
                    self._recovery = None
                if taken:
                    return
            self._dispatch(record)
        except Exception:
            self._note_failure()

    def _dispatch(self, record: Record) -> None:
        match record:
            case AttemptStarted():
                self._end_attempt(None)
                self._attempt = self._start(
                    s.ATTEMPT,
                    {
                        s.RUN_ID: self._run_id,
                        s.WORKER_ID: str(record.worker_id),
                        s.ATTEMPT_NUMBER: record.attempt_number,
                        s.RECLAIMED: record.reclaimed_expired_lease,
                    },
                    self._run,
                )
            case TurnStarted():
                self._end_turn(None)
                self._turn_number = record.turn
                attributes: dict[str, str | int] = {
                    s.RUN_ID: self._run_id,
                    s.TURN_NUMBER: record.turn,
                }
                if record.step_id is not None:
                    attributes[s.STEP_ID] = str(record.step_id)
                self._turn = self._start(s.TURN, attributes, self._attempt)
            case ModelCallStarted():
                self._model_started = time.perf_counter()
                self._model_attributes = self._chat(record.model)
                self._model = self._start(
                    f"{s.CHAT} {record.model}",
                    {
                        **self._model_attributes,
                        s.RUN_ID: self._run_id,
                        s.TURN_NUMBER: record.turn,
                    },
                    self._turn,
                    "client",
                )
            case ModelCallFinished():
                self._model_finished(record)
            case ModelCallFailed():
                self._model_failed(record)
            case ToolCallStarted():
                self._tools[record.call_id] = (
                    self._start(
                        f"{s.EXECUTE_TOOL} {record.tool}",
                        {
                            s.GEN_AI_OPERATION: s.EXECUTE_TOOL,
                            s.GEN_AI_TOOL_NAME: record.tool,
                            s.GEN_AI_TOOL_CALL_ID: str(record.call_id),
                            s.RUN_ID: self._run_id,
                            s.TOOL_INTERRUPTIBLE: record.interruptible,
                            s.TURN_NUMBER: record.turn,
                        },
                        self._steps.get(record.step_id) if record.step_id else self._turn,
                    )
                    or NO_SPAN
                )
            case ToolCallFinished():
                self._tool_finished(record)
            case StepStarted():
                parent = self._steps.get(record.parent_step_id) if record.parent_step_id else None
                self._end(self._steps.pop(record.step_id, None), {s.STEP_OUTCOME: "aborted"})
                self._steps[record.step_id] = (
                    self._start(
                        s.STEP,
                        {
                            s.RUN_ID: self._run_id,
                            s.STEP_ID: str(record.step_id),
                            s.STEP_NAME: record.name,
                            s.STEP_KIND: record.kind,
                            s.STEP_ATTEMPT: record.attempt_number,
                        },
                        parent or self._attempt,
                    )
                    or NO_SPAN
                )
            case StepCompleted():
                self._step_completed(record)
            case SubagentSpawned():
                attributes = {
                    s.GEN_AI_OPERATION: s.INVOKE_AGENT,
                    s.GEN_AI_AGENT_NAME: record.name,
                    s.RUN_ID: self._run_id,
                    s.DELEGATION_DEPTH: record.delegation_depth,
                    s.CHILD_RUN_ID: str(record.child_run_id),
                }
                if record.model:
                    attributes[s.GEN_AI_PROVIDER] = self._provider(record.model)
                self._delegations[record.call_id] = (
                    self._start(
                        f"{s.INVOKE_AGENT} {record.name}",
                        attributes,
                        self._tools.get(record.call_id),
                    )
                    or NO_SPAN
                )
                self._children[str(record.child_run_id)] = record.call_id
            case SubagentFinished():
                self._delegation_finished(record)
            case CompactionApplied():
                self._end(self._compaction, _usage_attributes(record.usage, record.cost))
                self._compaction = None
            case Suspended():
                if record.step_id is not None:
                    self._end(self._steps.pop(record.step_id, None), {s.STEP_OUTCOME: "suspended"})
                self._end_turn(None)
            case RunSettled():
                self._settled(record)
            case _:
                pass

    def _model_finished(self, record: ModelCallFinished) -> None:
        attributes: dict[str, AttributeValue] = {
            s.GEN_AI_RESPONSE_MODEL: record.model,
            s.GEN_AI_FINISH_REASONS: [record.finish_reason],
            **_usage_attributes(record.usage, record.cost),
        }
        if record.timings.time_to_first_token_seconds is not None:
            attributes[s.GEN_AI_TIME_TO_FIRST_CHUNK] = record.timings.time_to_first_token_seconds
        self._end(self._model, attributes)
        self._model = None
        measured = self._model_attributes or self._chat(record.model)
        if self._model_started:
            self._record(s.OPERATION_DURATION, time.perf_counter() - self._model_started, measured)
        if record.usage_reported:
            usage = record.usage
            tokens_in = usage.input + usage.cache_read + usage.cache_write
            self._record(s.TOKEN_USAGE, tokens_in, {**measured, s.GEN_AI_TOKEN_TYPE: "input"})
            self._record(s.TOKEN_USAGE, usage.output, {**measured, s.GEN_AI_TOKEN_TYPE: "output"})
        if record.cost is not None:
            self._record(
                s.COST,
                float(record.cost.amount),
                {
                    s.GEN_AI_PROVIDER: measured[s.GEN_AI_PROVIDER],
                    s.GEN_AI_REQUEST_MODEL: measured[s.GEN_AI_REQUEST_MODEL],
                    s.COST_CURRENCY: record.cost.currency,
                },
            )
        self._model_started = 0.0

    def _model_failed(self, record: ModelCallFailed) -> None:
        kind = record.failure.kind
        self._end(self._model, {s.ERROR_TYPE: kind}, record.failure.message)
        self._model = None
        if self._model_started:
            measured = self._model_attributes or self._chat(record.model)
            self._record(
                s.OPERATION_DURATION,
                time.perf_counter() - self._model_started,
                {**measured, s.ERROR_TYPE: kind},
            )
        self._model_started = 0.0
        if not record.will_retry:
            self._end_turn(f"the model call failed: {record.failure.message}")

    def _tool_finished(self, record: ToolCallFinished) -> None:
        span = self._tools.pop(record.call_id, None)
        attributes: dict[str, str] = {s.TOOL_OUTCOME: str(record.outcome)}
        error = None
        if record.failure is not None:
            attributes[s.ERROR_TYPE] = record.failure.kind
        if record.outcome in _IN_DOUBT:
            error = record.failure.message if record.failure is not None else "the tool failed"
        self._end(self._delegations.pop(record.call_id, None))
        self._end(span, attributes, error)

    def _step_completed(self, record: StepCompleted) -> None:
        span = self._steps.pop(record.step_id, None)
        if record.skipped:
            self._end(span, {s.STEP_OUTCOME: "skipped"})
        elif record.failure is not None:
            attributes = {s.STEP_OUTCOME: "failed", s.ERROR_TYPE: record.failure.kind}
            self._end(span, attributes, record.failure.message)
        else:
            self._end(span, {s.STEP_OUTCOME: "succeeded"})

    def _delegation_finished(self, record: SubagentFinished) -> None:
        call_id = self._children.pop(str(record.child_run_id), None)
        span = self._delegations.pop(call_id, None) if call_id is not None else None
        error = None
        if record.state in _FAILED:
            error = record.failure.message if record.failure else str(record.state)
        self._end(span, {s.CHILD_TERMINAL_STATE: str(record.state)}, error)

    def _settled(self, record: RunSettled) -> None:
        failure = record.failure
        if self._compaction is not None and failure is not None:
            self._end(self._compaction, {s.ERROR_TYPE: failure.kind}, failure.message)
            self._compaction = None
        self._end_turn(None)

    def _end_turn(self, error: str | None) -> None:
        if self._model is not None:
            self._end(self._model, {s.ERROR_TYPE: "interrupted"}, "the call did not finish")
            self._model = None
        self._end(self._turn, None, error)
        self._turn = None

    def _end_attempt(self, error: str | None) -> None:
        self._end_turn(None)
        for call_id in list(self._tools):
            self._end(
                self._tools.pop(call_id),
                {s.TOOL_OUTCOME: "unknown", s.ERROR_TYPE: "interrupted"},
                "the attempt ended while the call ran",
            )
        for call_id in list(self._delegations):
            self._end(self._delegations.pop(call_id))
        for step_id in list(self._steps):
            self._end(self._steps.pop(step_id), {s.STEP_OUTCOME: "aborted"})
        if self._compaction is not None:
            self._end(self._compaction, {s.ERROR_TYPE: "interrupted"}, "the call did not finish")
            self._compaction = None
        self._end(self._attempt, None, error)
        self._attempt = None

    @property
    def _open_work(self) -> bool:
        """Whether a call, step or delegation is still open here."""
        return bool(self._tools or self._steps or self._delegations)

    def close(self, state: RunStateView | None, *, error: str | None = None) -> None:
        """End every span still open; the Run span takes the Run's ending from ``state``.

        Args:
            state: the Run's fold as this process leaves it (None when unknown).
            error: why the Attempt ended abnormally (an exception, a lost lease, a
                forced settlement), or None when it ended in order.
        """
        if self._closed:
            return
        if self._recovery is not None:
            self._recovery.end()
            self._recovery = None
        self._closed = True
        self._end_attempt(error)
        attributes: dict[str, str] = {}
        run_error = None
        if state is not None and state.terminal_state is not None:
            attributes[s.TERMINAL_STATE] = str(state.terminal_state)
            if state.terminal_state in _FAILED:
                reason = state.failure.message if state.failure else str(state.terminal_state)
                run_error = reason
        self._end(self._run, attributes, run_error or error)


# --- an abandoned Attempt, told from the log ---------------------------------------------


def _abandoned(history: Sequence[Record]) -> Sequence[Record]:
    """The records of the log's last Attempt when it ended with no record saying so.

    Empty when there was no Attempt yet, when the Run is settled, or when the Attempt
    ended by suspending the Run (the orderly way an Attempt stops short).
    """
    for index in range(len(history) - 1, -1, -1):
        if isinstance(history[index], AttemptStarted):
            break
    else:
        return ()
    tail = history[index:]
    attempt_id = tail[0].attempt_id
    last_own: Record = tail[0]
    for record in tail:
        if isinstance(record, RunSettled):
            return ()
        if record.attempt_id == attempt_id:
            last_own = record
    return () if isinstance(last_own, Suspended) else tail


class _Recovery:
    """The spans an abandoned Attempt left open, opened again from its records.

    The previous Attempt's records are replayed through a tracer of their own over
    ``_Deferred`` telemetry, which opens nothing: it only notes each span with the
    time of the record that opened it. What the replay leaves open is exactly what
    was open when the Attempt's process stopped; those spans are then opened through
    the real adapter, backdated. The replaying tracer keeps holding them, so the new
    Attempt's finishes of the calls in doubt close them with their real outcome.
    """

    __slots__ = ("_ending", "_tracer")

    def __init__(self, tracer: RunTracer, ending: str) -> None:
        self._tracer = tracer
        self._ending = ending

    @classmethod
    def of(
        cls,
        owner: RunTracer,
        state: RunStateView,
        carrier: Carrier | None,
        history: Sequence[Record],
    ) -> "_Recovery | None":
        """The recovery of the log's abandoned Attempt, or None when there is none."""
        tail = _abandoned(history)
        if not tail:
            return None
        started = tail[0]
        assert isinstance(started, AttemptStarted)
        deferred = _Deferred(started.at)
        replay = RunTracer(deferred, state, carrier=carrier, provider=owner._provider)
        for record in tail:
            deferred.clock = record.at
            replay.on_record(record)
        replay._telemetry = owner._telemetry
        deferred.open_for_real(owner._telemetry)
        ending = (
            f"worker {started.worker_id} stopped before attempt {started.attempt_number} ended "
            "(its process died or lost the run); a later attempt took the run over"
        )
        recovery = cls(replay, ending)
        if not replay._open_work:
            recovery.end()
            return None
        return recovery

    def takes(self, record: Record) -> bool:
        """Whether ``record`` settles what the abandoned Attempt left open.

        Such a record is passed to the replaying tracer. A record of the new Attempt's
        own work (a turn, a model or tool call, a step, a delegation, the Run's
        suspension or ending) means it has moved on: whatever is left is ended then.
        """
        tracer = self._tracer
        match record:
            case ToolCallFinished() if record.call_id in tracer._tools:
                pass
            case StepCompleted() if record.step_id in tracer._steps:
                pass
            case SubagentFinished() if str(record.child_run_id) in tracer._children:
                pass
            case (
                TurnStarted()
                | ModelCallStarted()
                | ToolCallStarted()
                | StepStarted()
                | SubagentSpawned()
                | Suspended()
                | RunSettled()
            ):
                self.end()
                return False
            case _:
                return False
        tracer.on_record(record)
        if not tracer._open_work:
            self.end()
        return True

    @property
    def done(self) -> bool:
        """Whether every recovered span has ended."""
        return self._tracer._closed

    def end(self) -> None:
        """End every recovered span still open; the Attempt and its Run as ERROR."""
        self._tracer.close(None, error=self._ending)


class _Pending:
    """A span ``_Deferred`` noted; opened for real later if it is still open then."""

    __slots__ = ("attributes", "carrier_in", "ended", "kind", "name", "parent", "real", "start")

    def __init__(
        self,
        name: str,
        attributes: Attributes,
        parent: TelemetrySpan | None,
        carrier_in: Carrier | None,
        kind: SpanKind,
        start: datetime,
    ) -> None:
        self.name = name
        self.attributes: dict[str, AttributeValue] = dict(attributes)
        self.parent = parent
        self.carrier_in = carrier_in
        self.kind: SpanKind = kind
        self.start = start
        self.ended = False
        self.real: TelemetrySpan | None = None

    def set_attributes(self, attributes: Attributes) -> None:
        """Keep them, or hand them to the real span once there is one."""
        if self.real is not None:
            self.real.set_attributes(attributes)
        else:
            self.attributes.update(attributes)

    def end(self, *, error: str | None = None) -> None:
        """Before it is opened for real: it ended in the replay, so it is never opened."""
        if self.real is not None:
            self.real.end(error=error)
        else:
            self.ended = True

    def carrier(self) -> dict[str, str]:
        """The real span's context, once there is one."""
        return self.real.carrier() if self.real is not None else {}


class _Deferred:
    """A Telemetry that opens nothing and keeps the spans asked for, in order."""

    __slots__ = ("clock", "spans")

    enabled = True

    def __init__(self, clock: datetime) -> None:
        self.clock = clock
        self.spans: list[_Pending] = []

    def start_span(
        self,
        name: str,
        attributes: Attributes,
        *,
        parent: TelemetrySpan | None = None,
        carrier: Carrier | None = None,
        kind: SpanKind = "internal",
        start_time: datetime | None = None,
    ) -> TelemetrySpan:
        """Note the span, started at the time of the record being replayed."""
        pending = _Pending(name, attributes, parent, carrier, kind, start_time or self.clock)
        self.spans.append(pending)
        return pending

    def current_carrier(self) -> dict[str, str]:
        """No span is active in a replay."""
        return {}

    def record(self, metric: str, value: float, attributes: Attributes) -> None:
        """A replay measures nothing: the measurements were the dead process's."""

    def open_for_real(self, telemetry: Telemetry) -> None:
        """Open, backdated and marked recovered, every noted span that is still open.

        Parents come before their children in ``spans``, so each parent is open by the
        time its children are; a span whose parent could not be opened is dropped.
        """
        for pending in self.spans:
            if pending.ended:
                continue
            parent = pending.parent
            real_parent = parent.real if isinstance(parent, _Pending) else parent
            if parent is not None and real_parent is None:
                pending.ended = True
                continue
            try:
                pending.real = telemetry.start_span(
                    pending.name,
                    {**pending.attributes, s.RECOVERED: True},
                    parent=real_parent,
                    carrier=pending.carrier_in if parent is None else None,
                    kind=pending.kind,
                    start_time=pending.start,
                )
            except Exception:
                log.warning("telemetry could not open a recovered span", exc_info=True)
                pending.ended = True


__all__ = ["RunTracer"]
