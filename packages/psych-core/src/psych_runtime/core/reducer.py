"""The fold from a Run's log to its state.

``reduce`` is the only way state is derived: every read is a projection of it and the
writer runs each record through :func:`fold_into` before appending it, so a record
that contradicts the log is refused before it is ever persisted.

Every record is checked in the same order: that it belongs to this Run and tenant and
sits at the next position, then that the Run has not already settled, then the rules
of its own type. A check that fails raises :class:`CorruptLog`; each handler below runs
all of its checks before it changes anything, so a refused record leaves the state as
it was.
"""

from collections.abc import Iterable
from dataclasses import replace

from psych_runtime.core.corruption import CorruptionReason
from psych_runtime.core.corruption import CorruptLog
from psych_runtime.core.digest import answer_digest
from psych_runtime.core.digest import call_digest
from psych_runtime.core.ids import EntryId
from psych_runtime.core.ids import RunId
from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import CostSource
from psych_runtime.core.metering import Usage
from psych_runtime.core.records import AbortRequested
from psych_runtime.core.records import AttemptStarted
from psych_runtime.core.records import CompactionApplied
from psych_runtime.core.records import ComponentShown
from psych_runtime.core.records import ModelCallFailed
from psych_runtime.core.records import ModelCallFinished
from psych_runtime.core.records import ModelCallStarted
from psych_runtime.core.records import QueueCancelled
from psych_runtime.core.records import QueueConsumed
from psych_runtime.core.records import QueueEnqueued
from psych_runtime.core.records import QueueKind
from psych_runtime.core.records import Record
from psych_runtime.core.records import Resumed
from psych_runtime.core.records import RunAdmitted
from psych_runtime.core.records import RunSettled
from psych_runtime.core.records import StepCompleted
from psych_runtime.core.records import StepStarted
from psych_runtime.core.records import SubagentFinished
from psych_runtime.core.records import SubagentMessaged
from psych_runtime.core.records import SubagentSpawned
from psych_runtime.core.records import Suspended
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import TaskListUpdated
from psych_runtime.core.records import ToolCallFinished
from psych_runtime.core.records import ToolCallStarted
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.records import TurnStarted
from psych_runtime.core.state import ChildRun
from psych_runtime.core.state import OpenToolCall
from psych_runtime.core.state import PendingQueueEntry
from psych_runtime.core.state import RepeatTally
from psych_runtime.core.state import RunStateView
from psych_runtime.core.state import StepRecord
from psych_runtime.core.state import StepResume
from psych_runtime.core.state import ToolResult
from psych_runtime.core.suspend_reasons import rules

READ_TOOL_OUTPUT = "read_tool_output"
"""The built-in tool that pages through elided results by handle."""

SET_STATE_STEP_KIND = "set_state"
"""The workflow step kind whose output is merged into the workflow's shared state."""

_Reason = CorruptionReason


def reduce(
    records: Iterable[Record],
    *,
    run_id: str | None = None,
    prior: RunStateView | None = None,
) -> RunStateView:
    """Fold records into the state of one Run.

    With ``prior`` the fold continues from an earlier result, so a reader that has
    already folded a log's head only pays for the new tail; the answer is the same
    as folding the whole log at once. ``prior`` itself is never changed.

    Args:
        records: the records, in log order.
        run_id: the Run the records must belong to; defaults to the prior's, or to
            the first record's.
        prior: the state of the log up to the record before the first of ``records``.

    Returns:
        The folded state.

    Raises:
        CorruptLog: when a record contradicts the log before it, or there is nothing
            to fold from (no records and no prior): every Run's log starts with its
            ``run_admitted`` record at seq 1, so an empty one is missing that record
            (``non_consecutive_seq`` at seq 1).
        ValueError: ``run_id`` names a different Run than ``prior``.
    """
    if prior is not None:
        if run_id is not None and run_id != prior.run_id:
            raise ValueError(f"run_id {run_id!r} contradicts the prior state of {prior.run_id!r}")
        state = prior.copy()
        for record in records:
            fold_into(state, record)
        return state

    iterator = iter(records)
    first = next(iterator, None)
    if first is None:
        raise CorruptLog(
            CorruptionReason.NON_CONSECUTIVE_SEQ,
            RunId(run_id or ""),
            1,
            "the log is empty: it must start with run_admitted at seq 1",
        )
    state = RunStateView(
        run_id=first.run_id if run_id is None else RunId(run_id),
        scope=first.scope,
    )
    fold_into(state, first)
    for record in iterator:
        fold_into(state, record)
    return state


