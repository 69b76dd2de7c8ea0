"""Appending to a Run's log from outside its Attempt: a consumer, or another Run.

Only the external record types (``EXTERNAL_RECORD_TYPES``) are ever written this way;
a Worker holding the Run's lease folds them in at its next look at the log.
"""

from collections.abc import Callable
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from typing import TypeVar

from psych_runtime.core.ids import RunId
from psych_runtime.core.records import Record
from psych_runtime.core.reducer import fold_into
from psych_runtime.core.scope import Scope
from psych_runtime.core.state import RunStateView
from psych_runtime.runtime.reads import FOLDS
from psych_runtime.store.errors import SeqConflict
from psych_runtime.store.port import RunHeader
from psych_runtime.store.port import Store

_APPEND_RETRIES = 16

R = TypeVar("R", bound=Record)


class ExternalBatch:
    """Records built outside an Attempt, numbered and folded as a Journal stages them.

    Lets an external writer (``resume()`` settling an expired wait, say) stage records
    through the same functions an Attempt uses (``settlement.settle``). ``records``
    holds only what was staged here; the state is a copy of the Run's, folded on.

    Args:
        state: the Run's folded state (copied, not changed).
        seq: the seq of the first record to stage.
        scope: the Run's own Scope.
        at: when the records are written.
    """

    __slots__ = ("_at", "_scope", "_seq", "records", "state")

    def __init__(self, state: RunStateView, seq: int, scope: Scope, *, at: datetime) -> None:
        self.state = state.copy()
        self.records: list[Record] = []
        self._seq = seq
        self._scope = scope
        self._at = at

    def stage(self, record_type: type[R], *, at: datetime | None = None, **fields: Any) -> R:
        """Build the next record, fold it, and keep it for the append."""
        record = record_type(
            run_id=self.state.run_id,
            seq=self._seq,
            at=at or self._at,
            scope=self._scope,
            **fields,
        )
        fold_into(self.state, record)
        self.records.append(record)
        self._seq += 1
        return record


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


__all__ = ["ExternalBatch", "append_external"]
