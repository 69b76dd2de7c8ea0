"""The ``ask_question`` phase: put the model's questions to a person and wait.

The call's ``tool_call_started`` is already staged by the checks; this phase reads the
questions, closes the calls after it in the same turn ``not_executed``, and suspends
the Run (reason ``question``) with the questions in the record, so ``status()`` can
show them. The next Attempt closes the call with the person's answer from the log
(``dangling.py``), so a question is never put twice.
"""

from collections.abc import Sequence

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import ToolOutcome
from psych_runtime.runtime.agent.call_checks import close_unexecuted
from psych_runtime.runtime.agent.call_checks import reject
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.finish import Executed
from psych_runtime.runtime.agent.finish import finish
from psych_runtime.runtime.model_call import AssembledCall
from psych_runtime.runtime.open_calls import close_call
from psych_runtime.runtime.suspension import stage_suspension
from psych_runtime.tools.ask_question import answer_from
from psych_runtime.tools.ask_question import one_line
from psych_runtime.tools.ask_question import read_questions

WAITING_MESSAGE = (
    "not run: an earlier call in this turn asked the user a question; "
    "ask for this call again once the answer is in, if it is still needed"
)
"""What the calls after a question in the same turn are closed with."""

UNANSWERED_MESSAGE = "the run stopped before the user answered"
"""What a question still open when its Run moved on without an answer is closed with."""


async def ask(
    ctx: AttemptContext,
    turn: int,
    calls: Sequence[AssembledCall],
    ids: Sequence[ToolCallId],
    index: int,
    arguments: JsonObject,
) -> Next | None:
    """Suspend on the questions of call ``index``; None when the request was refused."""
    call_id = ids[index]
    questions = read_questions(arguments)
    if isinstance(questions, str):
        reject(ctx, call_id, "invalid_arguments", questions)
        return None
    await close_unexecuted(ctx, turn, calls[index + 1 :], ids[index + 1 :], WAITING_MESSAGE)
    stage_suspension(
        ctx.journal,
        ctx.spec.suspension,
        SuspendReason.QUESTION,
        pending_call_id=call_id,
        questions=questions,
        question=one_line(questions),
    )
    await ctx.journal.flush()
    return Next.STOP


async def close_answered(ctx: AttemptContext, call_id: ToolCallId) -> None:
    """Close an open question with the answer the log holds (or say none came)."""
    payload = ctx.journal.state.resume_payloads.get(call_id)
    if payload is None:
        close_call(ctx.journal, call_id, ToolOutcome.ERROR, "not_executed", UNANSWERED_MESSAGE)
        return
    answered = Executed(
        outcome=ToolOutcome.OK, result=answer_from(payload), failure=None, duration=0.0
    )
    await finish(ctx, call_id, "ask_question", answered)
