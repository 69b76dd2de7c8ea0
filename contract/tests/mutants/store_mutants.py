"""Deliberately wrong Stores: each breaks one rule of the port, the way real adapters have.

A mutant is built from a correct store, an ``InMemoryStore`` or a ``SqliteStore``, as a
thin wrapper (when the fault can be made from outside) or a subclass (when it sits in
how a call does its work: an order, a filter, a read followed by a write). Each names
the contract cases that must fail against it; ``test_store_mutants`` checks that they
do, so a weakened case is noticed the day it stops catching anything.
"""

import asyncio
import contextlib
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta
from pathlib import Path

from psych_store_example import ExampleStore

from psych_runtime import RunId
from psych_runtime import RunNotFound
from psych_runtime import Store
from psych_runtime.adapters import WORK
from psych_runtime.adapters import Admission
from psych_runtime.adapters import Fence
from psych_runtime.adapters import InMemoryStore
from psych_runtime.adapters import LocalNotifier
from psych_runtime.adapters import Notifier
from psych_runtime.adapters import RunHeader
from psych_runtime.adapters import RunState
from psych_runtime.adapters import SeqConflict
from psych_runtime.adapters import claim_order
from psych_runtime.adapters import claimable
from psych_runtime.records import Record
from psych_runtime.records import RunAdmitted
from psych_runtime.records import WorkerId
from psych_runtime.testing import ForwardingStore
from psych_store_sqlite import SqliteStore
from psych_store_sqlite import _queries
from psych_store_sqlite._rows import SELECT_HEADER
from psych_store_sqlite._rows import header_from_row
from psych_store_sqlite._rows import optional_micros
from psych_store_sqlite._rows import to_micros

_MICROSECOND = timedelta(microseconds=1)


class Forwarding(ForwardingStore):
    """Passes every port call to ``inner``; a mutant overrides the call it breaks."""

    async def migrate(self) -> list[int]:
        migrate = getattr(self.inner, "migrate", None)
        return [] if migrate is None else list(await migrate())


class Rendezvous:
    """Holds each caller that reaches it until a second caller has reached it too.

    A check-then-write or select-then-update fault only shows when two callers pass
    the check before either writes; on a thread-backed store that order is up to the
    scheduler. The mutant makes it certain: the first caller through waits here for
    the second (and every later one passes straight on), so the race is lost on every
    run. ``patience`` only bounds a call that is alone: it is never the fault's cause.
    """

    def __init__(self, patience: float = 5.0) -> None:
        self._arrived = 0
        self._second = asyncio.Event()
        self._patience = patience

    async def meet(self) -> None:
        self._arrived += 1
        if self._arrived >= 2:
            self._second.set()
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._second.wait(), self._patience)

    def reset(self) -> None:
        self._arrived = 0
        self._second = asyncio.Event()


# --- wrappers: faults made from outside the store ---------------------------------------


class DroppedHeaderFields(Forwarding):
    """Forgets the delegation fields of every header it returns."""

    @staticmethod
    def _strip(header: RunHeader | None) -> RunHeader | None:
        if header is None:
            return None
        return header.model_copy(
            update={"parent_run_id": None, "continues_run_id": None, "delegation_depth": 0}
        )

    async def create_run(self, header: RunHeader, admitted: RunAdmitted) -> Admission:
        admission = await self.inner.create_run(header, admitted)
        stripped = self._strip(admission.header)
        assert stripped is not None
        return Admission(stripped, admission.created)

    async def get_run(self, run_id: RunId, *, tenant: str | None = None) -> RunHeader | None:
        return self._strip(await self.inner.get_run(run_id, tenant=tenant))

    async def claim(
        self, worker_id: WorkerId, now: datetime, lease_seconds: float
    ) -> RunHeader | None:
        return self._strip(await self.inner.claim(worker_id, now, lease_seconds))


