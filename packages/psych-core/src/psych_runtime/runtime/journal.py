"""The Journal: the only way an Attempt writes to a Run's log.

It folds every record into the Run's state *before* the record is written, so a
writer bug that would produce a contradictory log raises ``CorruptLog`` in the writer
instead of being persisted. It also batches: records are staged (sequenced and folded
at once) and written together at the next durable point with one fenced append, which
is what lets a tool turn cost two round trips instead of one per record.

Consumers may append a few record types while an Attempt runs (an abort, a queued
message, a resume, a child's ending). When such a record lands between two of our
writes, the append conflicts; the Journal then folds what landed, re-sequences its
staged batch after it and tries again. Anything else having landed means another
writer owns the log, and the conflict is raised.

A store outage (``StoreUnavailable``) ends the Journal's writing for good: an append
that met it may or may not have landed, so every later flush, refresh or reopen raises
``StoreUnavailable`` too, and the Attempt hands its Run to a next one, which reads
what really landed.
"""

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from typing import TypeVar

from psych_runtime.core.errors import RunNotFound
from psych_runtime.core.ids import AttemptId
from psych_runtime.core.ids import RunId
from psych_runtime.core.records import EXTERNAL_RECORD_TYPES
from psych_runtime.core.records import Record
from psych_runtime.core.records import TerminalState
from psych_runtime.core.reducer import fold_into
from psych_runtime.core.reducer import reduce
from psych_runtime.core.scope import Scope
from psych_runtime.core.state import RunStateView
from psych_runtime.runtime.clock import utcnow
from psych_runtime.store.errors import BatchTooLarge
from psych_runtime.store.errors import SeqConflict
from psych_runtime.store.errors import StoreUnavailable
from psych_runtime.store.notify import Notifier
from psych_runtime.store.port import Fence
from psych_runtime.store.port import Store
from psych_runtime.telemetry.tracer import RunTracer

R = TypeVar("R", bound=Record)

_MAX_REBASES = 8


