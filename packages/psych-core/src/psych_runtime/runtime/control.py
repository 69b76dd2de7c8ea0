"""The control calls a consumer makes on a live Run: ``interrupt`` and ``send``."""

import sys

from psych_runtime.core.errors import InvalidArgument
from psych_runtime.core.errors import PsychError
from psych_runtime.core.ids import EntryId
from psych_runtime.core.ids import RunId
from psych_runtime.core.records import AbortRequested
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import QueueEnqueued
from psych_runtime.core.records import QueueKind
from psych_runtime.core.records import Record
from psych_runtime.core.scope import Scope
from psych_runtime.core.state import RunStateView
from psych_runtime.runtime.abort import LIVE_ATTEMPTS
from psych_runtime.runtime.arguments import checked_object
from psych_runtime.runtime.arguments import checked_text
from psych_runtime.runtime.arguments import refuser
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.external import append_external
from psych_runtime.runtime.ids import new_entry_id
from psych_runtime.runtime.reads import FOLDS
from psych_runtime.runtime.reads import checked_header
from psych_runtime.store.port import Store


class RunAlreadySettled(PsychError):
    """The Run has ended; it takes no more messages."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id!r} has already settled")
        self.run_id = run_id


class RunStopping(PsychError):
    """The Run was asked to stop, so a steer or follow-up can no longer reach a turn of it.

    Nothing was written. To carry the message on, queue it for the Run's successor
    (``queue=QueueKind.NEXT_RUN``) and dispatch a continuation
    (``dispatch(..., continues=run_id)``), which starts with it; or pass the message
    to that dispatch directly.

    Attributes:
        run_id: the Run that is stopping.
        queue: the queue the message was meant for.
    """

    def __init__(self, run_id: str, queue: QueueKind) -> None:
        super().__init__(
            f"run {run_id!r} was asked to stop, so a {queue.value} message cannot reach it; "
            "send it with queue=QueueKind.NEXT_RUN and dispatch a continuation "
            f"(continues={run_id!r}), which starts with it"
        )
        self.run_id = run_id
        self.queue = queue


_refuse_interrupt = refuser(
    "interrupt", lambda message, argument: InvalidArgument(message, argument=argument)
)
_refuse_send = refuser(
    "send", lambda message, argument: InvalidArgument(message, argument=argument)
)


def _queue_of(queue: object) -> QueueKind:
    """The queue named, as a ``QueueKind`` (its value spelled as a string is accepted)."""
    if isinstance(queue, QueueKind):
        return queue
    if isinstance(queue, str):
        try:
            return QueueKind(queue)
        except ValueError:
            pass
    choices = ", ".join(kind.value for kind in QueueKind)
    raise _refuse_send("queue", queue, f"it must be a QueueKind ({choices})")


async def interrupt(
    store: Store,
    run_id: RunId,
    *,
    reason: str = "",
    by: str | None = None,
    scope: Scope | None = None,
) -> bool:
    """Ask a Run to stop; returns False when it had already settled or been asked.

    Once the request is durable, the Attempt holding the Run (in this process or any
    other) cancels its model call and every interruptible tool call in flight, lets
    uninterruptible calls run to their end, records the cancelled calls ``aborted``
    and settles the Run ``aborted``. A suspended Run is woken for that, and a call
    that waited for a decision is closed without running. The request is passed on to
    every subagent of the Run still working, down the tree.

    Raises:
        InvalidArgument: ``reason`` is not a string of at most 1024 characters, or
            ``by`` not one of at most 256; nothing is written.
        RunNotFound: no such Run.
        AccessDenied: the Run belongs to another tenant.
    """
    checked_text(reason, "reason", _refuse_interrupt, max_length=1024)
    checked_text(by, "by", _refuse_interrupt, max_length=256)
    header = await checked_header(store, run_id, scope)
    waiting = False

    def build(state: RunStateView, seq: int, run_scope: Scope) -> Record | None:
        nonlocal waiting
        if state.settled or state.aborted:
            return None
        waiting = state.suspended
        return AbortRequested(
            run_id=run_id, seq=seq, at=utcnow(), scope=run_scope, reason=reason, requested_by=by
        )

    asked = await append_external(store, run_id, header, build) is not None
    if asked:
        # The request reaches every child still working for this Run, and theirs, with
        # its reason; first, before this Run is stopped or woken here, so that its own
        # settlement does not end them with a reason of its own.
        children = (await FOLDS.fold(store, run_id)).state.live_children
        for child in children:
            await interrupt(store, child.run_id, reason=reason, by=by)
        # An Attempt of this Run held in this process stops at once; one held
        # elsewhere notices the record in its store (``interrupt_watch.py``).
        LIVE_ATTEMPTS.interrupt(run_id)
    if asked and waiting:
        # Nobody holds a suspended Run: wake it so a Worker settles it now.
        await store.set_runnable_at(run_id, None)
    return asked


async def send(
    store: Store,
    run_id: RunId,
    message: str | JsonObject,
    *,
    queue: QueueKind = QueueKind.STEER,
    scope: Scope | None = None,
) -> EntryId:
    """Queue a message for a Run: into its next turn, after its work, or its successor.

    A ``NEXT_RUN`` message is accepted until the Run settles, also after an
    interrupt: that is how a message racing a stop is handed to the Run that
    continues this one (``dispatch(..., continues=run_id)``).

    Raises:
        InvalidArgument: ``message`` is neither a string nor a JSON object every store
            can keep, or ``queue`` names no queue; nothing is written.
        RunNotFound: no such Run.
        AccessDenied: the Run belongs to another tenant.
        RunAlreadySettled: the Run has ended (start a continuation instead).
        RunStopping: a steer or follow-up after the Run was asked to stop; nothing is
            written (queue it for the next Run instead).
    """
    queue = _queue_of(queue)
    if isinstance(message, str):
        checked_text(message, "message", _refuse_send, max_length=sys.maxsize)
        payload: JsonObject = {"message": message}
    else:
        payload = checked_object(message, "message", _refuse_send) or {}
    header = await checked_header(store, run_id, scope)
    entry_id = new_entry_id()

    def build(state: RunStateView, seq: int, run_scope: Scope) -> Record | None:
        if state.settled:
            raise RunAlreadySettled(run_id)
        if state.aborted and queue is not QueueKind.NEXT_RUN:
            raise RunStopping(run_id, queue)
        return QueueEnqueued(
            run_id=run_id,
            seq=seq,
            at=utcnow(),
            scope=run_scope,
            queue=queue,
            entry_id=entry_id,
            payload=payload,
        )

    await append_external(store, run_id, header, build)
    return entry_id


__all__ = ["RunAlreadySettled", "RunStopping", "interrupt", "send"]