def fold_into(state: RunStateView, record: Record) -> None:
    """Apply one record to ``state`` in place.

    This is the writer's fast path: it costs the same whatever the length of the log.
    When it raises, ``state`` is left exactly as it was, so the writer can keep using
    it after refusing the record.

    Raises:
        CorruptLog: when the record contradicts the state.
    """
    if record.run_id != state.run_id:
        raise _corrupt(
            state,
            record,
            _Reason.UNKNOWN_OPERATION,
            f"record belongs to run {record.run_id!r}",
        )
    if record.scope.tenant != state.scope.tenant:
        raise _corrupt(
            state,
            record,
            _Reason.UNKNOWN_OPERATION,
            f"record is stamped for tenant {record.scope.tenant!r}, "
            f"the run belongs to {state.scope.tenant!r}",
        )
    if record.seq != state.head_seq + 1:
        raise _corrupt(
            state,
            record,
            _Reason.NON_CONSECUTIVE_SEQ,
            f"expected seq {state.head_seq + 1}, got {record.seq}",
        )
    if state.settled:
        raise _corrupt(
            state,
            record,
            _Reason.RECORD_AFTER_FINISH,
            f"{record.type} after the run settled at seq {state.head_seq}",
        )
    _apply(state, record)
    state.head_seq = record.seq


def _apply(state: RunStateView, record: Record) -> None:
    # The frequent records come first: a match tries its cases in order.
    match record:
        case ToolCallStarted():
            _tool_call_started(state, record)
        case ToolCallFinished():
            _tool_call_finished(state, record)
        case TurnStarted():
            _turn_started(state, record)
        case ModelCallStarted():
            _model_call_started(state, record)
        case ModelCallFinished():
            _model_call_finished(state, record)
        case ModelCallFailed():
            _model_call_failed(state, record)
        case QueueEnqueued():
            _queue_enqueued(state, record)
        case QueueConsumed():
            _queue_consumed(state, record)
        case QueueCancelled():
            _queue_cancelled(state, record)
        case StepStarted():
            _step_started(state, record)
        case StepCompleted():
            _step_completed(state, record)
        case RunAdmitted():
            _run_admitted(state, record)
        case AttemptStarted():
            _attempt_started(state, record)
        case RunSettled():
            _run_settled(state, record)
        case AbortRequested():
            if state.abort_seq is None:
                state.abort_seq = record.seq
        case Suspended():
            _suspended(state, record)
        case Resumed():
            _resumed(state, record)
        case CompactionApplied():
            _compaction_applied(state, record)
        case TaskListUpdated():
            state.tasks = record.tasks
        case ComponentShown():
            state.components.append(record.component)
        case SubagentSpawned():
            _subagent_spawned(state, record)
        case SubagentMessaged():
            _subagent_messaged(state, record)
        case SubagentFinished():
            _subagent_finished(state, record)


def _corrupt(
    state: RunStateView, record: Record, reason: CorruptionReason, detail: str
) -> CorruptLog:
    return CorruptLog(reason, state.run_id, record.seq, detail)


# --- lifecycle -------------------------------------------------------------------------


def _run_admitted(state: RunStateView, record: RunAdmitted) -> None:
    if state.admitted:
        raise _corrupt(
            state, record, _Reason.MULTIPLE_OPEN_OPERATIONS, "the run was already admitted"
        )
    state.admitted = True
    state.version_hash = record.version_hash
    state.deadline_at = record.deadline_at
    state.parent_run_id = record.parent_run_id
    state.delegation_depth = record.delegation_depth
    state.continues_run_id = record.continues_run_id
    state.idempotency_key = record.idempotency_key
    state.run_input = record.input
    state.replays_run_id = record.replays_run_id
    state.replay_from_step = record.replay_from_step
    state.breakpoints = record.breakpoints
    state.step_mode = record.step_mode
    state.trace_context = record.trace_context


