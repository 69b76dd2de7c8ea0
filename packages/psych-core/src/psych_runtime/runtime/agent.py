"""The agent loop: turns of model calls and tool calls, written to the log as they happen.

Each turn is written at its durable points and no more often:

1. before the model request: ``turn_started``, consumed steers and
   ``model_call_started`` (together with whatever the previous step left staged);
2. after the model answers: ``model_call_finished`` plus the first ``tool_call_started``
   (or the ``run_settled`` of a final answer);
3. after each tool: its ``tool_call_finished`` rides along with the next durable point.

A tool never starts before its ``tool_call_started`` is durable, so after a crash every
call is either known to have finished or visibly in doubt.

Large results: a result above the Spec's ``large_result_bytes`` is elided for the model
(handle, size and preview) and one above the Runtime's ``blob_offload_bytes`` is written
to the BlobStore before its ``tool_call_finished``; see ``runtime/offload.py``. Once the
Run has issued a handle, the built-in ``read_tool_output`` is offered to page through it.
A model-issued read naming a handle this Run never issued cannot be logged as asked (the
log would be corrupt, since such a start record is what ``invalid_deferred_handle``
forbids), so its start record carries the handle under ``unissued_handle`` instead of
``handle`` and the call is failed ``unknown_handle``: every argument stays visible in
the log, and the model is told plainly that the handle does not exist.

HTTP tools: the Spec's ``HttpTool`` entries are offered and narrowed together with the
code tools and sent by ``runtime/http_executor.py`` through the Runtime's transport. A
GET counts as safe to repeat, so one left in doubt by a crash is sent again; any other
method is closed ``unknown``, like a code tool that was not registered idempotent.
"""

import asyncio
import json
import logging
import time
import traceback
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from pydantic import JsonValue

from psych_runtime.core.digest import call_digest
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.messages import Message, SystemMessage, ToolDefinition
from psych_runtime.core.metering import Cost, Usage
from psych_runtime.core.records import (
    CompactionApplied,
    CompactionReason,
    JsonObject,
    ModelCallFailed,
    ModelCallFinished,
    ModelCallStarted,
    QueueConsumed,
    RunSettled,
    TerminalState,
    ToolCallFinished,
    ToolCallStarted,
    ToolFailure,
    ToolOutcome,
    TurnStarted,
)
from psych_runtime.core.reducer import READ_TOOL_OUTPUT, was_refused
from psych_runtime.core.spec import AgentSpec, HttpTool
from psych_runtime.core.storable import MAX_JSON_DEPTH, unstorable
from psych_runtime.model.port import ContextOverflow, ModelError, ModelRequest
from psych_runtime.model.pricing import resolve_cost
from psych_runtime.runtime.abort import AbortReason, AbortSignal
from psych_runtime.runtime.compaction import Cut, plan_cut, summary_request
from psych_runtime.runtime.conversation import Conversation
from psych_runtime.runtime.http_executor import call_http_tool
from psych_runtime.runtime.ids import new_call_id
from psych_runtime.runtime.journal import Journal
from psych_runtime.runtime.model_call import (
    AssembledCall,
    ModelAnswer,
    call_model,
    replace_lone_surrogates,
)
from psych_runtime.runtime.offload import ResultNotKept, keep_result
from psych_runtime.runtime.output_reader import (
    OutputReader,
    ResultNotReadable,
    unknown_handle_message,
)
from psych_runtime.runtime.prompt import system_prompt, withheld_advisory
from psych_runtime.tools.context import ToolContext
from psych_runtime.tools.errors import ToolArgumentsInvalid, ToolResultInvalid
from psych_runtime.tools.http_request import HttpToolFailed, http_tool_definition
from psych_runtime.tools.narrowing import narrow
from psych_runtime.tools.read_output import READ_TOOL_OUTPUT_DEFINITION

if TYPE_CHECKING:
    from psych_runtime.runtime.runtime import Runtime

log = logging.getLogger(__name__)

ORPHANED_MESSAGE = (
    "The worker running this call stopped before it reported back. The call may or may "
    "not have taken effect."
)


_EMPTY_USAGE = Usage()

UNISSUED_HANDLE_ARGUMENT = "unissued_handle"
"""Where a ``read_tool_output`` start record keeps a handle this Run never issued."""


class _Next(Enum):
    CONTINUE = "continue"
    STOP = "stop"


