"""The model turn: open a turn, ask the model, record its answer.

The turn's first durable point is written before the request goes out: ``turn_started``,
the queued messages it consumes (steers, and follow-ups once the previous answer looked
final) and ``model_call_started`` with the tools offered and the system prompt, together
with whatever the previous step left staged. The answer's ``model_call_finished`` is
staged with its usage and cost; it is written with the first record of what follows
(the first ``tool_call_started``, or the ``run_settled`` of a final answer). A failed
call goes to ``failover.py``.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.messages import Message
from psych_runtime.core.messages import SystemMessage
from psych_runtime.core.messages import ToolResultMessage
from psych_runtime.core.records import ModelCallFinished
from psych_runtime.core.records import ModelCallStarted
from psych_runtime.core.records import QueueConsumed
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import TurnStarted
from psych_runtime.core.spec import ToolChoice
from psych_runtime.model.port import ModelError
from psych_runtime.model.port import ModelRequest
from psych_runtime.runtime.agent.background import wait_for_children
from psych_runtime.runtime.agent.context import EMPTY_USAGE
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.context import end
from psych_runtime.runtime.agent.context import settle
from psych_runtime.runtime.agent.cost import call_cost
from psych_runtime.runtime.agent.cost import refuse_cost
from psych_runtime.runtime.agent.failover import model_failed
from psych_runtime.runtime.agent.failover import model_for_turn
from psych_runtime.runtime.agent.remote import resolve_remote
from psych_runtime.runtime.ids import new_call_id
from psych_runtime.runtime.model_call import AssembledCall
from psych_runtime.runtime.model_call import call_model
from psych_runtime.runtime.prompt import system_prompt
from psych_runtime.runtime.settlement import aborted_by_request
from psych_runtime.tools.access import permitted_for


@dataclass(frozen=True, slots=True)
class Answer:
    """A model answer, recorded, whose tool calls are still to be run.

    Attributes:
        turn: the turn number.
        text: what the model said.
        calls: the tool calls it asked for, in order.
        call_ids: the id each call is recorded under.
        offered: the names of the tools this turn offered.
    """

    turn: int
    text: str
    calls: Sequence[AssembledCall]
    call_ids: Sequence[ToolCallId]
    offered: frozenset[str]


async def model_turn(ctx: AttemptContext) -> Answer | Next:
    """Open a turn and call the model; its answer, or how the loop goes on without one."""
    journal = ctx.journal
    spec = ctx.spec
    state = journal.state
    permitted = await permitted_for(ctx.deps.access, journal.scope)
    unresolved = await resolve_remote(ctx, permitted)
    if unresolved is not None:
        return unresolved
    definitions, advisories = ctx.tools.offered(
        state, spec.limits.failure_streak_threshold, permitted=permitted
    )
    turn = state.turn + 1
    follow_ups = list(state.pending_follow_up) if _answered_last_turn(ctx) else []
    journal.stage(TurnStarted, turn=turn)
    for entry in [*follow_ups, *state.pending_steer]:
        journal.stage(QueueConsumed, entry_id=entry.entry_id)
    prompt = system_prompt(
        spec.instructions,
        answer_style=spec.answer_style,
        sections=(*ctx.tools.prompt_sections, ctx.memory_prompt),
        advisories=advisories,
    )
    # Remembered facts are sent to the model but recorded by id only (erase reaches
    # the MemoryStore, never the log).
    recorded_prompt = system_prompt(
        spec.instructions,
        answer_style=spec.answer_style,
        sections=(*ctx.tools.prompt_sections, ctx.memory_prompt_recorded),
        advisories=advisories,
    )
    model_id = model_for_turn(ctx)
    journal.stage(
        ModelCallStarted,
        turn=turn,
        model=model_id,
        tool_names=tuple(d.name for d in definitions),
        system_prompt=recorded_prompt,
    )
    await journal.flush()
    if ctx.aborted():
        # The stop request landed with the opening: the request is never sent, and
        # the call recorded as started is closed as interrupted.
        return end(ctx, aborted_by_request())
    messages = _messages(ctx, prompt)
    request = ModelRequest(
        model=model_id,
        messages=messages,
        tools=definitions,
        temperature=spec.model.temperature,
        top_p=spec.model.top_p,
        max_output_tokens=spec.model.max_output_tokens,
        reasoning_effort=spec.model.reasoning_effort,
        tool_choice=_tool_choice(spec.model.tool_choice, messages),
        idle_timeout_seconds=spec.limits.stream_idle_seconds,
    )
    try:
        answer = await call_model(ctx.deps.model, request)
    except ModelError as error:
        return await model_failed(ctx, turn, model_id, error)
    call_ids = _assign_ids(ctx, answer.calls)
    cost, inconsistent = call_cost(ctx, model_id, answer)
    journal.stage(
        ModelCallFinished,
        turn=turn,
        model=model_id,
        usage=answer.usage if answer.usage is not None else EMPTY_USAGE,
        usage_reported=answer.usage is not None,
        cost=cost,
        timings=answer.timings,
        finish_reason=answer.finish_reason,
        text=answer.text,
        tool_calls=tuple(call_ids),
    )
    if inconsistent:
        return refuse_cost(ctx, inconsistent)
    offered = frozenset(d.name for d in definitions)
    return Answer(turn, answer.text, answer.calls, call_ids, offered)


async def answered(ctx: AttemptContext, text: str) -> Next:
    """Settle a final answer, unless a follow-up or a running child still needs a turn.

    A follow-up waiting for exactly this moment is consumed and answered first. With
    background subagents still working, the Run waits for them (suspended, holding no
    lease) and answers again once their results are in.
    """
    state = ctx.journal.state
    if state.pending_follow_up:
        for entry in list(state.pending_follow_up):
            ctx.journal.stage(QueueConsumed, entry_id=entry.entry_id)
        return Next.CONTINUE
    waiting = await wait_for_children(ctx)
    if waiting is not None:
        return waiting
    return settle(ctx, TerminalState.COMPLETED, output={"text": text})


def _messages(ctx: AttemptContext, prompt: str) -> tuple[Message, ...]:
    ctx.conversation.update(ctx.journal.records, ctx.journal.epoch)
    messages: list[Message] = [SystemMessage(content=prompt)] if prompt else []
    messages.extend(ctx.history)
    messages.extend(ctx.conversation.messages())
    return tuple(messages)


def _tool_choice(choice: ToolChoice | None, messages: Sequence[Message]) -> ToolChoice | None:
    """The Spec's choice for this call; a forcing one gives way once it has been obeyed.

    ``required`` or a named tool makes the model call a tool for the latest input; once
    it has (the conversation ends with tool results), the next call is ``auto``, so the
    model can answer instead of being made to call tools until a limit stops the Run.
    A new message from the user (a steer, a follow-up) forces a call again.
    """
    if choice is None or choice in ("auto", "none"):
        return choice
    if messages and isinstance(messages[-1], ToolResultMessage):
        return "auto"
    return choice


def _answered_last_turn(ctx: AttemptContext) -> bool:
    """Whether the latest model answer called no tools (the Run looked finished).

    Follow-ups wait for exactly that moment; normally the loop consumes them as it
    sees the answer, but one that arrived while the completion was being written
    (or before a reclaim) is consumed when the next turn opens.
    """
    for record in reversed(ctx.journal.records):
        if record.type == "model_call_finished":
            return not record.tool_calls
        if record.type in ("tool_call_started", "tool_call_finished"):
            return False
    return False


def _assign_ids(ctx: AttemptContext, calls: Sequence[AssembledCall]) -> list[ToolCallId]:
    state = ctx.journal.state
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