def _attempt_started(state: RunStateView, record: AttemptStarted) -> None:
    if not state.admitted:
        raise _corrupt(
            state, record, _Reason.UNKNOWN_OPERATION, "an attempt started before admission"
        )
    if record.attempt_number != state.attempt_count + 1:
        raise _corrupt(
            state,
            record,
            _Reason.NON_CONSECUTIVE_ATTEMPT,
            f"expected attempt {state.attempt_count + 1}, got {record.attempt_number}",
        )
    state.attempt_count = record.attempt_number
    state.current_attempt = record.attempt_id
    state.turn_open = False
    state.model_call_open = False
    state.resumed_since_attempt = False


def _run_settled(state: RunStateView, record: RunSettled) -> None:
    state.settled = True
    state.terminal_state = record.state
    state.output = record.output
    state.failure = record.failure
    state.turn_open = False
    state.model_call_open = False


# --- turns and model calls -------------------------------------------------------------


def _turn_started(state: RunStateView, record: TurnStarted) -> None:
    if state.turn_open:
        raise _corrupt(
            state,
            record,
            _Reason.MULTIPLE_OPEN_OPERATIONS,
            f"turn {record.turn} started while turn {state.turn} is open",
        )
    if record.turn != state.turn + 1:
        raise _corrupt(
            state,
            record,
            _Reason.NON_CONSECUTIVE_ATTEMPT,
            f"expected turn {state.turn + 1}, got {record.turn}",
        )
    state.turn = record.turn
    state.turn_open = True


def _check_model_turn(
    state: RunStateView, record: ModelCallStarted | ModelCallFinished | ModelCallFailed
) -> None:
    if record.turn != state.turn:
        raise _corrupt(
            state,
            record,
            _Reason.UNKNOWN_OPERATION,
            f"{record.type} names turn {record.turn}, the current turn is {state.turn}",
        )


def _model_call_started(state: RunStateView, record: ModelCallStarted) -> None:
    if not state.turn_open:
        raise _corrupt(
            state, record, _Reason.UNKNOWN_OPERATION, "a model call started outside a turn"
        )
    if state.model_call_open:
        raise _corrupt(
            state,
            record,
            _Reason.MULTIPLE_OPEN_OPERATIONS,
            "a model call started while another is open",
        )
    _check_model_turn(state, record)
    state.model_call_open = True


def _check_model_call_open(
    state: RunStateView, record: ModelCallFinished | ModelCallFailed
) -> None:
    if not state.model_call_open:
        raise _corrupt(
            state, record, _Reason.UNKNOWN_OPERATION, f"{record.type} with no open model call"
        )
    _check_model_turn(state, record)


def _check_currency(state: RunStateView, record: Record, cost: Cost | None) -> None:
    if cost is not None and state.cost is not None and cost.currency != state.cost.currency:
        raise _corrupt(
            state,
            record,
            _Reason.INCONSISTENT_COST,
            f"a cost in {cost.currency} cannot join a total kept in {state.cost.currency}",
        )


def _add_cost(state: RunStateView, cost: Cost) -> None:
    state.cost = cost if state.cost is None else state.cost + cost
    if cost.source is CostSource.PROVIDER:
        state.provider_reported_costs += 1


def _meter(state: RunStateView, usage: Usage, usage_reported: bool, cost: Cost | None) -> None:
    state.usage = state.usage + usage
    if not usage_reported:
        state.unreported_usage_calls += 1
    if cost is None:
        state.unpriced_model_calls += 1
    else:
        _add_cost(state, cost)


def _model_call_finished(state: RunStateView, record: ModelCallFinished) -> None:
    _check_model_call_open(state, record)
    _check_currency(state, record, record.cost)
    state.model_call_open = False
    state.turn_open = False
    state.model_calls += 1
    _meter(state, record.usage, record.usage_reported, record.cost)
    if record.usage_reported:
        state.last_prompt_tokens = record.usage.prompt_tokens


def _model_call_failed(state: RunStateView, record: ModelCallFailed) -> None:
    _check_model_call_open(state, record)
    state.model_call_open = False
    state.turn_open = False
    state.failed_model_calls += 1
    if record.will_retry:
        state.transient_retries_used += 1