class Journal:
    """Sequenced, folded, batched writes to one Run's log."""

    __slots__ = (
        "_attempt_id",
        "_batch_limit",
        "_closed",
        "_committed",
        "_fence",
        "_io",
        "_lost",
        "_pending",
        "_seen_generation",
        "_settle_withdrawn",
        "_store",
        "epoch",
        "observer",
        "records",
        "run_id",
        "scope",
        "state",
    )

    def __init__(
        self,
        store: Store,
        records: Sequence[Record],
        *,
        attempt_id: AttemptId | None = None,
        fence: Fence | None = None,
    ) -> None:
        if not records:
            raise ValueError("a Journal needs at least the run_admitted record")
        self._store = store
        self.records: list[Record] = list(records)
        self.state: RunStateView = reduce(self.records)
        self.run_id: RunId = self.state.run_id
        self.scope: Scope = self.records[0].scope
        self._attempt_id = attempt_id
        self._fence = fence
        self._committed = len(self.records)
        self._pending: list[Record] = []
        self._seen_generation = -1
        self._closed = False
        self._lost: StoreUnavailable | None = None
        self._settle_withdrawn = False
        self._batch_limit: int | None = None
        # Concurrent workflow branches stage and flush through one Journal: its reads
        # and writes take turns, and records staged while one is in flight stay staged.
        self._io = asyncio.Lock()
        self.epoch = 0
        """Bumped whenever ``records`` is rebuilt rather than extended."""
        self.observer: RunTracer | None = None
        """Sees every record staged here (the Run's spans); None without telemetry."""

    @classmethod
    async def open(
        cls,
        store: Store,
        run_id: RunId,
        *,
        attempt_id: AttemptId | None = None,
        fence: Fence | None = None,
    ) -> "Journal":
        """Read the whole log and fold it (raises ``CorruptLog`` for a bad log)."""
        generation = store.notifier.generation(run_id) if store.notifier is not None else -1
        records = await store.read(run_id)
        if not records:
            raise RunNotFound(run_id)
        journal = cls(store, records, attempt_id=attempt_id, fence=fence)
        journal._seen_generation = generation
        return journal

    @property
    def attempt_id(self) -> AttemptId | None:
        """The Attempt this Journal writes for (None for writes outside an Attempt)."""
        return self._attempt_id

    @property
    def head(self) -> int:
        """The seq of the last record known here, staged or written."""
        return self.state.head_seq

    @property
    def committed_seq(self) -> int:
        """The seq of the last record this Journal knows to be durable."""
        return self._committed

    async def settled_view(self) -> tuple[int, bool]:
        """Once no write of ours is in flight: the durable head, and whether it is current.

        The second value is True only with a notifier that hears every writer and has
        announced nothing this Journal has not accounted for (its own appends), so no
        foreign record can be waiting past the head. A watcher uses it to skip a read
        when all that woke it was this Journal's own append.
        """
        async with self._io:
            notifier = self._trusted_notifier()
            current = (
                notifier is not None and notifier.generation(self.run_id) == self._seen_generation
            )
            return self._committed, current

    @property
    def has_pending(self) -> bool:
        """Whether staged records are waiting for the next flush."""
        return bool(self._pending)

    def stage(self, record_type: type[R], *, at: datetime | None = None, **fields: Any) -> R:
        """Build the next record, fold it, and queue it for the next flush.

        Raises:
            CorruptLog: the record would contradict the log; nothing is staged.
            JournalClosed: the Journal was closed.
        """
        if self._closed:
            raise JournalClosed(self.run_id)
        record = record_type(
            run_id=self.run_id,
            seq=self.state.head_seq + 1,
            at=at or utcnow(),
            scope=self.scope,
            attempt_id=self._attempt_id,
            **fields,
        )
        fold_into(self.state, record)
        self._pending.append(record)
        self.records.append(record)
        if self.observer is not None:
            self.observer.on_record(record)
        return record

    async def flush(self) -> None:
        """Write every staged record in one atomic append (no-op when none).

        The append itself is never abandoned half way: when the caller is cancelled
        while it is in flight, the write is allowed to finish first, so this Journal
        knows exactly what is durable before the cancellation carries on.

        Raises:
            JournalClosed: the Journal was closed (its Worker is dying).
            StoreUnavailable: this append, or an earlier one, met a store outage; what
                it wrote is unknown, so nothing more is written through this Journal.
        """
        async with self._io:
            await self._flush()

    async def _flush(self) -> None:
        rebases = 0
        # What is staged now is written by this flush; records staged while a write is
        # in flight follow it and stay staged for the next one.
        left = len(self._pending)
        while True:
            if self._closed:
                raise JournalClosed(self.run_id)
            self._check_not_lost()
            if not self._pending or left <= 0:
                return
            batch = self._pending[: min(left, self._batch_limit or left)]
            notifier = self._trusted_notifier()
            before = notifier.generation(self.run_id) if notifier is not None else 0
            # Started eagerly: a store that answers without suspending (the in-memory
            # one) is done before this returns, with no trip through the event loop.
            write = asyncio.eager_task_factory(
                asyncio.get_running_loop(),
                self._store.append(self.run_id, batch[0].seq, batch, fence=self._fence),
            )
            cancelled = await _settle(write)
            if write.cancelled():
                raise asyncio.CancelledError
            error = write.exception()
            if isinstance(error, SeqConflict) and not cancelled:
                rebases += 1
                if rebases > _MAX_REBASES:
                    raise error
                await self._rebase()
                left = min(left, len(self._pending))
                continue
            if isinstance(error, BatchTooLarge) and len(batch) > 1 and not cancelled:
                # Nothing was written: write the same records in smaller pieces, each
                # a prefix of the log, remembered for the rest of this Attempt.
                self._batch_limit = len(batch) // 2
                continue
            if isinstance(error, StoreUnavailable):
                self._lost = error
            if error is not None:
                raise error
            self._committed += len(batch)
            self._pending = self._pending[len(batch) :]
            left -= len(batch)
            if notifier is not None and self._seen_generation == before:
                # Only our own append moved the generation: nothing foreign to read.
                after = notifier.generation(self.run_id)
                if after == before + 1:
                    self._seen_generation = after
            if cancelled:
                raise asyncio.CancelledError

    def close(self) -> None:
        """Refuse every later write: the Attempt is being abandoned as if it died."""
        self._closed = True

    @property
    def lost(self) -> StoreUnavailable | None:
        """The outage that ended this Journal's writing, or None while it may write."""
        return self._lost

    def _check_not_lost(self) -> None:
        if self._lost is not None:
            raise StoreUnavailable(
                f"run {self.run_id!r}: this attempt met a store outage and writes no more "
                f"({self._lost})"
            ) from self._lost

    async def _read(self, after: int = 0) -> list[Record]:
        """Read the log; an outage here also ends this Journal's writing."""
        self._check_not_lost()
        try:
            return await self._store.read(self.run_id, after=after)
        except StoreUnavailable as error:
            self._lost = error
            raise

    @property
    def pending_records(self) -> tuple[Record, ...]:
        """What is staged and not yet written."""
        return tuple(self._pending)

    def take_withdrawn_settlement(self) -> bool:
        """Whether a rebase withdrew a staged completion (then reset the flag).

        A ``run_settled`` of a completed Run is withdrawn when a steer or follow-up
        landed just before it: the message was accepted, so the Run must not end
        without reading it.
        """
        withdrawn = self._settle_withdrawn
        self._settle_withdrawn = False
        return withdrawn

    def _trusted_notifier(self) -> Notifier | None:
        # A notifier that only hears this process's own writes cannot say that nothing
        # foreign landed; only one that hears every writer may save a read.
        notifier = self._store.notifier
        if notifier is None or not getattr(notifier, "complete", False):
            return None
        return notifier

    async def append(self, record_type: type[R], **fields: Any) -> R:
        """Stage one record and flush everything staged."""
        record = self.stage(record_type, **fields)
        await self.flush()
        return record

    async def refresh(self) -> list[Record]:
        """Fold records other writers appended since our last look.

        Only the external record types are accepted from others; anything else means
        another Attempt is writing and ``SeqConflict`` is raised. Staged records stay
        staged (re-sequenced after what landed, if anything did). With a notifier that
        has seen no change for this Run, this costs no round trip at all.

        Raises:
            StoreUnavailable: the read met a store outage, or an earlier call did.
        """
        async with self._io:
            return await self._refresh()

    async def _refresh(self) -> list[Record]:
        self._check_not_lost()
        notifier = self._trusted_notifier()
        if notifier is not None:
            generation = notifier.generation(self.run_id)
            if generation == self._seen_generation:
                return []
            self._seen_generation = generation
        foreign = await self._read(after=self._committed)
        if not foreign:
            return []
        if self._pending:
            await self._rebase()
        else:
            self._absorb(foreign)
        return foreign

    async def reopen(self) -> "Journal":
        """A fresh Journal for the same Run and Attempt, folded from the store.

        Used after cancelling work whose staged records may or may not have been
        written: the store is the only truth about what landed.

        Raises:
            StoreUnavailable: this Journal met a store outage; its Attempt must stop.
        """
        self._check_not_lost()
        return await Journal.open(
            self._store, self.run_id, attempt_id=self._attempt_id, fence=self._fence
        )

    def adopt(self, other: "Journal") -> None:
        """Take over another Journal's view of the same Run (after ``reopen``)."""
        self.records = other.records
        self.state = other.state
        self._committed = other._committed
        self._pending = other._pending
        self._seen_generation = other._seen_generation
        self.epoch += 1

    def mark_seen(self) -> None:
        """Note the notifier's current generation as already looked at."""
        notifier = self._trusted_notifier()
        if notifier is not None:
            self._seen_generation = notifier.generation(self.run_id)

    def _absorb(self, foreign: Sequence[Record]) -> None:
        for record in foreign:
            if record.type not in EXTERNAL_RECORD_TYPES:
                raise SeqConflict(self.run_id, record.seq)
        for record in foreign:
            fold_into(self.state, record)
            self.records.append(record)
            self._committed += 1

    async def _rebase(self) -> None:
        # Someone appended between our writes. Re-read the committed log, check that
        # only external records (or our own batch, when an earlier append landed after
        # all) are there, then re-sequence what is still staged after them.
        notifier = self._trusted_notifier()
        generation = notifier.generation(self.run_id) if notifier is not None else -1
        committed = await self._read()
        # Taken after the read: whatever was staged meanwhile is re-sequenced too.
        pending = list(self._pending)
        foreign = committed[self._committed :]
        ours = 0
        while (
            ours < len(foreign)
            and ours < len(pending)
            and foreign[ours].attempt_id is not None
            and foreign[ours].attempt_id == self._attempt_id
            and foreign[ours].seq == pending[ours].seq
            and foreign[ours].type == pending[ours].type
        ):
            ours += 1
        for record in foreign[ours:]:
            if record.type not in EXTERNAL_RECORD_TYPES:
                raise SeqConflict(self.run_id, record.seq)
        state = reduce(committed)
        restaged: list[Record] = []
        withdrawn = False
        for record in pending[ours:]:
            if (
                record.type == "run_settled"
                and record.state is TerminalState.COMPLETED
                and (state.pending_steer or state.pending_follow_up)
            ):
                withdrawn = True
                continue
            moved = record.model_copy(update={"seq": state.head_seq + 1})
            fold_into(state, moved)
            restaged.append(moved)
        self.records = [*committed, *restaged]
        self.state = state
        self._committed = len(committed)
        self._pending = restaged
        self._settle_withdrawn = self._settle_withdrawn or withdrawn
        self.epoch += 1
        if notifier is not None:
            self._seen_generation = generation


class JournalClosed(BaseException):
    """The Journal was closed: its Attempt is being abandoned and may write nothing.

    A ``BaseException`` so that no ``except Exception`` in the agent loop turns the
    abandonment into a recorded failure.
    """

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id!r}: the journal is closed")
        self.run_id = run_id


async def _settle(write: "asyncio.Future[None]") -> bool:
    """Wait until ``write`` is done, even through cancellation of the caller.

    Returns:
        Whether the caller was cancelled while waiting; it re-raises the cancellation
        once it has recorded what the write did.
    """
    cancelled = False
    while not write.done():
        try:
            await asyncio.shield(write)
        except asyncio.CancelledError:
            cancelled = True
        except Exception:
            break  # the write failed; its caller reads the outcome from ``write``
    return cancelled
