"""``resume()``: a person's decision, an answer or an event ends a Run's suspension.

The decision goes into the Run's log (``resumed``, with who made it), the parking is
cleared, and the store's notifier wakes an idle Worker at once. A resume that arrives
after the suspension expired settles the Run ``abandoned`` instead and raises
``SuspensionExpired``, so a stale approval never runs anything.
"""

from psych_runtime.core.errors import InvalidArgument
from psych_runtime.core.errors import PsychError
from psych_runtime.core.ids import RunId
from psych_runtime.core.json_schema import value_problems
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import Record
from psych_runtime.core.records import Resumed
from psych_runtime.core.scope import Scope
from psych_runtime.core.state import RunStateView
from psych_runtime.core.suspend_reasons import rules
from psych_runtime.runtime.arguments import checked_flag
from psych_runtime.runtime.arguments import checked_object
from psych_runtime.runtime.arguments import checked_text
from psych_runtime.runtime.arguments import refuser
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.external import ExternalBatch
from psych_runtime.runtime.external import append_external
from psych_runtime.runtime.reads import checked_header
from psych_runtime.runtime.settlement import abandoned
from psych_runtime.runtime.settlement import settle
from psych_runtime.runtime.suspension import EXPIRED_CALL_MESSAGE
from psych_runtime.runtime.suspension import EXPIRED_MESSAGE
from psych_runtime.runtime.suspension import expired
from psych_runtime.store.port import Store


class RunNotSuspended(PsychError):
    """The Run is not waiting on anything (it is running, or has settled)."""

    def __init__(self, run_id: RunId) -> None:
        super().__init__(f"run {run_id} is not suspended")
        self.run_id = run_id


class SuspensionExpired(PsychError):
    """The suspension outlived its expiry; the Run has been settled ``abandoned``."""

    def __init__(self, run_id: RunId) -> None:
        super().__init__(f"run {run_id} waited past its suspension's expiry and was abandoned")
        self.run_id = run_id


class InvalidResume(InvalidArgument):
    """The resume is refused and the Run keeps waiting.

    Its arguments are of the wrong kind (a decision that is not a bool, a payload that
    is not a JSON object), or they do not fit what the Run waits for (an approval
    needs a decision, an event's payload its declared schema).
    """


_refuse = refuser("resume", lambda message, argument: InvalidResume(message, argument=argument))


async def resume(
    store: Store,
    run_id: RunId,
    *,
    approved: bool | None = None,
    payload: JsonObject | None = None,
    by: str | None = None,
    scope: Scope | None = None,
) -> None:
    """End a Run's suspension and wake a Worker to continue it.

    Args:
        store: where the Run lives.
        run_id: the suspended Run.
        approved: the decision on a pending approval (required for one): exactly
            True or False, never a truthy stand-in such as ``"yes"``; ignored by other
            suspensions.
        payload: the answer, the event's data, or (with a denial) ``{"reason": ...}``
            that the model is told: a JSON object.
        by: who decided, kept in the log as given (a string of at most 256
            characters).
        scope: the caller's tenancy; another tenant's Run raises ``AccessDenied``.

    Raises:
        RunNotFound: no such Run.
        AccessDenied: the Run belongs to another tenant.
        RunNotSuspended: the Run waits on nothing (running, or settled).
        InvalidResume: an argument of the wrong kind (``approved`` not a bool,
            ``payload`` not a JSON object every store can keep, ``by`` not a string of
            at most 256 characters), an approval without ``approved``, or an event
            whose payload does not fit the schema the wait declared. The Run keeps
            waiting and nothing is written.
        SuspensionExpired: too late; the Run is now settled ``abandoned``.
    """
    approved = checked_flag(approved, "approved", _refuse)
    body: JsonObject = checked_object(payload, "payload", _refuse) or {}
    by = checked_text(by, "by", _refuse, max_length=256)
    header = await checked_header(store, run_id, scope)
    too_late = False

    def build(state: RunStateView, seq: int, run_scope: Scope) -> list[Record]:
        nonlocal too_late
        if state.settled or not state.suspended:
            raise RunNotSuspended(run_id)
        now = utcnow()
        if expired(state, now):
            too_late = True
            batch = ExternalBatch(state, seq, run_scope, at=now)
            settle(batch, abandoned(EXPIRED_MESSAGE, EXPIRED_CALL_MESSAGE))
            return batch.records
        waiting_for = rules(state.suspend_reason) if state.suspend_reason else None
        if waiting_for is not None and waiting_for.needs_decision and approved is None:
            raise InvalidResume(
                f"run {run_id} waits for an approval: pass approved=True or approved=False"
            )
        if waiting_for is not None and waiting_for.checks_payload:
            problems = value_problems(body, state.suspend_payload_schema)
            if problems:
                # The event is refused; the Run keeps waiting for a valid one.
                raise InvalidResume(
                    f"the payload does not fit event {state.suspend_event!r}: "
                    + "; ".join(problems)
                )
        resumed = Resumed(
            run_id=run_id,
            at=now,
            scope=run_scope,
            seq=seq,
            payload=body,
            approved=approved,
            resumed_by=by,
        )
        return [resumed]

    await append_external(store, run_id, header, build)
    # Wake the Run now: a Worker continues it, or (expired) finds it settled and lets
    # it go.
    await store.set_runnable_at(run_id, None)
    if too_late:
        raise SuspensionExpired(run_id)


__all__ = ["InvalidResume", "RunNotSuspended", "SuspensionExpired", "resume"]