def _compaction_applied(state: RunStateView, record: CompactionApplied) -> None:
    if record.replaced_to_seq < record.replaced_from_seq:
        raise _corrupt(
            state,
            record,
            _Reason.INVALID_COMPACTION_REASON,
            f"replaced range {record.replaced_from_seq}..{record.replaced_to_seq} is inverted",
        )
    if record.replaced_to_seq >= record.seq:
        raise _corrupt(
            state,
            record,
            _Reason.INVALID_COMPACTION_REASON,
            f"replaced range ends at {record.replaced_to_seq}, not before the compaction itself",
        )
    _check_currency(state, record, record.cost)
    if record.model:
        _meter(state, record.usage, record.usage_reported, record.cost)
    else:
        # No model wrote the summary (a mechanical trim), so there is no call whose
        # missing usage or price should make the totals look incomplete.
        state.usage = state.usage + record.usage
        if record.cost is not None:
            _add_cost(state, record.cost)
    state.compaction_calls += 1
    state.compaction_boundary_seq = record.replaced_to_seq
    state.compaction_summaries.append(record.summary)


# --- tools -----------------------------------------------------------------------------


def _tool_call_started(state: RunStateView, record: ToolCallStarted) -> None:
    if record.call_id in state.started_call_ids:
        raise _corrupt(
            state,
            record,
            _Reason.DUPLICATE_TOOL_INVOCATION,
            f"tool call {record.call_id!r} was already started",
        )
    expected_turn = max(state.turn, 1)
    if record.turn != expected_turn:
        raise _corrupt(
            state,
            record,
            _Reason.UNKNOWN_OPERATION,
            f"tool call names turn {record.turn}, expected {expected_turn}",
        )
    if record.tool == READ_TOOL_OUTPUT and record.parent_call_id is None:
        # Program-issued reads are checked when they run; a model-issued one must
        # name a handle that an earlier result in this log actually issued.
        handle = record.arguments.get("handle")
        if isinstance(handle, str) and handle not in state.result_handles:
            raise _corrupt(
                state,
                record,
                _Reason.INVALID_DEFERRED_HANDLE,
                f"handle {handle!r} was never issued in this run",
            )
    state.started_call_ids.add(record.call_id)
    state.open_tool_calls[record.call_id] = OpenToolCall(
        call_id=record.call_id,
        tool=record.tool,
        arguments=record.arguments,
        turn=record.turn,
        step_id=record.step_id,
        interruptible=record.interruptible,
        safe_to_retry=record.safe_to_retry,
        started_at=record.at,
        parent_call_id=record.parent_call_id,
    )
    if record.parent_call_id is not None:
        state.program_call_ids.add(record.parent_call_id)
        state.program_binding_call_ids.add(record.call_id)
        state.program_tool_calls += 1


def _tool_call_finished(state: RunStateView, record: ToolCallFinished) -> None:
    call = state.open_tool_calls.get(record.call_id)
    if call is None:
        settled = record.call_id in state.started_call_ids
        raise _corrupt(
            state,
            record,
            _Reason.TOOL_CALL_MISMATCH,
            f"tool call {record.call_id!r} "
            + ("already finished" if settled else "was never started"),
        )
    del state.open_tool_calls[record.call_id]
    state.tool_results.append(
        ToolResult(
            call_id=call.call_id,
            tool=call.tool,
            outcome=record.outcome,
            result=record.result,
            failure=record.failure,
            duration_seconds=record.duration_seconds,
            result_handle=record.result_handle,
            preview=record.preview,
            turn=call.turn,
            blob_key=record.result_blob_key,
            content_type=record.result_content_type,
            attachments=record.attachments,
            step_id=call.step_id,
            parent_call_id=call.parent_call_id,
            result_bytes=record.result_bytes,
        )
    )
    if record.result_handle is not None:
        state.result_handles[record.result_handle] = call.call_id
    for attachment in record.attachments:
        if attachment.readable:
            state.result_handles[attachment.handle] = call.call_id
    if call.parent_call_id is not None:
        spent = state.program_preserved_bytes.get(call.parent_call_id, 0)
        state.program_preserved_bytes[call.parent_call_id] = spent + record.result_bytes

    outcome = record.outcome
    if outcome is ToolOutcome.OK:
        state.failure_streaks.pop(call.tool, None)
        key = call_digest(call.tool, call.arguments)
        answer = answer_digest(record.result, record.result_blob_key)
        tally = state.repeat_counts.get(key)
        count = tally.count + 1 if tally is not None and tally.result_digest == answer else 1
        state.repeat_counts[key] = RepeatTally(result_digest=answer, count=count)
    elif counts_toward_streak(outcome, record.failure):
        state.failure_streaks[call.tool] = state.failure_streaks.get(call.tool, 0) + 1


