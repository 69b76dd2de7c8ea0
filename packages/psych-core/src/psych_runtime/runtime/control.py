"""The control calls a consumer makes on a live Run: ``interrupt`` and ``send``."""

from collections.abc import Callable, Sequence

from psych_runtime.core.errors import PsychError
from psych_runtime.core.ids import EntryId, RunId
from psych_runtime.core.records import (
    AbortRequested,
    JsonObject,
    QueueEnqueued,
    QueueKind,
    Record,
)
from psych_runtime.core.reducer import fold_into
from psych_runtime.core.scope import Scope
from psych_runtime.core.state import RunStateView
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.ids import new_entry_id
from psych_runtime.runtime.reads import FOLDS, checked_header
from psych_runtime.store.errors import SeqConflict
from psych_runtime.store.port import RunHeader, Store

_APPEND_RETRIES = 16


class RunAlreadySettled(PsychError):
    """The Run has ended; it takes no more messages."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id!r} has already settled")
        self.run_id = run_id


async def append_external(
    store: Store,
    run_id: RunId,
    header: RunHeader,
    build: Callable[[RunStateView, int, Scope], Record | Sequence[Record] | None],
) -> Record | None:
    """Append consumer records at the head, retrying when a Worker writes first.

    ``build`` sees the current state, the next seq and the Run's own scope, and returns
    the record (or the records, numbered from that seq) to write, or None to write
    nothing. The records are folded onto the current state before they are written,
    so a message the protocol forbids (a steer after an abort) raises ``CorruptLog``
    here and never reaches the log. Returns the last record written.
    """
    for _ in range(_APPEND_RETRIES):
        fold = await FOLDS.fold(store, run_id)
        built = build(fold.state, fold.state.head_seq + 1, header.scope)
        if built is None:
            return None
        batch: list[Record] = list(built) if isinstance(built, Sequence) else [built]
        probe = fold.state.copy()
        for record in batch:
            fold_into(probe, record)
        try:
            await store.append(run_id, batch[0].seq, batch)
        except SeqConflict:
            continue
        return batch[-1]
    raise SeqConflict(run_id, -1)


async def interrupt(
    store: Store,
    run_id: RunId,
    *,
    reason: str = "",
    by: str | None = None,
    scope: Scope | None = None,
) -> bool:
    """Ask a Run to stop; returns False when it had already settled or been asked.

    The Worker sees the request at its next check (after the tool call in progress,
    or before the next turn) and settles the Run ``aborted``. A suspended Run is woken
    for that, and a call that waited for a decision is closed without running.
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


__all__ = ["RunAlreadySettled", "append_external", "interrupt", "send"]