class NaiveIdempotencyJoin(Forwarding):
    """Keys admissions by ``f"{tenant}:{key}"``, so two tenants' keys can collide."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self._joined: dict[str, RunId] = {}

    async def create_run(self, header: RunHeader, admitted: RunAdmitted) -> Admission:
        if header.idempotency_key is not None:
            joined = f"{header.scope.tenant}:{header.idempotency_key}"
            existing = self._joined.get(joined)
            if existing is not None:
                found = await self.inner.get_run(existing)
                assert found is not None
                return Admission(found, created=False)
            admission = await self.inner.create_run(header, admitted)
            self._joined[joined] = admission.header.run_id
            return admission
        return await self.inner.create_run(header, admitted)


class _BentLeases(Forwarding):
    """Hands ``claim`` and ``renew`` a bent moment and lease length; subclasses say how."""

    def _moment(self, moment: datetime) -> datetime:
        return moment

    def _lease(self, seconds: float) -> float:
        return seconds

    async def claim(
        self, worker_id: WorkerId, now: datetime, lease_seconds: float
    ) -> RunHeader | None:
        return await self.inner.claim(worker_id, self._moment(now), self._lease(lease_seconds))

    async def renew(
        self,
        run_id: RunId,
        worker_id: WorkerId,
        now: datetime,
        lease_seconds: float,
        *,
        attempt_count: int | None = None,
    ) -> bool:
        return await self.inner.renew(
            run_id,
            worker_id,
            self._moment(now),
            self._lease(lease_seconds),
            attempt_count=attempt_count,
        )


class TruncatedLease(_BentLeases):
    """Keeps leases to whole seconds."""

    def _lease(self, seconds: float) -> float:
        return int(seconds)


class MillisecondTimes(_BentLeases):
    """Keeps claim and renew times and leases in whole milliseconds."""

    def _moment(self, moment: datetime) -> datetime:
        return moment.replace(microsecond=moment.microsecond // 1000 * 1000)

    def _lease(self, seconds: float) -> float:
        return round(seconds, 3)


class SweepsWithoutTieBreak(Forwarding):
    """Orders the sweeps by time only, ties in reverse run id order (a heap's whim)."""

    async def expired_leases(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        found = await self.inner.expired_leases(now, 10_000)
        ordered = sorted(found, key=lambda h: h.run_id, reverse=True)
        return sorted(ordered, key=lambda h: h.lease_expires_at or now)[:limit]

    async def overdue_deadlines(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        found = await self.inner.overdue_deadlines(now, 10_000)
        ordered = sorted(found, key=lambda h: h.run_id, reverse=True)
        return sorted(ordered, key=lambda h: h.deadline_at)[:limit]


class TenantCaseInsensitive(Forwarding):
    """Compares tenants without regard to case, as a case-insensitive collation does."""

    async def get_run(self, run_id: RunId, *, tenant: str | None = None) -> RunHeader | None:
        header = await self.inner.get_run(run_id)
        if header is None or (tenant is not None and header.scope.tenant.lower() != tenant.lower()):
            return None
        return header

    async def read(
        self, run_id: RunId, *, after: int = 0, limit: int | None = None, tenant: str | None = None
    ) -> list[Record]:
        if tenant is not None and await self.get_run(run_id, tenant=tenant) is None:
            return []
        return await self.inner.read(run_id, after=after, limit=limit)


class CompleteNotifierThatHearsOnlyItself(Forwarding):
    """Reports its process-local notifier as ``complete``."""

    @property
    def notifier(self) -> Notifier | None:
        inner = self.inner.notifier
        if inner is None:
            return None
        return _CompleteView(inner)


class _CompleteView:
    def __init__(self, inner: Notifier) -> None:
        self._inner = inner

    @property
    def complete(self) -> bool:
        return True

    def generation(self, key: str) -> int:
        return self._inner.generation(key)

    def signal(self, key: str) -> None:
        self._inner.signal(key)

    async def wait(self, key: str, seen: int, timeout: float) -> bool:
        return await self._inner.wait(key, seen, timeout)


class CloseDoesNothing(Forwarding):
    """Leaves its connections open and keeps answering."""

    async def close(self) -> None:
        return None


class ReleaseKeepsParking(Forwarding):
    """Keeps the earlier ``runnable_at`` when a release names none."""

    async def release(
        self,
        run_id: RunId,
        worker_id: WorkerId,
        state: RunState,
        *,
        runnable_at: datetime | None = None,
        deadline_at: datetime | None = None,
        attempt_count: int | None = None,
    ) -> None:
        if runnable_at is None:
            header = await self.inner.get_run(run_id)
            runnable_at = None if header is None else header.runnable_at
        await self.inner.release(
            run_id,
            worker_id,
            state,
            runnable_at=runnable_at,
            deadline_at=deadline_at,
            attempt_count=attempt_count,
        )


class StrictClaimBoundary(Forwarding):
    """Treats a lease or a parking time ending exactly now as still running."""

    async def claim(
        self, worker_id: WorkerId, now: datetime, lease_seconds: float
    ) -> RunHeader | None:
        return await self.inner.claim(worker_id, now - _MICROSECOND, lease_seconds + 1e-6)


class StrictLeaseSweep(Forwarding):
    """Lists a lease as expired only after its expiry, not at it."""

    async def expired_leases(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        return await self.inner.expired_leases(now - _MICROSECOND, limit)


class StrictDeadlineSweep(Forwarding):
    """Lists a deadline as overdue only after it, not at it."""

    async def overdue_deadlines(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        return await self.inner.overdue_deadlines(now - _MICROSECOND, limit)


# --- subclasses of InMemoryStore: faults in how a call does its work ---------------------


class MemoryClaim(InMemoryStore):
    """``InMemoryStore`` with its claim's order, filter or atomicity swapped out."""

    order: Callable[[RunHeader], tuple[datetime, datetime, str]] = staticmethod(claim_order)
    claimable: Callable[[RunHeader, datetime], bool] = staticmethod(claimable)
    pause_between_choice_and_update = False

    async def claim(
        self, worker_id: WorkerId, now: datetime, lease_seconds: float
    ) -> RunHeader | None:
        self._check_open()
        candidates = [
            self._headers[r] for r in self._candidates if self.claimable(self._headers[r], now)
        ]
        if not candidates:
            return None
        best = min(candidates, key=self.order)
        if self.pause_between_choice_and_update:
            await asyncio.sleep(0)  # another claimer chooses the same Run meanwhile
        claimed = best.model_copy(
            update={
                "state": RunState.RUNNING,
                "lease_holder": worker_id,
                "lease_expires_at": now + timedelta(seconds=lease_seconds),
                "attempt_count": best.attempt_count + 1,
            }
        )
        self._put(claimed)
        return claimed


class MemoryOrderIgnoresParking(MemoryClaim):
    order = staticmethod(lambda h: (h.created_at, h.created_at, h.run_id))


class MemoryFutureCreatedAtWaits(MemoryClaim):
    claimable = staticmethod(lambda h, now: claimable(h, now) and h.created_at <= now)


class MemoryParkedRunningReclaimed(MemoryClaim):
    claimable = staticmethod(
        lambda h, now: (
            claimable(h, now)
            or (
                h.state is RunState.RUNNING
                and h.lease_expires_at is not None
                and h.lease_expires_at <= now
            )
        )
    )


class MemorySelectThenUpdate(MemoryClaim):
    pause_between_choice_and_update = True


class MemoryCheckThenWrite(InMemoryStore):
    """Checks the head, yields, then writes without checking again."""

    async def append(
        self,
        run_id: RunId,
        expected_seq: int,
        records: Sequence[Record],
        *,
        fence: Fence | None = None,
    ) -> None:
        header = self._headers.get(run_id)
        if header is None:
            raise RunNotFound(run_id)
        if len(self._logs[run_id]) != expected_seq - 1:
            raise SeqConflict(run_id, expected_seq)
        await asyncio.sleep(0)
        self._logs[run_id].extend(records)
        self._notifier.signal(run_id)


class MemorySilentUnpark(InMemoryStore):
    """Unparks without signalling ``WORK``."""

    async def set_runnable_at(self, run_id: RunId, runnable_at: datetime | None) -> None:
        quiet = LocalNotifier()
        loud, self._notifier = self._notifier, quiet
        try:
            await super().set_runnable_at(run_id, runnable_at)
        finally:
            self._notifier = loud


class MemoryParksSettledRuns(InMemoryStore):
    """Parks a settled Run like any other."""

    async def set_runnable_at(self, run_id: RunId, runnable_at: datetime | None) -> None:
        header = self._headers.get(run_id)
        if header is not None and header.state is RunState.SETTLED:
            self._put(header.model_copy(update={"runnable_at": runnable_at}))
            return
        await super().set_runnable_at(run_id, runnable_at)


# --- subclasses of SqliteStore: the same faults in SQL -----------------------------------

_CORRECT_ORDER = "ORDER BY coalesce(runnable_at, created_at), created_at, run_id"
_CORRECT_PARKING = "AND (runnable_at IS NULL OR runnable_at <= :now)"


def _changed(sql: str, old: str, new: str) -> str:
    assert old in sql, f"the SQLite claim no longer contains {old!r}; update this mutant"
    return sql.replace(old, new)


class SqliteClaim(SqliteStore):
    """``SqliteStore`` whose claim runs different SQL."""

    claim_sql = _queries._CLAIM

    async def claim(
        self, worker_id: WorkerId, now: datetime, lease_seconds: float
    ) -> RunHeader | None:
        params = {
            "holder": worker_id,
            "expires": to_micros(now + timedelta(seconds=lease_seconds)),
            "now": to_micros(now),
        }
        rows = await self._lanes.write(lambda conn: conn.execute(self.claim_sql, params).fetchall())
        return header_from_row(rows[0]) if rows else None


class SqliteOrderIgnoresParking(SqliteClaim):
    claim_sql = _changed(_queries._CLAIM, _CORRECT_ORDER, "ORDER BY created_at, run_id")


class SqliteFutureCreatedAtWaits(SqliteClaim):
    claim_sql = _changed(
        _queries._CLAIM, _CORRECT_PARKING, _CORRECT_PARKING + " AND created_at <= :now"
    )


class SqliteParkedRunningReclaimed(SqliteClaim):
    claim_sql = _changed(
        _queries._CLAIM,
        _CORRECT_PARKING,
        "AND (runnable_at IS NULL OR runnable_at <= :now OR state = 'running')",
    )


class SqliteSelectThenUpdate(SqliteStore):
    """Chooses the Run in one statement and leases it in another, unconditionally.

    Two claimers always both choose before either updates (``Rendezvous``).
    """

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self._meeting: dict[str, Rendezvous] = {}

    async def claim(
        self, worker_id: WorkerId, now: datetime, lease_seconds: float
    ) -> RunHeader | None:
        moment = to_micros(now)
        chosen = await self._lanes.read(
            lambda conn: conn.execute(
                "SELECT run_id FROM psych_runs WHERE state IN ('runnable', 'running') "
                "AND (runnable_at IS NULL OR runnable_at <= ?) "
                "AND (state = 'runnable' OR lease_expires_at IS NULL OR lease_expires_at <= ?) "
                f"{_CORRECT_ORDER} LIMIT 1",
                (moment, moment),
            ).fetchall()
        )
        if not chosen:
            return None
        await self._meeting.setdefault(str(chosen[0][0]), Rendezvous()).meet()
        expires = to_micros(now + timedelta(seconds=lease_seconds))
        rows = await self._lanes.write(
            lambda conn: conn.execute(
                "UPDATE psych_runs SET state = 'running', lease_holder = ?, lease_expires_at = ?, "
                f"attempt_count = attempt_count + 1 WHERE run_id = ? RETURNING {SELECT_HEADER}",
                (worker_id, expires, chosen[0][0]),
            ).fetchall()
        )
        return header_from_row(rows[0]) if rows else None


class SqliteCheckThenWrite(SqliteStore):
    """Reads the head, yields, then inserts the batch without checking again.

    Two appenders at one seq always both pass the check before either inserts
    (``Rendezvous``), so the fault shows on every run, not on a lucky schedule.
    """

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self._meeting: dict[tuple[str, int], Rendezvous] = {}

    async def append(
        self,
        run_id: RunId,
        expected_seq: int,
        records: Sequence[Record],
        *,
        fence: Fence | None = None,
    ) -> None:
        if await self.get_run(run_id) is None:
            raise RunNotFound(run_id)
        if await self.head(run_id) != expected_seq - 1:
            raise SeqConflict(run_id, expected_seq)
        await self._meeting.setdefault((run_id, expected_seq), Rendezvous()).meet()
        batch = _queries.encode(records)

        def write(conn: object) -> None:
            import sqlite3

            assert isinstance(conn, sqlite3.Connection)
            conn.executemany(
                _queries._INSERT_RECORD,
                [(run_id, item.seq, item.type, item.body) for item in batch],
            )
            conn.execute(
                "UPDATE psych_runs SET head_seq = head_seq + ? WHERE run_id = ?",
                (len(batch), run_id),
            )

        await self._lanes.write(write)
        self._notifier.signal(run_id)


class SqliteSilentUnpark(SqliteStore):
    """Unparks without signalling ``WORK``."""

    async def set_runnable_at(self, run_id: RunId, runnable_at: datetime | None) -> None:
        await self._lanes.write(lambda conn: _queries.set_runnable_at(conn, run_id, runnable_at))


class SqliteParksSettledRuns(SqliteStore):
    """Parks a settled Run like any other."""

    async def set_runnable_at(self, run_id: RunId, runnable_at: datetime | None) -> None:
        header = await self.get_run(run_id)
        if header is not None and header.state is RunState.SETTLED:
            moment = optional_micros(runnable_at)
            await self._lanes.write(
                lambda conn: conn.execute(
                    "UPDATE psych_runs SET runnable_at = ? WHERE run_id = ?", (moment, run_id)
                )
            )
            return
        await super().set_runnable_at(run_id, runnable_at)


# --- signals that come too early, or not at all ----------------------------------------


class _SignalsBeforeCommit:
    """Signals an append, lets the woken reader look, and only then writes the batch.

    Mixed in before a store class. The reads of each Run are marked, and a look counts
    once it has returned, so the write that follows can never land before the look
    reads the store (a thread-backed store would otherwise race).
    """

    _notifier: LocalNotifier

    def _looked(self, run_id: RunId) -> asyncio.Event:
        events: dict[RunId, asyncio.Event] = self.__dict__.setdefault("_looks", {})
        return events.setdefault(run_id, asyncio.Event())

    async def _until_looked(self, run_id: RunId) -> None:
        # The woken reader looks within a loop turn or a thread hop; 5 s only bounds a
        # case in which nobody waits at all.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._looked(run_id).wait(), 5.0)

    async def head(self, run_id: RunId) -> int:
        found: int = await super().head(run_id)
        self._looked(run_id).set()  # only once the look is over: it saw the old head
        return found

    async def append(
        self,
        run_id: RunId,
        expected_seq: int,
        records: Sequence[Record],
        *,
        fence: Fence | None = None,
    ) -> None:
        self._notifier.signal(run_id)
        await self._until_looked(run_id)
        await super().append(run_id, expected_seq, records, fence=fence)


class MemorySignalsBeforeCommit(_SignalsBeforeCommit, InMemoryStore):
    """The in-memory store, signalling an append before it writes the batch."""


class SqliteSignalsBeforeCommit(_SignalsBeforeCommit, SqliteStore):
    """The same fault on SQLite: the signal leaves before the transaction commits."""


class ExampleReleaseSignalsOnlyWork(ExampleStore):
    """Signals ``WORK`` for a release to runnable, but never the released Run's id."""

    async def release(
        self,
        run_id: RunId,
        worker_id: WorkerId,
        state: RunState,
        *,
        runnable_at: datetime | None = None,
        deadline_at: datetime | None = None,
        attempt_count: int | None = None,
    ) -> None:
        db = self._open()
        loud, db.notifier = db.notifier, LocalNotifier()
        try:
            await super().release(
                run_id,
                worker_id,
                state,
                runnable_at=runnable_at,
                deadline_at=deadline_at,
                attempt_count=attempt_count,
            )
        finally:
            db.notifier = loud
        if state is RunState.RUNNABLE:
            loud.signal(WORK)


# --- the catalogue --------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    """One broken behaviour, how to build it on each base, and the cases that catch it.

    Attributes:
        name: a short id, used in test ids and the ``PSYCH_MUTANT`` variable.
        caught_by: contract cases that must each fail against this mutant.
        memory: builds the mutant on the in-memory base (None: not applicable there).
        sqlite: builds the mutant on a SQLite file (None: not applicable there).
        example: builds the mutant on a named ``ExampleStore`` database, whose
            instances share one complete notifier (None: not applicable there).
    """

    name: str
    caught_by: tuple[str, ...]
    memory: Callable[[], Store] | None
    sqlite: Callable[[Path], Store] | None
    example: Callable[[str], Store] | None = None


def _wrap(kind: type[Forwarding]) -> tuple[Callable[[], Store], Callable[[Path], Store]]:
    return (lambda: kind(InMemoryStore()), lambda path: kind(SqliteStore(f"sqlite:///{path}")))


def _both(
    memory: type[InMemoryStore], sqlite: type[SqliteStore]
) -> tuple[Callable[[], Store], Callable[[Path], Store]]:
    return (memory, lambda path: sqlite(f"sqlite:///{path}"))


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "dropped-header-fields",
        (
            "test_every_header_field_round_trips",
            "test_random_call_sequences_match_the_reference_model",
        ),
        *_wrap(DroppedHeaderFields),
    ),
    Mutant(
        "naive-idempotency-join",
        ("test_idempotency_keys_of_two_tenants_never_collide",),
        *_wrap(NaiveIdempotencyJoin),
    ),
    Mutant(
        "truncated-lease",
        (
            "test_a_fractional_lease_is_kept_exactly",
            "test_random_call_sequences_match_the_reference_model",
        ),
        *_wrap(TruncatedLease),
    ),
    Mutant(
        "claim-order-ignores-parking",
        ("test_claim_order_counts_from_when_a_parked_run_became_runnable",),
        *_both(MemoryOrderIgnoresParking, SqliteOrderIgnoresParking),
    ),
    Mutant(
        "future-created-at-waits",
        ("test_a_run_admitted_with_a_later_created_at_is_claimable_now",),
        *_both(MemoryFutureCreatedAtWaits, SqliteFutureCreatedAtWaits),
    ),
    Mutant(
        "silent-unpark",
        ("test_work_wakes_when_a_parked_run_is_unparked",),
        *_both(MemorySilentUnpark, SqliteSilentUnpark),
    ),
    Mutant(
        "complete-notifier-hears-only-itself",
        ("test_a_complete_notifier_hears_another_instance",),
        None,
        _wrap(CompleteNotifierThatHearsOnlyItself)[1],
    ),
    Mutant(
        "close-does-nothing",
        ("test_a_closed_store_refuses_further_calls",),
        *_wrap(CloseDoesNothing),
    ),
    Mutant(
        "parks-settled-runs",
        ("test_parking_a_settled_run_changes_nothing",),
        *_both(MemoryParksSettledRuns, SqliteParksSettledRuns),
    ),
    Mutant(
        "release-keeps-parking",
        ("test_release_without_runnable_at_clears_earlier_parking",),
        *_wrap(ReleaseKeepsParking),
    ),
    Mutant(
        "parked-running-run-reclaimed",
        ("test_a_running_run_parked_until_later_is_not_reclaimed_early",),
        *_both(MemoryParkedRunningReclaimed, SqliteParkedRunningReclaimed),
    ),
    Mutant(
        "strict-claim-boundary",
        (
            "test_runnable_at_exactly_now_is_claimable",
            "test_a_lease_ending_exactly_now_has_expired",
        ),
        *_wrap(StrictClaimBoundary),
    ),
    Mutant(
        "strict-lease-sweep",
        ("test_a_lease_ending_exactly_now_has_expired",),
        *_wrap(StrictLeaseSweep),
    ),
    Mutant(
        "strict-deadline-sweep",
        ("test_a_deadline_exactly_now_is_overdue",),
        *_wrap(StrictDeadlineSweep),
    ),
    # The racing cases below run on one instance, where the mutant's rendezvous makes
    # two callers pass the check before either writes on every run; the cases that race
    # a second, correct instance too would depend on which instance the scheduler runs.
    Mutant(
        "check-then-write-append",
        ("test_concurrent_batches_never_interleave",),
        *_both(MemoryCheckThenWrite, SqliteCheckThenWrite),
    ),
    Mutant(
        "select-then-update-claim",
        ("test_many_claimers_claim_each_run_exactly_once",),
        *_both(MemorySelectThenUpdate, SqliteSelectThenUpdate),
    ),
)
"""Every mutant; a new way a store was found to be wrong belongs here."""

MUTANTS += (
    Mutant(
        "millisecond-times",
        (
            "test_a_sub_millisecond_lease_is_kept_exactly",
            "test_random_call_sequences_match_the_reference_model",
        ),
        *_wrap(MillisecondTimes),
    ),
    Mutant(
        "sweeps-without-tie-break",
        ("test_sweeps_break_ties_by_run_id",),
        *_wrap(SweepsWithoutTieBreak),
    ),
    Mutant(
        "tenant-case-insensitive",
        ("test_scoped_calls_refuse_look_alike_tenants",),
        *_wrap(TenantCaseInsensitive),
    ),
    Mutant(
        "signals-before-commit",
        ("test_a_run_key_wakes_after_an_append",),
        MemorySignalsBeforeCommit,
        lambda path: SqliteSignalsBeforeCommit(f"sqlite:///{path}"),
    ),
    Mutant(
        "release-signals-only-work",
        ("test_every_signal_kind_reaches_a_listening_peer",),
        None,
        None,
        lambda name: ExampleReleaseSignalsOnlyWork(f"example://{name}"),
    ),
)


CONTROL = Mutant(
    "control",
    tuple(sorted({case for mutant in MUTANTS for case in mutant.caught_by})),
    *_wrap(Forwarding),
    lambda name: Forwarding(ExampleStore(f"example://{name}")),
)
"""No fault at all: every case the mutants are checked with must pass against it."""


def by_name(name: str) -> Mutant:
    """The mutant called ``name`` (or the fault-free ``control``)."""
    for mutant in (*MUTANTS, CONTROL):
        if mutant.name == name:
            return mutant
    raise KeyError(name)


__all__ = ["CONTROL", "MUTANTS", "Forwarding", "Mutant", "by_name"]