REFUSED_CALL_KINDS = frozenset({"not_executed", "unknown_tool", "repeated_call", "unknown_handle"})
"""Failure kinds of calls the runtime refused to run, which say nothing about the tool."""


def counts_toward_streak(outcome: ToolOutcome, failure: ToolFailure | None) -> bool:
    """Whether a finished call lengthens its tool's failure streak.

    The streak measures how often a tool fails when it is used, so that a tool which
    keeps failing is withheld and, past the hard stop, ends the Run. A call the runtime
    refused to run never reached the tool and cannot count against it: one closed
    ``not_executed`` (over the per-turn cap, or stopped by an abort), one naming a tool
    that was not offered (``unknown_tool``), a refused repeat (``repeated_call``) and a
    read of a handle that does not exist (``unknown_handle``). Arguments that are not
    JSON, too large, unstorable or do not fit the tool's parameters are the model
    misusing that tool, and so is calling it after it was withheld for failing: those
    keep counting, like every real failure and every call left in doubt (``unknown``).
    A cancelled call (``aborted``) never counts.
    """
    if outcome is ToolOutcome.UNKNOWN:
        return True
    return outcome is ToolOutcome.ERROR and not was_refused(outcome, failure)


def was_refused(outcome: ToolOutcome, failure: ToolFailure | None) -> bool:
    """Whether a finished call is one the runtime refused to run (``REFUSED_CALL_KINDS``).

    Such a call did no work, so it neither feeds a failure streak nor uses up the
    agent's ``max_steps``.
    """
    return (
        outcome is ToolOutcome.ERROR
        and failure is not None
        and (failure.kind in REFUSED_CALL_KINDS)
    )


# --- workflow steps --------------------------------------------------------------------


def _step_started(state: RunStateView, record: StepStarted) -> None:
    previous = state.steps.get(record.step_id)
    if previous is not None:
        if previous.settled:
            raise _corrupt(
                state,
                record,
                _Reason.INCONSISTENT_STEP,
                f"step {record.step_id!r} already completed for good",
            )
        if record.attempt_number != previous.attempt_number + 1:
            raise _corrupt(
                state,
                record,
                _Reason.NON_CONSECUTIVE_ATTEMPT,
                f"step {record.step_id!r} expected attempt {previous.attempt_number + 1}, "
                f"got {record.attempt_number}",
            )
    elif record.attempt_number != 1:
        raise _corrupt(
            state,
            record,
            _Reason.NON_CONSECUTIVE_ATTEMPT,
            f"step {record.step_id!r} first started as attempt {record.attempt_number}",
        )
    step = StepRecord(
        step_id=record.step_id,
        name=record.name,
        kind=record.kind,
        attempt_number=record.attempt_number,
        input=record.input,
        path=record.path,
        parent_step_id=record.parent_step_id,
        iteration=record.iteration,
        replayed_from=record.replayed_from,
        started_at=record.at,
        started_seq=record.seq,
    )
    state.steps[record.step_id] = step
    state.step_start_index[record.step_id] = len(state.step_starts)
    state.step_starts.append(step)


def _step_completed(state: RunStateView, record: StepCompleted) -> None:
    step = state.steps.get(record.step_id)
    if step is None:
        raise _corrupt(
            state,
            record,
            _Reason.INCONSISTENT_STEP,
            f"step {record.step_id!r} completed without starting",
        )
    if step.completed:
        raise _corrupt(
            state,
            record,
            _Reason.INCONSISTENT_STEP,
            f"attempt {step.attempt_number} of step {record.step_id!r} already completed",
        )
    done = replace(
        step,
        completed=True,
        output=record.output,
        failure=record.failure,
        child_run_id=record.child_run_id,
        skipped=record.skipped,
        will_retry=record.will_retry,
        retry_at=record.retry_at,
        completed_at=record.at,
        completed_seq=record.seq,
    )
    state.steps[record.step_id] = done
    state.step_starts[state.step_start_index[record.step_id]] = done
    if (
        done.kind == SET_STATE_STEP_KIND
        and not done.skipped
        and done.failure is None
        and done.output is not None
    ):
        state.workflow_state_updates.update(done.output)


