"""The approval gate: a call that passed its checks runs now, is refused, or waits.

The Runtime's ``ApprovalRules`` and the consumer's ``Policy`` judge each call (see
``tools/approval.py``). A refusal is data for the model (``access_denied``). A call
that needs a person suspends the Run before it starts: its ``tool_call_started`` is
already in the log, so ``status()`` can show the exact call, and the calls after it in
the same turn are closed ``not_executed`` (the model may ask for them again once this
one is decided). Approval is per call.

After ``resume()``, the next Attempt finds the call open with a decision in the log
(``dangling.py``): approved, it runs it; denied, it closes it ``denied``. An approved
call runs at most once. The Attempt acting on the approval writes its start just
before it runs the call; if its Worker dies before that write lands, the approval
waits for the next Attempt, which runs the call. If it dies after, the call may have
run: the next Attempt closes it ``unknown`` (``orphaned``) and the model is told so,
unless the tool is registered idempotent, in which case it runs again under the same
idempotency key.
"""

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import ToolOutcome
from psych_runtime.runtime.agent.call_checks import reject
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.open_calls import close_call
from psych_runtime.runtime.suspension import stage_suspension
from psych_runtime.tools.approval import Judgement
from psych_runtime.tools.approval import Verdict
from psych_runtime.tools.approval import judge
from psych_runtime.tools.deferred import CALL_TOOL
from psych_runtime.tools.deferred import call_target
from psych_runtime.tools.errors import ToolArgumentsInvalid

WAITING_MESSAGE = (
    "not run: an earlier call in this turn is waiting for a person's approval; "
    "ask for this call again once that one is decided, if it is still needed"
)
"""What the calls after a suspended one in the same turn are closed with."""


async def judge_call(
    ctx: AttemptContext, call_id: ToolCallId, name: str, arguments: JsonObject
) -> Judgement:
    """Judge one call; a refusal is staged here, a suspension is the caller's to stage.

    A ``call_tool`` is judged as the tool it calls, with that tool's arguments; one
    naming no tool this turn defers is refused here, before anything runs.
    """
    judged, passed = name, arguments
    if name == CALL_TOOL:
        try:
            target, passed = call_target(ctx.tools.deferred, arguments)
        except ToolArgumentsInvalid as error:
            reject(ctx, call_id, "unknown_tool", str(error))
            return Judgement(Verdict.DENY, str(error))
        judged = target.name
    judgement = await judge(
        ctx.deps.approvals,
        ctx.deps.policy,
        ctx.journal.scope,
        judged,
        ctx.tools.tool_class(judged),
        passed,
    )
    if judgement.verdict is Verdict.DENY:
        reject(ctx, call_id, "access_denied", judgement.reason)
    return judgement


def suspend_for_approval(ctx: AttemptContext, call_id: ToolCallId, reason: str) -> None:
    """Stage the approval suspension for ``call_id``, which is open in the log."""
    first_line = reason.strip().splitlines()[0][:8192] if reason.strip() else None
    stage_suspension(
        ctx.journal,
        ctx.spec.suspension,
        SuspendReason.APPROVAL,
        pending_call_id=call_id,
        question=first_line,
    )


def denied(ctx: AttemptContext, call_id: ToolCallId) -> None:
    """Close a call a person denied; the model reads who denied it and why."""
    payload = ctx.journal.state.resume_payloads.get(call_id, {})
    why = payload.get("reason")
    message = "a person denied this call"
    if isinstance(why, str) and why.strip():
        message += f": {why.strip()}"
    close_call(ctx.journal, call_id, ToolOutcome.ERROR, "denied", message)


def approved_now(ctx: AttemptContext, call_id: ToolCallId) -> bool | None:
    """The decision this Attempt acts on for an open call: True, False, or None.

    An approval is acted on only by the first Attempt after the decision: if an
    earlier one started and vanished, the call is in doubt like any other (it may
    have run), and is settled as ``dangling.py`` settles every call in doubt. A
    denial always stands.
    """
    state = ctx.journal.state
    decision = state.approval_decisions.get(call_id)
    if decision is None:
        return None
    if not decision:
        return False
    if state.decided_at_attempt.get(call_id) == state.attempt_count - 1:
        return True
    return None
