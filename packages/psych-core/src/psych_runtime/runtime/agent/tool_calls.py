"""The tool phase: the calls of one model answer, in order, each checked, run, finished.

Each call's ``tool_call_started`` is written (with whatever finished before it) just
before the call runs; its ``tool_call_finished`` rides along with the next durable
point. The phase closes the rest of the turn unexecuted when the per-turn cap is
reached, when a repeated call hits the hard stop, when a call waits for a person's
approval (``gate.py``) or asks the user a question (``question.py``): the Run
suspends, or when the Run is aborted between two calls.
"""

from psych_runtime.runtime.agent.call_checks import Refused
from psych_runtime.runtime.agent.call_checks import check_call
from psych_runtime.runtime.agent.call_checks import close_unexecuted
from psych_runtime.runtime.agent.call_checks import reject
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.execute import execute
from psych_runtime.runtime.agent.finish import finish
from psych_runtime.runtime.agent.gate import WAITING_MESSAGE
from psych_runtime.runtime.agent.gate import judge_call
from psych_runtime.runtime.agent.gate import suspend_for_approval
from psych_runtime.runtime.agent.model_turn import Answer
from psych_runtime.runtime.agent.question import ask
from psych_runtime.tools.approval import Verdict
from psych_runtime.tools.ask_question import ASK_QUESTION

_STOP_ASKED = "the run was asked to stop"


async def run_calls(ctx: AttemptContext, answer: Answer) -> Next:
    """Run the tool calls of ``answer``; the loop then takes another turn."""
    journal = ctx.journal
    turn, calls, ids = answer.turn, answer.calls, answer.call_ids
    cap = ctx.spec.limits.max_tool_calls_per_turn
    for index, call_id in enumerate(ids):
        if index >= cap:
            await close_unexecuted(
                ctx,
                turn,
                calls[index:],
                ids[index:],
                f"only {cap} tool calls are allowed per turn; this one was not run",
            )
            break
        checked = await check_call(ctx, turn, calls, ids, index, answer.offered)
        if checked is Refused.TURN:
            break
        if checked is Refused.CALL:
            continue
        name = calls[index].name or "unnamed"
        if name == ASK_QUESTION:
            asked = await ask(ctx, turn, calls, ids, index, checked)
            if asked is None:
                continue
            return asked
        judgement = await judge_call(ctx, call_id, name, checked)
        if judgement.verdict is Verdict.DENY:
            continue
        if judgement.verdict is Verdict.ASK:
            later = slice(index + 1, None)
            await close_unexecuted(ctx, turn, calls[later], ids[later], WAITING_MESSAGE)
            suspend_for_approval(ctx, call_id, judgement.reason)
            await journal.flush()
            return Next.STOP
        await journal.flush()
        if ctx.aborted():
            reject(ctx, call_id, "not_executed", _STOP_ASKED)
            await close_unexecuted(ctx, turn, calls[index + 1 :], ids[index + 1 :], _STOP_ASKED)
            break
        executed = await execute(ctx, call_id, name, checked)
        await finish(ctx, call_id, name, executed)
        if index + 1 == len(ids):
            # The turn's last call: the next turn starts by folding what others wrote
            # (and stops there if the Run was aborted), so looking now would only read
            # the log twice in a row.
            break
        await journal.refresh()
        if ctx.aborted():
            await close_unexecuted(ctx, turn, calls[index + 1 :], ids[index + 1 :], _STOP_ASKED)
            break
    return Next.CONTINUE