# --- queues ----------------------------------------------------------------------------


def _pending(state: RunStateView, queue: QueueKind) -> list[PendingQueueEntry]:
    if queue is QueueKind.STEER:
        return state.pending_steer
    if queue is QueueKind.FOLLOW_UP:
        return state.pending_follow_up
    return state.pending_next_run


def _drop_pending(state: RunStateView, entry: PendingQueueEntry) -> None:
    pending = _pending(state, entry.queue)
    for index, candidate in enumerate(pending):
        if candidate.entry_id == entry.entry_id:
            del pending[index]
            return


def _queue_enqueued(state: RunStateView, record: QueueEnqueued) -> None:
    if record.entry_id in state.queue_entries:
        raise _corrupt(
            state,
            record,
            _Reason.PROVISIONED_ENTRY_MISMATCH,
            f"queue entry {record.entry_id!r} was already enqueued",
        )
    if (
        record.queue is not QueueKind.NEXT_RUN
        and state.abort_seq is not None
        and record.seq > state.abort_seq
    ):
        raise _corrupt(
            state,
            record,
            _Reason.QUEUE_AFTER_ABORT,
            f"{record.queue} entry queued after the abort at seq {state.abort_seq}",
        )
    entry = PendingQueueEntry(
        entry_id=record.entry_id,
        queue=record.queue,
        payload=record.payload,
        enqueued_seq=record.seq,
    )
    state.queue_entries[record.entry_id] = entry
    _pending(state, record.queue).append(entry)


def _closed_entry_problem(state: RunStateView, entry_id: EntryId) -> str | None:
    if entry_id in state.cancelled_entry_ids:
        return f"queue entry {entry_id!r} was already cancelled"
    if entry_id in state.consumed_entry_ids:
        return f"queue entry {entry_id!r} was already consumed"
    return None


def _queue_cancelled(state: RunStateView, record: QueueCancelled) -> None:
    entry = state.queue_entries.get(record.entry_id)
    if entry is None:
        raise _corrupt(
            state,
            record,
            _Reason.INVALID_QUEUE_CANCELLATION,
            f"queue entry {record.entry_id!r} was never enqueued",
        )
    problem = _closed_entry_problem(state, record.entry_id)
    if entry.enqueued_seq >= record.seq:
        problem = f"queue entry {record.entry_id!r} is enqueued at seq {entry.enqueued_seq}"
    if problem is not None:
        raise _corrupt(state, record, _Reason.INVALID_QUEUE_CANCELLATION, problem)
    _drop_pending(state, entry)
    state.cancelled_entry_ids.add(record.entry_id)


def _queue_consumed(state: RunStateView, record: QueueConsumed) -> None:
    entry = state.queue_entries.get(record.entry_id)
    if entry is None:
        raise _corrupt(
            state,
            record,
            _Reason.PROVISIONED_ENTRY_MISMATCH,
            f"queue entry {record.entry_id!r} was never enqueued",
        )
    problem = _closed_entry_problem(state, record.entry_id)
    if problem is not None:
        raise _corrupt(state, record, _Reason.PROVISIONED_ENTRY_MISMATCH, problem)
    _drop_pending(state, entry)
    state.consumed_entry_ids.add(record.entry_id)


# --- suspension ------------------------------------------------------------------------


def _suspended(state: RunStateView, record: Suspended) -> None:
    if state.suspended:
        raise _corrupt(
            state,
            record,
            _Reason.MULTIPLE_OPEN_OPERATIONS,
            f"suspended ({record.reason}) while already suspended ({state.suspend_reason})",
        )
    if (
        record.reason is SuspendReason.APPROVAL
        and record.pending_call_id is not None
        and record.pending_call_id not in state.open_tool_calls
    ):
        raise _corrupt(
            state,
            record,
            _Reason.TOOL_CALL_MISMATCH,
            f"approval awaits tool call {record.pending_call_id!r}, which is not open",
        )
    state.suspended = True
    state.suspend_reason = record.reason
    state.suspend_expires_at = record.expires_at
    state.suspended_at = record.at
    state.pending_approval_call_id = record.pending_call_id
    state.suspend_question = record.question
    state.suspend_questions = record.questions
    state.suspended_step_id = record.step_id
    state.suspended_step_name = record.step_name
    state.suspend_event = record.event
    state.suspend_wake_at = record.wake_at
    state.suspend_payload_schema = record.payload_schema
    state.turn_open = False
    state.model_call_open = False