@dataclass(frozen=True, slots=True)
class _Executed:
    outcome: ToolOutcome
    result: JsonValue
    failure: ToolFailure | None
    duration: float


def _failure(kind: str, message: str, *, tb: str | None = None) -> ToolFailure:
    # A message quotes whatever a tool or provider said, which may hold a lone
    # surrogate; the record must stay storable whatever the text.
    return ToolFailure(
        kind=kind,
        message=replace_lone_surrogates(message),
        traceback=replace_lone_surrogates(tb) if tb is not None else None,
    )


class AgentLoop:
    """Runs one Attempt of an agent Run until it settles, suspends or is told to stop."""

    def __init__(
        self,
        runtime: "Runtime",
        journal: Journal,
        spec: AgentSpec,
        abort: AbortSignal,
    ) -> None:
        self._runtime = runtime
        self._journal = journal
        self._spec = spec
        self._abort = abort
        self._conversation = Conversation()
        self._interruptible = {tool.name: tool.interruptible for tool in spec.tools}
        self._code_tools = tuple(tool.name for tool in spec.tools if tool.kind == "code")
        self._http_tools: dict[str, HttpTool] = {
            tool.name: tool for tool in spec.tools if tool.kind == "http"
        }
        self._http_definitions = {
            name: http_tool_definition(tool) for name, tool in self._http_tools.items()
        }
        self._granted = (*self._code_tools, *self._http_tools)
        self._reader = OutputReader(
            blob=runtime.blob, tenant=journal.scope.tenant, run_id=journal.run_id
        )

    async def run(self) -> None:
        """Settle what a previous Attempt left dangling, then take turns until done."""
        await self._settle_dangling()
        while True:
            while await self._turn() is _Next.CONTINUE:
                pass
            await self._journal.flush()
            # A steer or follow-up that landed just before the completion was written
            # withdrew it: the message was accepted, so the Run answers it first.
            if not self._journal.take_withdrawn_settlement():
                return

    # --- settling -----------------------------------------------------------------

    def _settle(
        self,
        state: TerminalState,
        *,
        output: JsonObject | None = None,
        failure: ToolFailure | None = None,
    ) -> _Next:
        self._journal.stage(RunSettled, state=state, output=output, failure=failure)
        return _Next.STOP

    def _stop_reason(self) -> _Next | None:
        """The checks made before every turn, in order; None means keep going."""
        state = self._journal.state
        limits = self._spec.limits
        if self._abort.fired and not state.aborted:
            if self._abort.reason is AbortReason.DEADLINE:
                return self._settle(
                    TerminalState.ABORTED,
                    failure=_failure("deadline", "the run passed its deadline"),
                )
            return _Next.STOP
        if state.aborted:
            return self._settle(TerminalState.ABORTED)
        if state.suspended:
            return _Next.STOP
        for tool, streak in state.failure_streaks.items():
            if streak >= limits.failure_streak_hard_stop:
                return self._settle(
                    TerminalState.FAILED,
                    failure=_failure(
                        "failure_streak",
                        f"tool {tool} failed {streak} times in a row",
                    ),
                )
        if state.turn >= limits.max_turns:
            return self._settle(
                TerminalState.FAILED,
                failure=_failure("budget_exhausted", f"reached max_turns={limits.max_turns}"),
            )
        # A call the runtime refused to run did no work and is no step (see
        # ``was_refused``): 300 calls in one answer spend 16 steps, not 300.
        steps = sum(1 for r in state.tool_results if not was_refused(r.outcome, r.failure))
        if steps >= limits.max_steps:
            return self._settle(
                TerminalState.FAILED,
                failure=_failure("budget_exhausted", f"reached max_steps={limits.max_steps}"),
            )
        return None

    # --- dangling calls -------------------------------------------------------------

    async def _settle_dangling(self) -> None:
        state = self._journal.state
        if state.settled or not state.open_tool_calls:
            return
        for call in list(state.open_tool_calls.values()):
            registered = self._runtime.registry.get(call.tool)
            executable = registered is not None or call.tool in self._http_tools
            if call.safe_to_retry and (executable or call.tool == READ_TOOL_OUTPUT):
                executed = await self._execute(call.call_id, call.tool, call.arguments)
                await self._finish(call.call_id, call.tool, executed)
                continue
            self._journal.stage(
                ToolCallFinished,
                call_id=call.call_id,
                outcome=ToolOutcome.UNKNOWN,
                failure=_failure("orphaned", ORPHANED_MESSAGE),
            )

    # --- one turn -------------------------------------------------------------------

    def _offered(self) -> tuple[tuple[ToolDefinition, ...], list[str]]:
        state = self._journal.state
        threshold = self._spec.limits.failure_streak_threshold
        withheld = {t for t, n in state.failure_streaks.items() if n >= threshold}
        names = narrow(
            self._runtime.registry.names.union(self._http_definitions),
            granted=self._granted,
            permitted=None,
            withheld=withheld,
        )
        # The reader is only worth its tokens once there is something to read.
        reader_offered = bool(state.result_handles)
        advisories = [
            withheld_advisory(tool, state.failure_streaks[tool])
            for tool in sorted(withheld)
            if tool in self._granted or (reader_offered and tool == READ_TOOL_OUTPUT)
        ]
        definitions = tuple(
            definition for name in names if (definition := self._definition(name)) is not None
        )
        if reader_offered and READ_TOOL_OUTPUT not in withheld:
            definitions += (READ_TOOL_OUTPUT_DEFINITION,)
        return definitions, advisories

    def _definition(self, name: str) -> ToolDefinition | None:
        # The Spec allows one tool per name, so an HTTP tool's name is never also a
        # granted code tool.
        http = self._http_definitions.get(name)
        if http is not None:
            return http
        registered = self._runtime.registry.get(name)
        return registered.definition() if registered is not None else None

    def _messages(self, prompt: str) -> tuple[Message, ...]:
        self._conversation.update(self._journal.records, self._journal.epoch)
        messages: list[Message] = [SystemMessage(content=prompt)] if prompt else []
        messages.extend(self._conversation.messages())
        return tuple(messages)

    async def _turn(self) -> _Next:
        journal = self._journal
        await journal.refresh()
        stop = self._stop_reason()
        if stop is not None:
            return stop
        spec = self._spec
        if self._compaction_due():
            stop = await self._compact(CompactionReason.THRESHOLD)
            if stop is not None:
                return stop
        definitions, advisories = self._offered()
        state = journal.state
        turn = state.turn + 1
        follow_ups = list(state.pending_follow_up) if self._answered_last_turn() else []
        journal.stage(TurnStarted, turn=turn)
        for entry in [*follow_ups, *state.pending_steer]:
            journal.stage(QueueConsumed, entry_id=entry.entry_id)
        prompt = system_prompt(
            spec.instructions, answer_style=spec.answer_style, advisories=advisories
        )
        model_id = self._model_for_turn()
        journal.stage(
            ModelCallStarted,
            turn=turn,
            model=model_id,
            tool_names=tuple(d.name for d in definitions),
            system_prompt=prompt,
        )
        await journal.flush()
        if self._aborted():
            return self._settle(TerminalState.ABORTED)
        request = ModelRequest(
            model=model_id,
            messages=self._messages(prompt),
            tools=definitions,
            temperature=spec.model.temperature,
            top_p=spec.model.top_p,
            max_output_tokens=spec.model.max_output_tokens,
            reasoning_effort=spec.model.reasoning_effort,
            idle_timeout_seconds=spec.limits.stream_idle_seconds,
        )
        try:
            answer = await call_model(self._runtime.model, request)
        except ModelError as error:
            return await self._model_failed(turn, model_id, error)
        usage_reported = answer.usage is not None
        cost = self._cost(model_id, answer)
        call_ids = self._assign_ids(answer.calls)
        journal.stage(
            ModelCallFinished,
            turn=turn,
            model=model_id,
            usage=answer.usage if answer.usage is not None else _EMPTY_USAGE,
            usage_reported=usage_reported,
            cost=cost,
            timings=answer.timings,
            finish_reason=answer.finish_reason,
            text=answer.text,
            tool_calls=tuple(call_ids),
        )
        if not answer.calls:
            return self._no_tool_calls(answer.text)
        offered = {d.name for d in definitions}
        return await self._run_calls(turn, answer.calls, call_ids, offered)

    def _no_tool_calls(self, text: str) -> _Next:
        state = self._journal.state
        if state.pending_follow_up:
            for entry in list(state.pending_follow_up):
                self._journal.stage(QueueConsumed, entry_id=entry.entry_id)
            return _Next.CONTINUE
        return self._settle(TerminalState.COMPLETED, output={"text": text})

    def _cost(self, model_id: str, answer: ModelAnswer) -> Cost | None:
        """The cost to record for one call; None when it is unknown.

        A Run's total is kept in one currency. A call priced in another (a provider
        reporting USD into a EUR table, say) is recorded as unpriced rather than as a
        record the log would refuse: the total then says it is incomplete.
        """
        cost = resolve_cost(
            model_id,
            answer.usage,
            answer.provider_cost,
            self._runtime.prices,
            self._runtime.cost_policy,
        )
        total = self._journal.state.cost
        if cost is not None and total is not None and cost.currency != total.currency:
            log.warning(
                "run %s: a %s cost cannot join a total kept in %s; recorded as unpriced",
                self._journal.run_id,
                cost.currency,
                total.currency,
            )
            return None
        return cost

    def _answered_last_turn(self) -> bool:
        """Whether the latest model answer called no tools (the Run looked finished).

        Follow-ups wait for exactly that moment; normally the loop consumes them as it
        sees the answer, but one that arrived while the completion was being written
        (or before a reclaim) is consumed when the next turn opens.
        """
        for record in reversed(self._journal.records):
            if record.type == "model_call_finished":
                return not record.tool_calls
            if record.type in ("tool_call_started", "tool_call_finished"):
                return False
        return False

    def _model_for_turn(self) -> str:
        """The model this turn calls: the primary, or the next fallback after a failure.

        Decided from the log alone (the last model call on record), so a reclaiming
        Worker continues the failover exactly where the previous one left it.
        """
        chain = (self._spec.model.model, *self._spec.model.fallbacks)
        for record in reversed(self._journal.records):
            if record.type == "model_call_finished":
                break
            if record.type == "model_call_failed":
                if not record.will_retry or record.failure.kind == "context_overflow":
                    break
                index = chain.index(record.model) if record.model in chain else -1
                return chain[min(index + 1, len(chain) - 1)]
        return chain[0]

    def _has_fallback_after(self, model_id: str) -> bool:
        chain = (self._spec.model.model, *self._spec.model.fallbacks)
        return model_id in chain and chain.index(model_id) < len(chain) - 1

    async def _model_failed(self, turn: int, model_id: str, error: ModelError) -> _Next:
        state = self._journal.state
        budget = self._spec.limits.transient_retry_budget
        within_budget = state.transient_retries_used < budget
        overflow = isinstance(error, ContextOverflow)
        rescuable = overflow and self._cut() is not None
        # A model that is gone or refuses this request outright (404) is worth failing
        # over from, but never worth retrying as it is.
        failover = error.status_code == 404 and self._has_fallback_after(model_id)
        will_retry = within_budget and (error.transient or rescuable or failover)
        failure = ToolFailure(
            kind=error.kind,
            message=replace_lone_surrogates(str(error)),
            transient=error.transient,
        )
        self._journal.stage(
            ModelCallFailed, turn=turn, model=model_id, failure=failure, will_retry=will_retry
        )
        if not will_retry:
            return self._settle(TerminalState.FAILED, failure=failure)
        if rescuable:
            stop = await self._compact(CompactionReason.OVERFLOW)
            return stop if stop is not None else _Next.CONTINUE
        await self._journal.flush()
        delay = 0.0
        if error.transient and not self._has_fallback_after(model_id):
            delay = self._runtime.retry_delay(state.transient_retries_used - 1, error.retry_after)
        if delay > 0:
            await self._pause(delay)
        return _Next.CONTINUE

    async def _pause(self, seconds: float) -> None:
        """Wait before a retry; cut short by the Worker's abort or a new record.

        A record landing in the log (an interrupt, a steer) ends the pause early so the
        next turn's checks see it now rather than after a long backoff.
        """
        waiters: list[asyncio.Future[object]] = [asyncio.ensure_future(self._abort.wait())]
        notifier = self._runtime.store.notifier
        if notifier is not None:
            run_id = self._journal.run_id
            seen = notifier.generation(run_id)
            waiters.append(asyncio.ensure_future(notifier.wait(run_id, seen, seconds)))
        try:
            await asyncio.wait(waiters, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()

    # --- compaction -----------------------------------------------------------------

    def _compaction_due(self) -> bool:
        policy = self._spec.compaction
        if policy is None:
            return False
        state = self._journal.state
        return state.last_prompt_tokens >= policy.trigger_tokens and self._cut() is not None

    def _cut(self) -> Cut | None:
        policy = self._spec.compaction
        if policy is None:
            return None
        state = self._journal.state
        return plan_cut(
            self._journal.records, state.compaction_boundary_seq, policy.keep_recent_turns
        )

    async def _compact(self, reason: CompactionReason) -> _Next | None:
        """Summarise the oldest turns and record the replacement; None when it worked."""
        policy = self._spec.compaction
        cut = self._cut()
        if policy is None or cut is None:
            return None
        model_id = policy.model or self._spec.model.model
        request = summary_request(
            self._journal.records, cut, policy, model_id, self._spec.limits.stream_idle_seconds
        )
        try:
            answer = await call_model(self._runtime.model, request)
        except ModelError as error:
            return self._settle(
                TerminalState.FAILED,
                failure=_failure("compaction_failed", f"the summarising call failed: {error}"),
            )
        summary = answer.text.strip()
        if not summary:
            return self._settle(
                TerminalState.FAILED,
                failure=_failure("compaction_failed", "the summarising call returned no text"),
            )
        self._journal.stage(
            CompactionApplied,
            reason=reason,
            timings=answer.timings,
            replaced_from_seq=cut.from_seq,
            replaced_to_seq=cut.to_seq,
            summary=summary,
            model=model_id,
            usage=answer.usage if answer.usage is not None else _EMPTY_USAGE,
            usage_reported=answer.usage is not None,
            cost=self._cost(model_id, answer),
        )
        return None

    def _assign_ids(self, calls: Sequence[AssembledCall]) -> list[ToolCallId]:
        state = self._journal.state
        used: set[str] = set(state.open_tool_calls)
        used.update(result.call_id for result in state.tool_results)
        ids: list[ToolCallId] = []
        for call in calls:
            # A provider that reuses ids (some local servers count from call_0 every
            # turn) gets a fresh one. The model sees our ids in the conversation we
            # send back, so the renaming is invisible to it and never costs a call.
            call_id = call.id if call.id and call.id not in used else new_call_id()
            used.add(call_id)
            ids.append(ToolCallId(call_id))
        return ids

    # --- tool calls -----------------------------------------------------------------

    async def _close_unexecuted(
        self, turn: int, calls: Sequence[AssembledCall], ids: Sequence[ToolCallId], why: str
    ) -> None:
        for call, call_id in zip(calls, ids, strict=True):
            name = call.name or "unnamed"
            parsed = (await _read_arguments(call.arguments))[0] if call.refusal is None else None
            arguments, _ = self._recorded_arguments(name, parsed or {})
            self._journal.stage(
                ToolCallStarted,
                call_id=call_id,
                tool=name,
                arguments=arguments,
                turn=turn,
                interruptible=self._interruptible.get(call.name, True),
            )
            self._journal.stage(
                ToolCallFinished,
                call_id=call_id,
                outcome=ToolOutcome.ERROR,
                failure=_failure("not_executed", why),
            )

    def _recorded_arguments(
        self, name: str, arguments: JsonObject
    ) -> tuple[JsonObject, str | None]:
        """The arguments a start record may carry, and a handle this Run never issued.

        The reducer treats a model-issued ``read_tool_output`` of an unissued handle as
        a corrupt log, so such a handle is recorded under ``unissued_handle`` instead.
        """
        if name != READ_TOOL_OUTPUT:
            return arguments, None
        handle = arguments.get("handle")
        if not isinstance(handle, str) or handle in self._journal.state.result_handles:
            return arguments, None
        recorded = {key: value for key, value in arguments.items() if key != "handle"}
        recorded[UNISSUED_HANDLE_ARGUMENT] = handle
        return recorded, handle

    def _reject(self, call_id: ToolCallId, kind: str, message: str) -> None:
        self._journal.stage(
            ToolCallFinished,
            call_id=call_id,
            outcome=ToolOutcome.ERROR,
            failure=_failure(kind, message),
        )

    async def _run_calls(
        self,
        turn: int,
        calls: Sequence[AssembledCall],
        ids: Sequence[ToolCallId],
        offered: set[str],
    ) -> _Next:
        journal = self._journal
        limits = self._spec.limits
        cap = limits.max_tool_calls_per_turn
        for index, (call, call_id) in enumerate(zip(calls, ids, strict=True)):
            if index >= cap:
                await self._close_unexecuted(
                    turn,
                    calls[index:],
                    ids[index:],
                    f"only {cap} tool calls are allowed per turn; this one was not run",
                )
                break
            name = call.name or "unnamed"
            arguments: JsonObject | None = None
            parse_error: str | None = call.refusal
            if parse_error is None:
                arguments, parse_error = await _read_arguments(call.arguments)
            recorded, unissued = self._recorded_arguments(name, arguments or {})
            journal.stage(
                ToolCallStarted,
                call_id=call_id,
                tool=name,
                arguments=recorded,
                turn=turn,
                interruptible=self._interruptible.get(name, True),
                safe_to_retry=self._safe_to_retry(name),
            )
            if parse_error is not None or arguments is None:
                self._reject(call_id, "malformed_arguments", parse_error or "bad arguments")
                continue
            if name not in offered:
                self._reject_unoffered(call_id, name, offered)
                continue
            if unissued is not None:
                self._reject(call_id, "unknown_handle", unknown_handle_message(unissued))
                continue
            repeats = self._repeats(name, arguments)
            if repeats >= limits.repeat_call_threshold:
                self._reject(
                    call_id,
                    "repeated_call",
                    f"this exact call already returned the same result {repeats - 1} times; "
                    "use that result instead of asking again",
                )
                if repeats >= limits.repeat_call_hard_stop:
                    await self._close_unexecuted(
                        turn,
                        calls[index + 1 :],
                        ids[index + 1 :],
                        "the turn was stopped because a call kept being repeated",
                    )
                    break
                continue
            await journal.flush()
            if self._aborted():
                self._reject(call_id, "not_executed", "the run was asked to stop")
                await self._close_unexecuted(
                    turn, calls[index + 1 :], ids[index + 1 :], "the run was asked to stop"
                )
                break
            executed = await self._execute(call_id, name, arguments)
            await self._finish(call_id, name, executed)
            await journal.refresh()
            if self._aborted():
                await self._close_unexecuted(
                    turn, calls[index + 1 :], ids[index + 1 :], "the run was asked to stop"
                )
                break
        return _Next.CONTINUE

    def _reject_unoffered(self, call_id: ToolCallId, name: str, offered: set[str]) -> None:
        """Refuse a call to a tool this turn did not offer.

        A tool withheld for failing is told apart from a name that is simply unknown:
        calling it after the model was told it is gone is misuse of that tool and
        lengthens its streak towards the hard stop, while an unknown name says nothing
        about any tool (see ``counts_toward_streak``).
        """
        available = ", ".join(sorted(offered)) or "none"
        streak = self._journal.state.failure_streaks.get(name, 0)
        if streak >= self._spec.limits.failure_streak_threshold and (
            name in self._granted or name == READ_TOOL_OUTPUT
        ):
            self._reject(
                call_id,
                "withheld_tool",
                f"the tool {name!r} failed {streak} times in a row and is no longer "
                f"available in this run. Available tools: {available}.",
            )
            return
        self._reject(
            call_id,
            "unknown_tool",
            f"there is no tool named {name!r} this turn. Available tools: {available}.",
        )

    def _safe_to_retry(self, name: str) -> bool:
        """Whether a call left in doubt by a crash may simply be executed again.

        Reading a result back changes nothing; an HTTP GET is taken at its word as
        HTTP's safe method; a code tool must have been registered idempotent. Any
        other HTTP method may have taken effect and is reported ``unknown`` instead.
        """
        http = self._http_tools.get(name)
        if http is not None:
            return http.method == "GET"
        registered = self._runtime.registry.get(name)
        return (registered is not None and registered.idempotent) or name == READ_TOOL_OUTPUT

    def _aborted(self) -> bool:
        return self._journal.state.aborted

    def _repeats(self, name: str, arguments: JsonObject) -> int:
        tally = self._journal.state.repeat_counts.get(call_digest(name, arguments))
        return (tally.count if tally is not None else 0) + 1

    async def _finish(self, call_id: ToolCallId, name: str, executed: _Executed) -> None:
        if executed.outcome is ToolOutcome.OK:
            executed = await _storable_outcome(executed)
        # A page of read_tool_output is capped by construction; eliding it would only
        # hand the model another handle to read.
        if executed.outcome is not ToolOutcome.OK or name == READ_TOOL_OUTPUT:
            self._journal.stage(
                ToolCallFinished,
                call_id=call_id,
                outcome=executed.outcome,
                result=executed.result,
                failure=executed.failure,
                duration_seconds=executed.duration,
            )
            return
        journal = self._journal
        try:
            kept = await keep_result(
                executed.result,
                tenant=journal.scope.tenant,
                run_id=journal.run_id,
                call_id=call_id,
                large_result_bytes=self._spec.limits.large_result_bytes,
                offload_bytes=self._runtime.blob_offload_bytes,
                blob=self._runtime.blob,
            )
        except ResultNotKept as refusal:
            journal.stage(
                ToolCallFinished,
                call_id=call_id,
                outcome=ToolOutcome.ERROR,
                failure=ToolFailure(
                    kind=refusal.kind, message=str(refusal), transient=refusal.transient
                ),
                duration_seconds=executed.duration,
            )
            return
        journal.stage(
            ToolCallFinished,
            call_id=call_id,
            outcome=ToolOutcome.OK,
            result=kept.result,
            duration_seconds=executed.duration,
            result_handle=kept.result_handle,
            preview=kept.preview,
            result_bytes=kept.result_bytes,
            result_blob_key=kept.result_blob_key,
            result_content_type=kept.result_content_type,
        )

    async def _execute(self, call_id: ToolCallId, name: str, arguments: JsonObject) -> _Executed:
        if name == READ_TOOL_OUTPUT:
            return await self._read_output(arguments)
        journal = self._journal
        assert journal.attempt_id is not None
        context = ToolContext.for_call(
            run_id=journal.run_id,
            call_id=call_id,
            scope=journal.scope,
            attempt_id=journal.attempt_id,
        )
        started = time.perf_counter()
        invocation = asyncio.ensure_future(_captured(self._invoke(name, arguments, context)))
        if not self._interruptible.get(name, True):
            # An uninterruptible call (a refund, say) is never abandoned half way: it
            # runs to its end even through cancellation, its outcome is recorded, and
            # only then does the cancellation carry on.
            if await _wait_through_cancellation(invocation):
                await self._finish(call_id, name, _outcome_of(invocation, started))
                await journal.flush()
                raise asyncio.CancelledError
            return _outcome_of(invocation, started)
        try:
            await invocation
        except asyncio.CancelledError:
            if not invocation.done() or invocation.cancelled():
                raise
        except Exception:
            pass
        return _outcome_of(invocation, started)

    async def _invoke(self, name: str, arguments: JsonObject, context: ToolContext) -> JsonValue:
        """Run a Spec HTTP tool through the transport, or a registered code tool."""
        http = self._http_tools.get(name)
        if http is None:
            return await self._runtime.registry.invoke(name, arguments, context)
        return await call_http_tool(
            http,
            arguments,
            scope=context.scope,
            transport=self._runtime.http,
            secrets=self._runtime.secrets,
        )

    async def _read_output(self, arguments: JsonObject) -> _Executed:
        """Run the built-in ``read_tool_output``; its refusals become ordinary failures."""
        started = time.perf_counter()
        try:
            page = await self._reader.read(self._journal.state, arguments)
        except ToolArgumentsInvalid as error:
            failure = _failure("invalid_arguments", str(error))
        except ResultNotReadable as error:
            failure = _failure(error.kind, str(error))
        else:
            return _Executed(ToolOutcome.OK, page, None, _elapsed(started))
        return _Executed(ToolOutcome.ERROR, None, failure, _elapsed(started))


async def _wait_through_cancellation(task: "asyncio.Future[JsonValue]") -> bool:
    """Wait until ``task`` is done, even when the caller is cancelled meanwhile.

    The supervisor's grace period is what bounds a call that hangs for ever.

    Returns:
        Whether a cancellation arrived while waiting.
    """
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
        except Exception:
            break  # the task failed; its caller reads the failure from the task
    return cancelled


class _ToolRaised(Exception):
    """Carries a ``BaseException`` a tool raised out of its task as an ordinary failure.

    Attributes:
        raised: what the tool raised (``SystemExit``, ``KeyboardInterrupt``...).
    """

    def __init__(self, raised: BaseException) -> None:
        super().__init__(str(raised))
        self.raised = raised


async def _captured(invocation: Coroutine[object, object, JsonValue]) -> JsonValue:
    """Run a tool so that nothing it raises can end more than its own call.

    A tool is code the runtime does not control: ``sys.exit()`` deep in a library, a
    ``KeyboardInterrupt`` re-raised by a helper. Left alone, such an exception ends the
    task and asyncio hands ``SystemExit`` and ``KeyboardInterrupt`` on to the event
    loop itself, which stops the Worker and every Run it holds. Caught here, inside the
    task, it becomes that call's failure like any other exception. Only a cancellation
    passes through: it is how the Worker stops a call, not something the tool did.
    Stopping the process still works: under ``asyncio.run`` a SIGINT cancels the main
    task, which reaches every call as a cancellation. Only when a default SIGINT
    handler happens to interrupt a tool's own code in the loop's thread is the
    resulting ``KeyboardInterrupt`` taken for the tool's, failing that call.
    """
    try:
        return await invocation
    except (asyncio.CancelledError, Exception):
        raise
    except BaseException as raised:
        raise _ToolRaised(raised) from None


def _outcome_of(task: "asyncio.Future[JsonValue]", started: float) -> _Executed:
    """What a finished tool invocation amounts to, as data for the log and the model."""
    duration = _elapsed(started)
    if task.cancelled():
        return _Executed(
            ToolOutcome.ABORTED, None, _failure("cancelled", "the call was cancelled"), duration
        )
    caught = task.exception()
    if caught is None:
        return _Executed(ToolOutcome.OK, task.result(), None, duration)
    error: BaseException = caught.raised if isinstance(caught, _ToolRaised) else caught
    if isinstance(error, ToolArgumentsInvalid | ToolResultInvalid):
        return _Executed(ToolOutcome.ERROR, None, _failure(error.kind, str(error)), duration)
    if isinstance(error, HttpToolFailed):
        failure = ToolFailure(kind=error.kind, message=str(error), transient=error.transient)
        return _Executed(ToolOutcome.ERROR, None, failure, duration)
    return _Executed(
        ToolOutcome.ERROR,
        None,
        _failure(
            type(error).__name__,
            str(error) or type(error).__name__,
            tb="".join(traceback.format_exception(error)),
        ),
        duration,
    )


def _elapsed(started: float) -> float:
    return round(time.perf_counter() - started, 6)


_INLINE_ARGUMENT_CHARS = 16 * 1024
"""Argument text up to this size is parsed and checked on the event loop; longer text
in a worker thread, so a large argument never holds up the heartbeat or other Runs."""


async def _read_arguments(raw: str) -> tuple[JsonObject | None, str | None]:
    """``_parse_arguments``, moved off the event loop for large argument text."""
    if len(raw) <= _INLINE_ARGUMENT_CHARS:
        return _parse_arguments(raw)
    return await asyncio.to_thread(_parse_arguments, raw)


def _parse_arguments(raw: str) -> tuple[JsonObject | None, str | None]:
    """The arguments as an object, or why they cannot be used (said to the model).

    Arguments must be a JSON object every store can keep as it is: no lone surrogate
    (raw, or written as the JSON escape for U+D800), no non-finite number, no nesting deeper than
    ``MAX_JSON_DEPTH``. Anything else is the model's malformed request, refused as
    data, never a reason for the Run to fail.
    """
    text = raw.strip() or "{}"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        return None, f"the arguments are not valid JSON ({error.msg} at position {error.pos})"
    except RecursionError:
        return None, f"the arguments nest deeper than the {MAX_JSON_DEPTH} levels allowed"
    if not isinstance(value, dict):
        return None, "the arguments must be a JSON object"
    problem = unstorable(value)
    if problem is not None:
        return None, f"the arguments cannot be used: {problem.replace('$', 'arguments', 1)}"
    return value, None


_INLINE_RESULT_ITEMS = 64
"""A result container with at most this many entries at its top level is checked on
the event loop; a bigger one in a worker thread (its size below that is unknown)."""


async def _storable_outcome(executed: _Executed) -> _Executed:
    """A successful outcome whose result every store can keep, or a failure saying why.

    The tool did run, so the failure says so: what it returned cannot be recorded
    (a lone surrogate, a non-finite number, nesting too deep) and the model is asked
    for something that avoids it.
    """
    result = executed.result
    if isinstance(result, dict | list) and len(result) > _INLINE_RESULT_ITEMS:
        problem = await asyncio.to_thread(unstorable, result)
    else:
        problem = unstorable(result)
    if problem is None:
        return executed
    where = problem.replace("$", "the result", 1)
    failure = _failure(
        "unstorable_result",
        f"The tool ran, but what it returned cannot be recorded: {where}. "
        "Its result is not available.",
    )
    return _Executed(ToolOutcome.ERROR, None, failure, executed.duration)
