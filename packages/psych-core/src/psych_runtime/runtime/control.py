"""The control calls a consumer makes on a live Run: ``interrupt`` and ``send``."""

from psych_runtime.core.errors import PsychError
from psych_runtime.core.ids import EntryId, RunId
from psych_runtime.core.records import (
    AbortRequested,
    JsonObject,
    QueueEnqueued,
    QueueKind,
    Record,
)
from psych_runtime.core.scope import Scope
from psych_runtime.core.state import RunStateView
from psych_runtime.runtime.abort import LIVE_ATTEMPTS
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.external import append_external
from psych_runtime.runtime.ids import new_entry_id
from psych_runtime.runtime.reads import FOLDS, checked_header
from psych_runtime.store.port import Store


class RunAlreadySettled(PsychError):
    """The Run has ended; it takes no more messages."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id!r} has already settled")
        self.run_id = run_id


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
    """
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
        # An Attempt of this Run held in this process stops at once; one held
        # elsewhere notices the record in its store (``interrupt_watch.py``).
        LIVE_ATTEMPTS.interrupt(run_id)
    if asked and waiting:
        # Nobody holds a suspended Run: wake it so a Worker settles it now.
        await store.set_runnable_at(run_id, None)
    if asked:
        # The request reaches every child still working for this Run, and theirs.
        children = (await FOLDS.fold(store, run_id)).state.live_children
        for child in children:
            await interrupt(store, child.run_id, reason=reason, by=by)
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

    Raises:
        RunAlreadySettled: the Run has ended (start a continuation instead).
        CorruptLog: a steer or follow-up after the Run was asked to stop.
    """
    header = await checked_header(store, run_id, scope)
    payload: JsonObject = {"message": message} if isinstance(message, str) else dict(message)
    entry_id = new_entry_id()

    def build(state: RunStateView, seq: int, run_scope: Scope) -> Record | None:
        if state.settled:
            raise RunAlreadySettled(run_id)
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


__all__ = ["RunAlreadySettled", "interrupt", "send"]