def _resumed(state: RunStateView, record: Resumed) -> None:
    reason = state.suspend_reason
    if not state.suspended or reason is None:
        raise _corrupt(
            state, record, _Reason.UNKNOWN_OPERATION, "resumed while the run is not suspended"
        )
    if state.suspended_at is not None and rules(reason).extends_deadline:
        parked = (record.at - state.suspended_at).total_seconds()
        state.suspended_seconds += max(0.0, parked)
    call_id = state.pending_approval_call_id
    if call_id is not None:
        state.resume_payloads[call_id] = record.payload
        if record.approved is not None:
            state.approval_decisions[call_id] = record.approved
            state.decided_at_attempt[call_id] = state.attempt_count
    step_id = state.suspended_step_id
    if step_id is not None:
        answer = StepResume(
            reason=reason, payload=record.payload, approved=record.approved, seq=record.seq
        )
        state.step_resumes.setdefault(step_id, []).append(answer)
    if reason is SuspendReason.BREAKPOINT:
        flag = record.payload.get("step_mode")
        if isinstance(flag, bool):
            state.step_mode = flag

    state.suspended = False
    state.suspend_reason = None
    state.suspend_expires_at = None
    state.suspended_at = None
    state.pending_approval_call_id = None
    state.suspend_question = None
    state.suspend_questions = ()
    state.suspended_step_id = None
    state.suspended_step_name = None
    state.suspend_event = None
    state.suspend_wake_at = None
    state.suspend_payload_schema = {}
    state.resumed_since_attempt = True


# --- subagents -------------------------------------------------------------------------


def _subagent_spawned(state: RunStateView, record: SubagentSpawned) -> None:
    if record.child_run_id in state.children:
        raise _corrupt(
            state,
            record,
            _Reason.MULTIPLE_OPEN_OPERATIONS,
            f"child run {record.child_run_id!r} was already spawned",
        )
    for child in state.children.values():
        if child.alive and child.name == record.name:
            raise _corrupt(
                state,
                record,
                _Reason.MULTIPLE_OPEN_OPERATIONS,
                f"a live child is already named {record.name!r}",
            )
    state.children[record.child_run_id] = ChildRun(
        run_id=record.child_run_id,
        name=record.name,
        call_id=record.call_id,
        version_hash=record.child_version_hash,
        depth=record.delegation_depth,
        background=record.background,
        tools=record.tools,
        model=record.model,
        spawned_seq=record.seq,
    )


def _known_child(state: RunStateView, record: SubagentMessaged | SubagentFinished) -> ChildRun:
    child = state.children.get(record.child_run_id)
    if child is None:
        raise _corrupt(
            state,
            record,
            _Reason.UNKNOWN_OPERATION,
            f"{record.type} names child {record.child_run_id!r}, which this run never spawned",
        )
    return child


def _subagent_messaged(state: RunStateView, record: SubagentMessaged) -> None:
    child = _known_child(state, record)
    state.children[child.run_id] = replace(child, messages_sent=child.messages_sent + 1)


def _subagent_finished(state: RunStateView, record: SubagentFinished) -> None:
    child = _known_child(state, record)
    if not child.alive:
        raise _corrupt(
            state,
            record,
            _Reason.MULTIPLE_OPEN_OPERATIONS,
            f"child {record.child_run_id!r} already finished at seq {child.finished_seq}",
        )
    state.children[child.run_id] = replace(
        child,
        terminal_state=record.state,
        output=record.output,
        failure=record.failure,
        usage=record.usage,
        unreported_usage_calls=record.unreported_usage_calls,
        cost=record.cost,
        unpriced_model_calls=record.unpriced_model_calls,
        finished_seq=record.seq,
        runs=record.runs,
        run_seconds=record.run_seconds,
    )


__all__ = [
    "READ_TOOL_OUTPUT",
    "REFUSED_CALL_KINDS",
    "SET_STATE_STEP_KIND",
    "counts_toward_streak",
    "fold_into",
    "reduce",
    "was_refused",
]
