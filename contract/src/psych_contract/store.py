"""The Store conformance suite.

Subclass ``StoreContract`` in your adapter's tests and override the ``store`` fixture so
it yields a fresh, empty store (and closes it afterwards). Every case below then runs
against your adapter. A case's docstring says what it protects and where to look when
it fails.

Only the public port is used: ``psych_runtime.store.port``, its errors, and the record
classes. Times are fixed whole-second instants passed in explicitly, so nothing here
depends on the machine's clock, and timing is never asserted beyond "a waiter woke
before its generous timeout".
"""

import asyncio
import math
import uuid
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from datetime import datetime
from typing import ClassVar
from typing import Unpack

import pytest
import pytest_asyncio

from psych_contract import _data as data
from psych_contract._overrides import Suite
from psych_contract._overrides import must_override
from psych_contract._overrides import overridden_without_xfail
from psych_contract._overrides import raw_items
from psych_contract.stateful import check_against_reference
from psych_runtime import RunId
from psych_runtime import RunNotFound
from psych_runtime import Store
from psych_runtime import UnstorableValue
from psych_runtime import VersionHash
from psych_runtime.adapters.store import MAX_RECORD_DEPTH
from psych_runtime.adapters.store import WORK
from psych_runtime.adapters.store import Fence
from psych_runtime.adapters.store import LeaseLost
from psych_runtime.adapters.store import Migratable
from psych_runtime.adapters.store import Notifier
from psych_runtime.adapters.store import RunDeletion
from psych_runtime.adapters.store import RunHeader
from psych_runtime.adapters.store import RunListing
from psych_runtime.adapters.store import RunState
from psych_runtime.adapters.store import SchemaInspection
from psych_runtime.adapters.store import SchemaNotMigrated
from psych_runtime.adapters.store import SeqConflict
from psych_runtime.adapters.store import StoreError
from psych_runtime.adapters.store import mentions
from psych_runtime.records import EntryId
from psych_runtime.records import QueueEnqueued
from psych_runtime.records import QueueKind
from psych_runtime.records import Record
from psych_runtime.records import WorkerId

W1 = WorkerId("contract-worker-1")
W2 = WorkerId("contract-worker-2")
LEASE = 30.0
"""Lease length used throughout; claims happen at whole-second instants."""
WAKE_TIMEOUT = 2.0
"""How long a notifier waiter may take before the case counts the wake-up as lost."""


async def _admit(store: Store, **fields: Unpack[data.HeaderFields]) -> RunHeader:
    """Create a Run through the public port and insist that this call created it."""
    run, admitted = data.admission(**fields)
    result = await store.create_run(run, admitted)
    assert result.created, "create_run reported created=False for a brand-new run id"
    return result.header


async def _stored(store: Store, run_id: RunId) -> RunHeader:
    """The header ``store`` holds for ``run_id``, which the case expects to be there."""
    header = await store.get_run(run_id)
    assert header is not None, f"{run_id} has no header"
    return header


async def _claim_only(store: Store, run: RunHeader, worker: WorkerId, now_s: int) -> RunHeader:
    """Claim, insisting that the claimed Run is ``run`` (the only claimable one)."""
    claimed = await store.claim(worker, data.at(now_s), LEASE)
    assert claimed is not None, f"claim returned None while {run.run_id} was claimable"
    assert claimed.run_id == run.run_id
    return claimed


async def _append(store: Store, run: RunHeader, first_seq: int, size: int) -> list[Record]:
    records = data.batch(run, first_seq, size)
    await store.append(run.run_id, first_seq, records)
    return records


def _notifier(store: Store) -> Notifier:
    notifier = store.notifier
    assert notifier is not None, (
        "supports_notifier is True but store.notifier is None; set the flag to False"
    )
    return notifier


async def _wakes(
    notifier: Notifier,
    key: str,
    action: Callable[[], Awaitable[object]],
    sees: Callable[[], Awaitable[bool]] | None = None,
) -> bool:
    """Start a waiter on ``key``, run ``action``, and report whether the waiter woke.

    With ``sees``, the waiter looks at the store the moment it wakes, before anything
    else runs, and the case fails unless it sees what ``action`` committed: a woken
    reader must find the commit, so a store signals after it commits, never before.
    """
    seen = notifier.generation(key)

    async def wait_then_look() -> tuple[bool, bool]:
        woke = await notifier.wait(key, seen, WAKE_TIMEOUT)
        return woke, (await sees()) if woke and sees is not None else True

    waiter = asyncio.create_task(wait_then_look())
    await asyncio.sleep(0)  # let the waiter reach its wait before the action commits
    await action()
    woke, visible = await waiter
    assert visible, f"a waiter on {key!r} woke before the commit was visible to it"
    return woke


Sees = Callable[[], Awaitable[bool]]
"""A look at the store a woken waiter takes at once; True when it sees the commit."""


async def _wakes_each(
    notifier: Notifier, keys: tuple[str, ...], action: Callable[[], Awaitable[object]], sees: Sees
) -> dict[str, bool]:
    """``_wakes`` for several keys at once: which of them woke, each seeing the commit."""
    seen = {key: notifier.generation(key) for key in keys}

    async def wait_then_look(key: str) -> tuple[bool, bool]:
        woke = await notifier.wait(key, seen[key], WAKE_TIMEOUT)
        return woke, (await sees()) if woke else True

    waiters = {key: asyncio.create_task(wait_then_look(key)) for key in keys}
    await asyncio.sleep(0)
    await action()
    woke: dict[str, bool] = {}
    for key, waiter in waiters.items():
        woke[key], visible = await waiter
        assert visible, f"a waiter on {key!r} woke before the commit was visible to it"
    return woke


def _state_is(store: Store, run_id: RunId, state: RunState) -> Callable[[], Awaitable[bool]]:
    async def look() -> bool:
        header = await store.get_run(run_id)
        return header is not None and header.state is state

    return look


def _head_is(store: Store, run_id: RunId, head: int) -> Callable[[], Awaitable[bool]]:
    async def look() -> bool:
        return await store.head(run_id) == head

    return look


LOOK_ALIKES: tuple[str, ...] = (
    "TENANT-A",
    "Tenant-A",
    "tenant-a ",
    " tenant-a",
    "tenant-",
    "tenant",
    "tenant-a-",
    "tenant-%",
    "tenant-_",
    "%",
    "_",
    "*",
    "?",
    "tenant-*",
    "tenant-?",
    "tenant-a/",
    "tenant-a#",
    "tenant-a:",
    "tenant-\u0430",
    "tenant-a\u200b",
    "tenant-\uff41",
    "tenant-a\t",
)
"""Tenants a careless store mistakes for ``tenant-a``: case, padding, prefixes, the
wildcards of SQL ``LIKE`` and of globs, separators, and Unicode look-alikes (a Cyrillic
``\\u0430``, a zero-width space, a full-width ``\\uff41``)."""


def _deleter(store: Store) -> RunDeletion:
    assert isinstance(store, RunDeletion), (
        f"{type(store).__name__} does not implement RunDeletion (settled_runs and "
        "delete_runs): every store must, so a deployment can delete Runs for retention"
    )
    return store


async def _settled(
    store: Store,
    *,
    tenant: str = "tenant-a",
    key: str | None = None,
    created_s: float = 0,
    notes: tuple[str, ...] = (),
) -> RunHeader:
    """Admit a Run, append ``notes`` as records, claim it and release it settled."""
    run = await _admit(store, tenant=tenant, idempotency_key=key, created_at=data.at(created_s))
    for offset, note in enumerate(notes):
        await store.append(run.run_id, 2 + offset, [data.consumer_record(run, 2 + offset, note)])
    claimed = await store.claim(W1, data.at(10_000), LEASE)
    assert claimed is not None and claimed.run_id == run.run_id, "the Run to settle was not claimed"
    await store.release(run.run_id, W1, RunState.SETTLED)
    header = await store.get_run(run.run_id)
    assert header is not None and header.state is RunState.SETTLED
    return header


async def _settle_leftovers(store: Store, run_ids: tuple[RunId, ...]) -> None:
    """Settle Runs a case left claimable, so a later case on the same store ignores them."""
    for run_id in run_ids:
        header = await store.get_run(run_id)
        if header is None or header.state is RunState.SETTLED:
            continue
        claimed = await store.claim(W2, data.at(10**7), LEASE)
        while claimed is not None:
            await store.release(claimed.run_id, W2, RunState.SETTLED)
            claimed = await store.claim(W2, data.at(10**7), LEASE)


class StoreContract(Suite):
    """Conformance cases every Store adapter must pass.

    Capability flags (override as class attributes in your subclass):

    Attributes:
        supports_notifier: the store exposes a Notifier that it signals on commit.
            Set False when ``store.notifier`` is None; the wake-up cases are skipped.
        cross_process_notifier: signals reach another store instance on the same
            backend (LISTEN/NOTIFY and the like). When True, also override the
            ``peer_store`` fixture to yield a second instance on the same database.
        has_schema: the store keeps a schema that ``migrate()`` creates and upgrades
            (it implements ``psych_runtime.store.port.Migratable``). When True, also
            override the ``unmigrated_store`` fixture to yield a store on an empty
            database that nobody has migrated.
        deleted_runs_leave_no_bytes: ``delete_runs`` removes the Runs' bytes from the
            backend's storage too (``raw_storage``), not only from every read. Set it
            False only for a backend that keeps deleted rows' bytes in free space
            until it reuses it, and say so in your documentation; the raw check is then
            skipped with that reason shown.
        single_process: the store keeps its data in this process only, so there is no
            second instance to open (the in-memory store). Every other store must
            override ``peer_store``: the races, the signal cases and the blob and
            memory suites run across two instances, and a store that only works
            alone is a store that says so. Say it in your documentation too, and on
            your ``StoreBackend`` (``single_process=True``), so ``psych doctor`` shows it.
        shares_backend: a second store instance can work on the same backend (a
            database or a file). When True, override ``peer_store``; the contention
            cases then also race the two instances, and a notifier that reports itself
            ``complete`` must hear the peer's commits.
        concurrency: how many concurrent callers the contention cases start.
        rounds: how many times each contention case races, each on a fresh Run.
        model_examples: random call sequences the model-based case tries.
        model_steps: the most calls in one such sequence.
    """

    __test__: ClassVar[bool] = False

    supports_notifier: ClassVar[bool] = True
    cross_process_notifier: ClassVar[bool] = False
    has_schema: ClassVar[bool] = False
    shares_backend: ClassVar[bool] = False
    single_process: ClassVar[bool] = False
    deleted_runs_leave_no_bytes: ClassVar[bool] = True
    concurrency: ClassVar[int] = 12
    rounds: ClassVar[int] = 5
    model_examples: ClassVar[int] = 60
    model_steps: ClassVar[int] = 25

    @pytest_asyncio.fixture
    async def store(self) -> AsyncIterator[Store]:
        """Override: yield a fresh, empty store, and close it after the test."""
        yield must_override("override the `store` fixture in your StoreContract subclass")

    @pytest_asyncio.fixture
    async def peer_store(self, store: Store) -> AsyncIterator[Store]:
        """Override: a second instance on the same backend as ``store``.

        It must see what ``store`` writes, and with ``cross_process_notifier`` its
        notifier must wake on ``store``'s commits. Only a store that declares
        ``single_process = True`` may leave it out.
        """
        if self.single_process:
            pytest.skip("the adapter declares single_process = True: no second instance")
        yield must_override(
            "override `peer_store` to yield a second instance on the same backend, or "
            "declare single_process = True if the store cannot have one"
        )

    @pytest_asyncio.fixture
    async def unmigrated_store(self) -> AsyncIterator[Store]:
        """Override when ``has_schema`` is True: a store on an empty, never-migrated database.

        Nothing may have called ``migrate()`` on that database; close the store (and
        drop what the case created) afterwards.
        """
        if not self.has_schema:
            pytest.skip("the adapter declares has_schema = False")
        yield must_override("has_schema is True: override `unmigrated_store` too")

    @pytest.fixture
    def contenders(self, store: Store, request: pytest.FixtureRequest) -> list[Store]:
        """The instances a race runs from: ``store``, plus ``peer_store`` when shared."""
        stores = [store]
        if not self.single_process:
            stores.append(request.getfixturevalue("peer_store"))
        return stores

    async def _warmed(self, stores: list[Store]) -> list[Store]:
        """Open as many connections as there will be racers, on every instance.

        Otherwise the race is serialised by connections still being opened, and a
        read-then-write passes.
        """
        unknown = data.new_run_id("warm")
        for each in stores:
            await asyncio.gather(*(each.head(unknown) for _ in range(self.concurrency)))
        return stores

    # --- the suite itself --------------------------------------------------------------

    async def test_overridden_cases_are_marked_xfail(self) -> None:
        """A subclass may override a case only to mark it ``xfail(reason=...)``.

        If this fails, one of your overrides silently replaced a standard case. Keep the
        case as it is, or decorate your override with ``pytest.mark.xfail(reason=...)``
        and explain why the adapter cannot meet it.
        """
        offenders = overridden_without_xfail(StoreContract, type(self))
        assert offenders == [], f"overridden without xfail(reason=...): {offenders}"

    async def test_store_satisfies_the_protocol(self, store: Store) -> None:
        """The adapter has every method of ``psych_runtime.store.port.Store``.

        A failure names nothing; compare your class with the protocol by hand (a missing
        ``notifier`` property or ``close`` method is the usual culprit).
        """
        assert isinstance(store, Store)

    # --- raw storage and deletion -----------------------------------------------------

    async def test_raw_storage_shows_the_log(self, store: Store) -> None:
        """``raw_storage()`` returns the backend's bytes, and an appended record is in them.

        Every Store implements ``psych_runtime.adapters.RawStorage``: the bytes its
        backend keeps (files with their write-ahead logs, every page or row version of
        its tables, every item), with the adapter's own compression undone. A view that
        shows nothing would make every deletion check pass, so the record must show.
        """
        run = await _admit(store)
        marker = f"raw-record-{uuid.uuid4().hex}"
        await store.append(run.run_id, 2, [data.consumer_record(run, 2, marker)])
        items = await raw_items(store, "Store")
        assert mentions(items, [marker]), (
            f"an appended record is not in raw_storage(): {items!r:.300}"
        )

    async def test_delete_runs_deletes_the_tenants_settled_runs_only(self, store: Store) -> None:
        """``delete_runs`` removes settled Runs of the tenant: header, log and key.

        A running Run, another tenant's settled Run and an unknown id are left alone
        and not returned. A deleted Run reads as unknown everywhere, and its
        idempotency key admits a new Run. Check the tenant and state conditions of the
        delete and that the log rows and the key go in the same operation.
        """
        deleter = _deleter(store)
        key = data.new_key("retained")
        gone = await _settled(store, key=key, notes=("first", "second"))
        other = await _settled(store, tenant="tenant-b", created_s=1)
        running = await _admit(store, created_at=data.at(2))
        ghost = data.new_run_id("ghost")
        deleted = await deleter.delete_runs(
            [gone.run_id, other.run_id, running.run_id, ghost], tenant="tenant-a"
        )
        assert sorted(deleted) == [gone.run_id]
        assert await store.get_run(gone.run_id) is None
        assert await store.read(gone.run_id) == []
        assert await store.head(gone.run_id) == 0
        assert await store.get_run(other.run_id) == other
        assert await store.head(other.run_id) == 1
        assert await store.get_run(running.run_id) == running
        assert await deleter.delete_runs([gone.run_id], tenant="tenant-a") == []
        again = await store.create_run(*data.admission(idempotency_key=key))
        assert again.created, "the deleted Run's idempotency key still blocks admission"

    async def test_deleted_runs_leave_no_bytes(self, store: Store) -> None:
        """After ``delete_runs`` no byte the backend holds spells the deleted Run's data.

        Checked in ``raw_storage()``: a delete that only hides rows fails, and so does
        one whose bytes stay in free pages, write-ahead logs or dead row versions
        (turn on secure deletion, cut the log, vacuum). Another Run's data must stay.
        """
        if not self.deleted_runs_leave_no_bytes:
            pytest.skip(
                "the adapter declares deleted_runs_leave_no_bytes = False: its backend keeps "
                "deleted rows' bytes in free space until reused (see its documentation)"
            )
        deleter = _deleter(store)
        secret = f"deleted-{uuid.uuid4().hex}"
        kept = f"kept-{uuid.uuid4().hex}"
        gone = await _settled(store, key=f"key-{secret}", notes=(secret, secret + "-2"))
        await _settled(store, created_s=1, notes=(kept,))
        assert mentions(await raw_items(store, "Store"), [secret]), "raw_storage() misses a Run"
        assert await deleter.delete_runs([gone.run_id], tenant="tenant-a") == [gone.run_id]
        items = await raw_items(store, "Store")
        left = mentions(items, [secret])
        assert left == [], f"a deleted Run's bytes are still stored: {left}"
        assert mentions(items, [kept]), "deleting one Run took another's bytes too"

    async def test_settled_runs_lists_oldest_first_page_by_page(self, store: Store) -> None:
        """``settled_runs``: the tenant's settled Runs admitted before a time, oldest first.

        Ties on ``created_at`` go by run id; ``after`` continues past the last header
        of a page. Unsettled Runs, other tenants' Runs and Runs admitted at or after
        ``created_before`` are never listed. A limit below 1 is a ValueError.
        """
        deleter = _deleter(store)
        same = [await _settled(store, created_s=5) for _ in range(3)]
        first = await _settled(store, created_s=1)
        await _settled(store, tenant="tenant-b", created_s=2)
        await _settled(store, created_s=50)
        await _admit(store, created_at=data.at(3))
        expected = [first.run_id, *sorted(run.run_id for run in same)]
        listed = await deleter.settled_runs(tenant="tenant-a", created_before=data.at(50))
        assert [h.run_id for h in listed] == expected
        assert listed[0] == first
        paged: list[RunId] = []
        after: tuple[datetime, RunId] | None = None
        while True:
            page = await deleter.settled_runs(
                tenant="tenant-a", created_before=data.at(50), after=after, limit=2
            )
            paged.extend(h.run_id for h in page)
            if len(page) < 2:
                break
            after = (page[-1].created_at, page[-1].run_id)
        assert paged == expected
        for bad in (0, -1):
            with pytest.raises(ValueError):
                await deleter.settled_runs(tenant="tenant-a", created_before=data.at(50), limit=bad)

    async def test_scoped_calls_refuse_look_alike_tenants(self, store: Store) -> None:
        """Every call that takes a tenant compares it exactly, never loosely.

        Tried with case and padding variants, prefixes, ``%`` ``_`` ``*`` ``?``,
        separators and Unicode look-alikes of ``tenant-a``: none may read, list or
        delete ``tenant-a``'s Run or Version. Look for ``LIKE``, ``ILIKE``, a
        case-insensitive or padded collation, or a normalisation of the tenant.
        """
        run = await _settled(store, notes=("look-alike",))
        version = data.version("look-alike")
        await store.put_version(version, tenant="tenant-a")
        for other in LOOK_ALIKES:
            assert await store.get_run(run.run_id, tenant=other) is None, other
            assert await store.read(run.run_id, tenant=other) == [], other
            assert await store.get_version(version.hash, tenant=other) is None, other
            if isinstance(store, RunListing):
                assert await store.recent_runs(tenant=other) == [], other
            deleter = _deleter(store)
            listed = await deleter.settled_runs(tenant=other, created_before=data.at(10**6))
            assert listed == [], other
            assert await deleter.delete_runs([run.run_id], tenant=other) == [], other
        assert await store.get_run(run.run_id, tenant="tenant-a") == run
        assert await store.head(run.run_id) == 2

    # --- against the reference model ---------------------------------------------------

    async def test_random_call_sequences_match_the_reference_model(self, store: Store) -> None:
        """Random sequences of every port call agree with ``ReferenceStore``, step by step.

        A failure prints the shortest sequence of calls Hypothesis found, and which call
        disagreed: compare your store's answer with the reference model's (in
        ``psych_contract.reference``, which states each rule in a few lines). Tune the
        work with the ``model_examples`` and ``model_steps`` class attributes.
        """
        await check_against_reference(store, examples=self.model_examples, steps=self.model_steps)

    # --- schema ------------------------------------------------------------------------

    async def test_an_unmigrated_store_raises_schema_not_migrated(
        self, unmigrated_store: Store
    ) -> None:
        """Using a store nobody migrated raises ``SchemaNotMigrated``, on every call.

        Check the schema version on first use and raise
        ``psych_runtime.adapters.SchemaNotMigrated`` (not ``StoreUnavailable``: waiting does not
        fix it) when it is missing or older; a driver's "no such table" must not
        escape. The check must not mark the store as checked when it fails.
        """
        run, admitted = data.admission()
        with pytest.raises(SchemaNotMigrated):
            await unmigrated_store.head(run.run_id)
        with pytest.raises(SchemaNotMigrated):
            await unmigrated_store.create_run(run, admitted)

    async def test_migrate_returns_the_versions_it_applied(self, unmigrated_store: Store) -> None:
        """``migrate()`` returns the versions it applied, oldest first, then ``[]``.

        A fresh database gets every version; a second call applies nothing. Afterwards
        the same store instance works without being reopened.
        """
        assert isinstance(unmigrated_store, Migratable), "has_schema is True but no migrate()"
        applied = await unmigrated_store.migrate()
        assert isinstance(applied, list), f"migrate() returned {type(applied).__name__}"
        assert applied, "migrate() applied nothing to an empty database"
        assert all(type(version) is int for version in applied)
        assert applied == sorted(set(applied))
        assert await unmigrated_store.migrate() == []
        run = await _admit(unmigrated_store)
        assert await unmigrated_store.head(run.run_id) == 1

    async def test_schema_inspection_reports_the_versions(
        self, store: Store, unmigrated_store: Store
    ) -> None:
        """``SchemaInspection``: a migrated store reports the version it needs, an empty one 0.

        The protocol is optional; the case is skipped, saying so, for a store without
        it (``psych doctor --store`` then cannot show the database's schema). When it
        fails, check that ``schema_version()`` only reads, creating nothing.
        """
        if not isinstance(store, SchemaInspection):
            pytest.skip(
                "the store does not implement SchemaInspection: psych doctor --store "
                "cannot compare its database with the adapter"
            )
        expected = store.expected_schema_version
        assert type(expected) is int and expected >= 1
        assert await store.schema_version() == expected
        assert isinstance(unmigrated_store, SchemaInspection)
        assert await unmigrated_store.schema_version() in (0, None)
        assert await unmigrated_store.schema_version() in (0, None), "reading it created it"

    # --- append and read ---------------------------------------------------------------

    async def test_concurrent_appends_at_the_same_seq_exactly_one_wins(
        self, store: Store, contenders: list[Store]
    ) -> None:
        """Writers race for the same seq, ``rounds`` times: one batch lands, the rest conflict.

        Check that the append is one conditional write (a unique key on (run, seq) or a
        compare-and-set on the head), not a read of the head followed by a write. The
        race runs on a warmed pool and, when the backend is shared, from two instances.
        """
        stores = await self._warmed(contenders)
        for round_ in range(self.rounds):
            run = await _admit(store)
            if round_:
                await _append(store, run, 2, round_)  # a log of a different length each round
            seq = 2 + round_
            attempts = [
                stores[i % len(stores)].append(
                    run.run_id, seq, [data.consumer_record(run, seq, note=f"writer {i}")]
                )
                for i in range(self.concurrency)
            ]
            outcomes = await asyncio.gather(*attempts, return_exceptions=True)
            winners = [i for i, outcome in enumerate(outcomes) if outcome is None]
            losers = [outcome for outcome in outcomes if isinstance(outcome, SeqConflict)]
            assert len(winners) == 1, f"round {round_}: {outcomes}"
            assert len(losers) == self.concurrency - 1, f"round {round_}: {outcomes}"
            assert await store.read(run.run_id, after=seq - 1) == [
                data.consumer_record(run, seq, note=f"writer {winners[0]}")
            ]

    async def test_concurrent_fenced_appends_of_a_stale_and_a_live_holder(
        self, store: Store, contenders: list[Store]
    ) -> None:
        """After a takeover, the old holder's and the new holder's batches race.

        Only the new holder's batch may land; the old holder gets ``LeaseLost`` (the
        fence is checked before the sequence, whichever batch reaches the store first),
        and no record of the old holder's batch is ever visible.
        """
        stores = await self._warmed(contenders)
        for round_ in range(self.rounds):
            run = await _admit(store, created_at=data.at(-2000 + round_))
            first = await _claim_only(store, run, W1, 0)
            second = await _claim_only(store, run, W2, int(LEASE) + 1)
            stale = data.batch(run, 2, 3)
            live = [data.consumer_record(run, seq, note="live") for seq in (2, 3)]
            outcomes = await asyncio.gather(
                stores[0].append(run.run_id, 2, stale, fence=Fence(W1, first.attempt_count)),
                stores[-1].append(run.run_id, 2, live, fence=Fence(W2, second.attempt_count)),
                return_exceptions=True,
            )
            assert isinstance(outcomes[0], LeaseLost), outcomes
            assert outcomes[1] is None, outcomes
            assert await store.read(run.run_id, after=1) == live

    async def test_concurrent_batches_never_interleave(self, store: Store) -> None:
        """Two batches of different lengths race at seq 2: the log holds exactly one of them.

        If the log mixes records of both, the batch is not written in one transaction,
        or the conflict check happens per record after some were already written.
        """
        run = await _admit(store)
        first = data.batch(run, 2, 3)
        second = [data.consumer_record(run, seq, note="second") for seq in (2, 3, 4, 5)]
        outcomes = await asyncio.gather(
            store.append(run.run_id, 2, first),
            store.append(run.run_id, 2, second),
            return_exceptions=True,
        )
        assert sorted(type(outcome).__name__ for outcome in outcomes) == [
            "NoneType",
            "SeqConflict",
        ], outcomes
        winner = first if outcomes[0] is None else second
        assert await store.read(run.run_id, after=1) == winner
        assert await store.head(run.run_id) == 1 + len(winner)

    async def test_seq_conflict_names_run_and_seq(self, store: Store) -> None:
        """The SeqConflict carries the run id and the expected seq that was refused.

        Check how your adapter turns the driver's unique-violation into SeqConflict.
        """
        run = await _admit(store)
        with pytest.raises(SeqConflict) as caught:
            await store.append(run.run_id, 1, [data.admitted_for(run)])
        assert caught.value.run_id == run.run_id
        assert caught.value.seq == 1

    async def test_gapless_sequencing_across_many_appends(self, store: Store) -> None:
        """Forty-nine single-record appends after admission read back as seq 1..50."""
        run = await _admit(store)
        for seq in range(2, 51):
            await _append(store, run, seq, 1)
        records = await store.read(run.run_id)
        assert [record.seq for record in records] == list(range(1, 51))

    async def test_a_batch_of_fifty_reads_back_exactly(self, store: Store) -> None:
        """One append of fifty mixed records reads back equal, field for field, in order.

        A failure here usually means a serialisation loss: a decimal, a non-ASCII string,
        a nested model, a timezone or a default field that did not survive the round
        trip. Compare the first differing pair.
        """
        run = await _admit(store)
        written = await _append(store, run, 2, 50)
        assert await store.read(run.run_id, after=1) == written
        assert await store.head(run.run_id) == 51

    async def test_head_is_zero_for_an_unknown_run(self, store: Store) -> None:
        """``head`` of a run id nobody created is 0, not an error."""
        assert await store.head(data.new_run_id("ghost")) == 0

    async def test_head_is_the_true_max(self, store: Store) -> None:
        """After admission and nine appends the head is 10.

        A lexical sort of seq (as text) or a count that ignores a batch shows up here.
        """
        run = await _admit(store)
        for seq in range(2, 11):
            await _append(store, run, seq, 1)
        assert await store.head(run.run_id) == 10

    async def test_range_read_crosses_pagination_boundary(self, store: Store) -> None:
        """A 250-record log reads whole, and a window across any page size is exact.

        If your adapter pages internally (DynamoDB, cursors), check the page hand-over.
        """
        run = await _admit(store)
        for first in range(2, 251, 50):
            await _append(store, run, first, min(50, 251 - first))
        whole = await store.read(run.run_id)
        assert [record.seq for record in whole] == list(range(1, 251))
        window = await store.read(run.run_id, after=90, limit=120)
        assert [record.seq for record in window] == list(range(91, 211))

    async def test_read_after_boundaries(self, store: Store) -> None:
        """``after`` is exclusive; reading at or past the head gives an empty list."""
        run = await _admit(store)
        await _append(store, run, 2, 19)
        assert [r.seq for r in await store.read(run.run_id, after=0)] == list(range(1, 21))
        assert [r.seq for r in await store.read(run.run_id, after=10)] == list(range(11, 21))
        assert await store.read(run.run_id, after=20) == []
        assert await store.read(run.run_id, after=120) == []

    async def test_read_respects_limit(self, store: Store) -> None:
        """``limit=5`` returns the first five records after ``after``, in order."""
        run = await _admit(store)
        await _append(store, run, 2, 19)
        assert [r.seq for r in await store.read(run.run_id, limit=5)] == [1, 2, 3, 4, 5]
        assert [r.seq for r in await store.read(run.run_id, after=17, limit=5)] == [18, 19, 20]

    async def test_a_batch_conflicting_at_any_position_writes_nothing(self, store: Store) -> None:
        """A refused batch leaves the log exactly as it was, whichever position clashed.

        Covered: a batch starting before the head, one starting on the head's seq, and
        one leaving a gap. If records of a refused batch appear, the batch is not one
        transaction (or the gap is not checked).
        """
        run = await _admit(store)
        before = [data.admitted_for(run), *await _append(store, run, 2, 3)]

        def intruders(first: int, size: int) -> list[Record]:
            return [
                data.consumer_record(run, s, note="intruder") for s in range(first, first + size)
            ]

        for first in (2, 3, 4, 6):
            with pytest.raises(SeqConflict):
                await store.append(run.run_id, first, intruders(first, 4))
            assert await store.read(run.run_id) == before, f"batch at {first} left records"
            assert await store.head(run.run_id) == 4
        await store.append(run.run_id, 5, intruders(5, 2))
        assert await store.head(run.run_id) == 6

    async def test_a_batch_with_bad_seq_fields_is_refused_and_writes_nothing(
        self, store: Store
    ) -> None:
        """Records whose own seq or run id disagree with the append are a ValueError.

        Validate the batch before touching the database: seq fields must be
        ``expected_seq, expected_seq + 1, ...``, every record must name this run, and an
        empty batch is refused.
        """
        run = await _admit(store)
        other = await _admit(store)
        good = data.batch(run, 2, 3)
        bad_batches: list[list[Record]] = [
            [good[0], good[1], data.batch(run, 5, 1)[0]],
            data.batch(run, 3, 2),
            [good[0], data.batch(other, 3, 1)[0]],
            [],
        ]
        for records in bad_batches:
            with pytest.raises(ValueError):
                await store.append(run.run_id, 2, records)
            assert await store.head(run.run_id) == 1
        assert await store.head(other.run_id) == 1
        await store.append(run.run_id, 2, good)
        assert await store.head(run.run_id) == 4

    async def test_append_to_an_unknown_run_raises_run_not_found(self, store: Store) -> None:
        """A log exists only for an admitted Run; appending elsewhere is RunNotFound."""
        ghost = data.header(data.new_run_id("ghost"))
        with pytest.raises(RunNotFound):
            await store.append(ghost.run_id, 2, data.batch(ghost, 2, 1))
        assert await store.head(ghost.run_id) == 0

    # --- fencing -----------------------------------------------------------------------

    async def test_the_holders_fenced_append_succeeds(self, store: Store) -> None:
        """The Worker named by the lease, at the current attempt count, may append."""
        run = await _admit(store)
        claimed = await _claim_only(store, run, W1, 0)
        records = data.batch(run, 2, 2)
        await store.append(run.run_id, 2, records, fence=Fence(W1, claimed.attempt_count))
        assert await store.read(run.run_id, after=1) == records

    async def test_a_stale_holders_fenced_batch_is_refused_after_takeover(
        self, store: Store
    ) -> None:
        """After another Worker reclaims the expired lease, the old holder gets LeaseLost.

        Nothing of the refused batch may be written, and the error names the run, the
        stale worker and its attempt. The new holder's fenced append then succeeds. Check
        that the fence comparison (holder and attempt count) runs in the same atomic
        operation as the insert.
        """
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        await _claim_only(store, run, W2, 60)
        with pytest.raises(LeaseLost) as caught:
            await store.append(run.run_id, 2, data.batch(run, 2, 3), fence=Fence(W1, 1))
        assert (caught.value.run_id, caught.value.worker_id, caught.value.attempt) == (
            run.run_id,
            W1,
            1,
        )
        assert await store.head(run.run_id) == 1
        records = data.batch(run, 2, 3)
        await store.append(run.run_id, 2, records, fence=Fence(W2, 2))
        assert await store.read(run.run_id, after=1) == records

    async def test_the_fence_compares_the_attempt_not_just_the_worker(self, store: Store) -> None:
        """A Worker that reclaimed its own expired lease cannot write under the old attempt.

        If this fails the fence checks only ``lease_holder``; it must also compare
        ``attempt_count``.
        """
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        await _claim_only(store, run, W1, 60)
        with pytest.raises(LeaseLost):
            await store.append(run.run_id, 2, data.batch(run, 2, 1), fence=Fence(W1, 1))
        await store.append(run.run_id, 2, data.batch(run, 2, 1), fence=Fence(W1, 2))
        assert await store.head(run.run_id) == 2

    async def test_the_fence_is_checked_before_the_seq(self, store: Store) -> None:
        """A stale fence at a taken seq reports LeaseLost, not SeqConflict.

        A Worker treats LeaseLost as "stop, you were replaced" and SeqConflict as a log
        race; reporting the conflict first would hide the takeover.
        """
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        await _claim_only(store, run, W2, 60)
        await store.append(run.run_id, 2, data.batch(run, 2, 1), fence=Fence(W2, 2))
        with pytest.raises(LeaseLost):
            await store.append(run.run_id, 2, data.batch(run, 2, 1), fence=Fence(W1, 1))

    async def test_a_fence_is_an_epoch_not_a_clock(self, store: Store) -> None:
        """A holder whose lease expired but was not yet reclaimed may still append.

        ``append`` takes no clock, so the fence can only compare holder and attempt
        count. If this fails, your adapter compares ``lease_expires_at`` to its own clock.
        """
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        assert [h.run_id for h in await store.expired_leases(data.at(3600))] == [run.run_id]
        await store.append(run.run_id, 2, data.batch(run, 2, 1), fence=Fence(W1, 1))
        assert await store.head(run.run_id) == 2

    async def test_a_fenced_append_after_release_is_refused(self, store: Store) -> None:
        """Once the holder released the Run, its fence is no longer valid."""
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        await store.release(run.run_id, W1, RunState.SUSPENDED)
        with pytest.raises(LeaseLost):
            await store.append(run.run_id, 2, data.batch(run, 2, 1), fence=Fence(W1, 1))
        assert await store.head(run.run_id) == 1

    async def test_an_unfenced_consumer_append_succeeds_during_a_lease(self, store: Store) -> None:
        """Consumers (abort, send, resume) append without a fence while a Worker holds it.

        The fence is optional; when it is None the store checks only the seq.
        """
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        record = data.consumer_record(run, 2)
        await store.append(run.run_id, 2, [record])
        assert await store.read(run.run_id, after=1) == [record]

    # --- versions ----------------------------------------------------------------------

    async def test_version_put_then_get_round_trips(self, store: Store) -> None:
        """A stored Version comes back with the same hash, Spec and publication time.

        A different hash means the Spec did not survive storage unchanged (compare
        ``export_json()`` of both).
        """
        version = data.version("round-trip")
        stored = await store.put_version(version, tenant="tenant-a")
        assert stored == version
        for got in (
            await store.get_version(version.hash),
            await store.get_version(version.hash, tenant="tenant-a"),
        ):
            assert got is not None
            assert got.hash == version.hash
            assert got.spec == version.spec
            assert got.published_at == version.published_at

    async def test_put_version_twice_is_a_no_op(self, store: Store) -> None:
        """Storing a hash again neither fails nor replaces the first publication time.

        ``put_version`` returns what the grantee now holds: the first publication.
        """
        first = data.version("twice")
        again = data.version("twice", published_s=3600)
        assert again.hash == first.hash
        await store.put_version(first, tenant="tenant-a")
        returned = await store.put_version(again, tenant="tenant-a")
        assert returned.published_at == first.published_at
        for tenant in (None, "tenant-a"):
            got = await store.get_version(first.hash, tenant=tenant)
            assert got is not None
            assert got.published_at == first.published_at

    async def test_a_tenants_version_is_invisible_to_other_tenants(self, store: Store) -> None:
        """A Version published for one tenant is None for every other tenant.

        The lookup must compare tenants byte for byte: names that differ only in case
        or trailing spaces are different tenants (watch for padded or case-insensitive
        collations). Without a tenant the lookup is unfiltered, for the Worker that
        runs an already admitted Run.
        """
        version = data.version("owned")
        await store.put_version(version, tenant="tenant-a")
        assert await store.get_version(version.hash, tenant="tenant-a") is not None
        for other in ("tenant-b", "Tenant-A", "tenant-a ", "tenant-"):
            assert await store.get_version(version.hash, tenant=other) is None, other
        assert await store.get_version(version.hash) is not None

    async def test_a_shared_version_is_visible_to_every_tenant(self, store: Store) -> None:
        """``tenant=None`` at put shares the Version with every tenant, at its own time."""
        version = data.version("shared", published_s=60)
        stored = await store.put_version(version, tenant=None)
        assert stored.published_at == version.published_at
        for tenant in ("tenant-a", "tenant-b", None):
            got = await store.get_version(version.hash, tenant=tenant)
            assert got is not None, tenant
            assert got.spec == version.spec
            assert got.published_at == version.published_at

    async def test_two_tenants_own_the_same_hash_independently(self, store: Store) -> None:
        """Equal Specs share a hash, but each tenant holds its own grant and time.

        Tenant b must see its own publication time, not tenant a's: an earlier time
        would tell b that someone else published the same Spec first.
        """
        first = data.version("same-spec", published_s=10)
        second = data.version("same-spec", published_s=20)
        assert first.hash == second.hash
        await store.put_version(first, tenant="tenant-a")
        assert await store.get_version(first.hash, tenant="tenant-b") is None
        returned = await store.put_version(second, tenant="tenant-b")
        assert returned.published_at == second.published_at
        got_a = await store.get_version(first.hash, tenant="tenant-a")
        got_b = await store.get_version(first.hash, tenant="tenant-b")
        assert got_a is not None and got_a.published_at == first.published_at
        assert got_b is not None and got_b.published_at == second.published_at
        assert await store.get_version(first.hash, tenant="tenant-c") is None

    async def test_sharing_an_owned_version_later_makes_it_visible(self, store: Store) -> None:
        """A shared grant added after a tenant's own one opens it to everyone.

        The owner keeps seeing its own publication time; other tenants see the share's.
        """
        owned = data.version("owned-then-shared", published_s=5)
        shared = data.version("owned-then-shared", published_s=50)
        await store.put_version(owned, tenant="tenant-a")
        assert await store.get_version(owned.hash, tenant="tenant-b") is None
        await store.put_version(shared, tenant=None)
        got_a = await store.get_version(owned.hash, tenant="tenant-a")
        got_b = await store.get_version(owned.hash, tenant="tenant-b")
        assert got_a is not None and got_a.published_at == owned.published_at
        assert got_b is not None and got_b.published_at == shared.published_at

    async def test_get_unknown_version_returns_none_for_every_tenant(self, store: Store) -> None:
        """An unknown hash reads as None, with or without a tenant."""
        unknown = VersionHash("sha256:" + "0" * 64)
        assert await store.get_version(unknown, tenant="tenant-a") is None

    async def test_get_unknown_version_returns_none(self, store: Store) -> None:
        """An unknown hash reads as None, not as an error."""
        assert await store.get_version(VersionHash("sha256:" + "0" * 64)) is None

    # --- admission ---------------------------------------------------------------------

    async def test_create_run_writes_the_header_and_the_admission_together(
        self, store: Store
    ) -> None:
        """After create_run the header exists and the log holds exactly run_admitted.

        Both must be written in one transaction: a Run must never be claimable with an
        empty log.
        """
        run, admitted = data.admission(idempotency_key=data.new_key())
        result = await store.create_run(run, admitted)
        assert result.created
        assert result.header == run
        assert await store.get_run(run.run_id) == run
        assert await store.head(run.run_id) == 1
        assert await store.read(run.run_id) == [admitted]

    async def test_create_run_refuses_a_mismatched_admission(self, store: Store) -> None:
        """A run_admitted for another run id, or not at seq 1, is a ValueError.

        Nothing may be written for either refused call.
        """
        run, _ = data.admission()
        _, foreign = data.admission()
        with pytest.raises(ValueError):
            await store.create_run(run, foreign)
        late = data.admitted_for(run).model_copy(update={"seq": 2})
        with pytest.raises(ValueError):
            await store.create_run(run, late)
        assert await store.get_run(run.run_id) is None
        assert await store.head(run.run_id) == 0

    async def test_repeated_idempotency_key_returns_the_original_header(self, store: Store) -> None:
        """A second admission with the same key returns the first Run and writes nothing.

        Check the (tenant, idempotency_key) uniqueness and that the duplicate path
        returns the stored header rather than the one passed in.
        """
        key = data.new_key()
        first, first_admitted = data.admission(idempotency_key=key, message="first")
        second, second_admitted = data.admission(idempotency_key=key, message="second")
        created = await store.create_run(first, first_admitted)
        repeated = await store.create_run(second, second_admitted)
        assert created.created
        assert not repeated.created
        assert repeated.header == first
        assert await store.get_run(second.run_id) is None
        assert await store.head(second.run_id) == 0
        assert await store.read(first.run_id) == [first_admitted]

    async def test_an_idempotency_key_is_scoped_to_its_tenant(self, store: Store) -> None:
        """The same key admits one Run per tenant, and still deduplicates within each."""
        key = data.new_key()
        in_a = await store.create_run(*data.admission(tenant="tenant-a", idempotency_key=key))
        in_b = await store.create_run(*data.admission(tenant="tenant-b", idempotency_key=key))
        again_b = await store.create_run(*data.admission(tenant="tenant-b", idempotency_key=key))
        assert in_a.created
        assert in_b.created
        assert in_a.header.run_id != in_b.header.run_id
        assert not again_b.created
        assert again_b.header == in_b.header

    async def test_create_run_with_a_duplicate_run_id_does_not_clobber(self, store: Store) -> None:
        """A second create with an existing run id changes neither the header nor the log."""
        first, first_admitted = data.admission(message="first")
        clash, clash_admitted = data.admission(
            first.run_id, state=RunState.SUSPENDED, created_at=data.at(50), message="clash"
        )
        await store.create_run(first, first_admitted)
        result = await store.create_run(clash, clash_admitted)
        assert not result.created
        assert result.header == first
        assert await store.get_run(first.run_id) == first
        assert await store.read(first.run_id) == [first_admitted]

    async def test_get_run_returns_none_for_an_unknown_run(self, store: Store) -> None:
        """An unknown run id reads as None."""
        assert await store.get_run(data.new_run_id("ghost")) is None

    # --- tenancy -----------------------------------------------------------------------

    async def test_scope_isolation_across_runs(self, store: Store) -> None:
        """Each Run's header and records carry their own tenant and nobody else's."""
        run_a = await _admit(store, tenant="tenant-a")
        run_b = await _admit(store, tenant="tenant-b")
        await _append(store, run_a, 2, 3)
        await _append(store, run_b, 2, 3)
        for run, tenant in ((run_a, "tenant-a"), (run_b, "tenant-b")):
            got = await _stored(store, run.run_id)
            assert got.scope.tenant == tenant
            records = await store.read(run.run_id)
            assert len(records) == 4
            assert {record.scope.tenant for record in records} == {tenant}
            assert {record.run_id for record in records} == {run.run_id}

    async def test_reads_with_another_tenant_see_nothing(self, store: Store) -> None:
        """``read`` and ``get_run`` with the wrong ``tenant`` return [] and None.

        With the right tenant (or none) they return the Run. Check that the tenant
        filter is part of the query, not applied to the wrong column.
        """
        run = await _admit(store, tenant="tenant-a")
        await _append(store, run, 2, 2)
        assert await store.get_run(run.run_id, tenant="tenant-b") is None
        assert await store.read(run.run_id, tenant="tenant-b") == []
        assert await store.get_run(run.run_id, tenant="tenant-a") == run
        assert len(await store.read(run.run_id, tenant="tenant-a")) == 3
        assert len(await store.read(run.run_id, after=1, tenant="tenant-a")) == 2

    # --- claim -------------------------------------------------------------------------

    async def test_claim_returns_the_claimed_header(self, store: Store) -> None:
        """The returned header is the stored one after the claim: running, held, counted.

        Check that the claim's ``RETURNING`` (or equivalent) reflects the update, that
        the lease expiry is ``now + lease_seconds``, and that no other field changed.
        """
        run = await _admit(store, idempotency_key=data.new_key())
        claimed = await _claim_only(store, run, W1, 10)
        expected = run.model_copy(
            update={
                "state": RunState.RUNNING,
                "lease_holder": W1,
                "lease_expires_at": data.at(10 + LEASE),
                "attempt_count": 1,
            }
        )
        assert claimed == expected
        assert await store.get_run(run.run_id) == expected

    async def test_claim_returns_none_when_nothing_is_runnable(self, store: Store) -> None:
        """An empty store has nothing to claim."""
        assert await store.claim(W1, data.at(0), LEASE) is None

    @pytest.mark.parametrize("condition", ["parked", "suspended", "nested", "settled"])
    async def test_claim_never_returns_an_unclaimable_run(
        self, store: Store, condition: str
    ) -> None:
        """Parked (future ``runnable_at``), suspended, nested and settled Runs are skipped.

        Check the claim's WHERE clause: state ``runnable`` (or ``running`` with an
        expired lease) and ``runnable_at`` null or passed.
        """
        if condition == "parked":
            await _admit(store, runnable_at=data.at(7200))
        elif condition == "nested":
            await _admit(store, state=RunState.NESTED)
        else:
            run = await _admit(store)
            await _claim_only(store, run, W1, 0)
            final = RunState.SUSPENDED if condition == "suspended" else RunState.SETTLED
            await store.release(run.run_id, W1, final)
        assert await store.claim(W2, data.at(3600), LEASE) is None

    async def test_claim_takes_the_oldest_run_first(self, store: Store) -> None:
        """Among claimable Runs the one created first is claimed first.

        Order the candidates by ``runnable_at`` (when set) else ``created_at``, ascending.
        """
        newer = await _admit(store, created_at=data.at(100))
        older = await _admit(store, created_at=data.at(0))
        first = await store.claim(W1, data.at(200), LEASE)
        second = await store.claim(W1, data.at(200), LEASE)
        assert first is not None
        assert second is not None
        assert (first.run_id, second.run_id) == (older.run_id, newer.run_id)

    async def test_claim_under_contention_exactly_one_winner(
        self, store: Store, contenders: list[Store]
    ) -> None:
        """``concurrency`` claimers race for one Run, ``rounds`` times: one wins each time.

        The claim must be a single conditional update (``FOR UPDATE SKIP LOCKED``, a
        conditional write, a compare-and-set), not a select followed by an update. The
        race runs on a warmed connection pool and, when the adapter shares its backend,
        from two store instances at once, because a cold pool serialises the callers and
        hides a select-then-update.
        """
        stores = await self._warmed(contenders)
        for round_ in range(self.rounds):
            run = await _admit(store, created_at=data.at(-1000 + round_))
            workers = [WorkerId(f"contract-racer-{round_}-{i}") for i in range(self.concurrency)]
            results = await asyncio.gather(
                *(
                    stores[i % len(stores)].claim(w, data.at(0), LEASE)
                    for i, w in enumerate(workers)
                )
            )
            winners = [header for header in results if header is not None]
            assert len(winners) == 1, f"round {round_}: {results}"
            assert winners[0].run_id == run.run_id
            assert winners[0].attempt_count == 1
            assert await store.get_run(run.run_id) == winners[0]

    async def test_many_claimers_claim_each_run_exactly_once(self, store: Store) -> None:
        """With many Runs and many concurrent claimers, every Run is claimed exactly once.

        A duplicate means two claimers won the same Run; a missing Run means a claimer
        skipped a Run it should have taken (for example a lock held too long).
        """
        runs = [await _admit(store, created_at=data.at(i)) for i in range(2 * self.concurrency)]

        async def drain(worker: WorkerId) -> list[RunId]:
            taken: list[RunId] = []
            while (header := await store.claim(worker, data.at(1000), LEASE)) is not None:
                taken.append(header.run_id)
                await asyncio.sleep(0)
            return taken

        workers = [WorkerId(f"contract-drainer-{i}") for i in range(self.concurrency)]
        taken = [run_id for part in await asyncio.gather(*map(drain, workers)) for run_id in part]
        assert sorted(taken) == sorted(run.run_id for run in runs)
        for run in runs:
            header = await _stored(store, run.run_id)
            assert header.attempt_count == 1

    async def test_claim_skips_a_run_with_a_live_lease(self, store: Store) -> None:
        """A running Run whose lease has not expired is nobody else's to take."""
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        assert await store.claim(W2, data.at(10), LEASE) is None

    async def test_lease_expiry_then_reclaim_by_a_different_worker(self, store: Store) -> None:
        """Once the lease expires, another Worker claims the Run and becomes its holder."""
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        reclaimed = await _claim_only(store, run, W2, 31)
        assert reclaimed.lease_holder == W2
        stored = await _stored(store, run.run_id)
        assert stored.lease_holder == W2
        assert stored.lease_expires_at == data.at(31 + LEASE)

    async def test_reclaim_increments_attempt_count(self, store: Store) -> None:
        """attempt_count is 1 after the first claim and 2 after a reclaim (it is the fence)."""
        run = await _admit(store)
        assert (await _claim_only(store, run, W1, 0)).attempt_count == 1
        assert (await _claim_only(store, run, W2, 60)).attempt_count == 2

    # --- renew -------------------------------------------------------------------------

    async def test_renew_true_for_the_holder(self, store: Store) -> None:
        """The holder's renew moves the expiry to ``now + lease_seconds``."""
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        assert await store.renew(run.run_id, W1, data.at(20), LEASE)
        stored = await _stored(store, run.run_id)
        assert stored.lease_expires_at == data.at(20 + LEASE)
        assert await store.claim(W2, data.at(40), LEASE) is None

    async def test_renew_false_for_a_non_holder(self, store: Store) -> None:
        """Another Worker's renew fails and leaves the holder's lease as it was."""
        run = await _admit(store)
        held = await _claim_only(store, run, W1, 0)
        assert not await store.renew(run.run_id, W2, data.at(20), LEASE)
        assert await store.get_run(run.run_id) == held

    async def test_renew_false_for_a_run_that_was_never_claimed(self, store: Store) -> None:
        """Renewing an unclaimed (or unknown) Run fails without taking a lease."""
        run = await _admit(store)
        assert not await store.renew(run.run_id, W1, data.at(0), LEASE)
        assert not await store.renew(data.new_run_id("ghost"), W1, data.at(0), LEASE)
        assert await store.get_run(run.run_id) == run

    async def test_renew_false_after_another_worker_reclaimed_the_expired_lease(
        self, store: Store
    ) -> None:
        """The old holder cannot renew itself back in after a takeover."""
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        taken = await _claim_only(store, run, W2, 60)
        assert not await store.renew(run.run_id, W1, data.at(61), LEASE)
        assert await store.get_run(run.run_id) == taken

    async def test_renew_with_an_attempt_count_is_fenced_to_that_claim(self, store: Store) -> None:
        """A Worker that claimed a Run again cannot renew it for its older Attempt.

        With ``attempt_count`` the renew must also match the header's attempt count;
        check the condition in the store's conditional update. Without it, renew
        behaves as before.
        """
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        again = await _claim_only(store, run, W1, 60)
        assert again.attempt_count == 2
        assert not await store.renew(run.run_id, W1, data.at(61), LEASE, attempt_count=1)
        assert await store.get_run(run.run_id) == again
        assert await store.renew(run.run_id, W1, data.at(62), LEASE, attempt_count=2)
        renewed = await _stored(store, run.run_id)
        assert renewed.lease_expires_at == data.at(62 + LEASE)
        assert not await store.renew(run.run_id, W2, data.at(63), LEASE, attempt_count=2)

    # --- release -----------------------------------------------------------------------

    async def test_release_with_an_older_attempt_count_is_a_no_op(self, store: Store) -> None:
        """An older Attempt's release must not drop the same Worker's newer claim.

        With ``attempt_count`` the release applies only while the header is at that
        attempt count; check the condition in the store's conditional update.
        """
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        again = await _claim_only(store, run, W1, 60)
        await store.release(run.run_id, W1, RunState.SETTLED, attempt_count=1)
        assert await store.get_run(run.run_id) == again
        await store.release(
            run.run_id, W1, RunState.RUNNABLE, runnable_at=data.at(90), attempt_count=2
        )
        released = await _stored(store, run.run_id)
        assert released.state is RunState.RUNNABLE
        assert released.lease_holder is None
        assert released.runnable_at == data.at(90)

    async def test_release_drops_the_lease_and_sets_the_state(self, store: Store) -> None:
        """After release the state is the one given and holder and expiry are cleared."""
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        await store.release(run.run_id, W1, RunState.SETTLED)
        stored = await _stored(store, run.run_id)
        assert stored.state is RunState.SETTLED
        assert stored.lease_holder is None
        assert stored.lease_expires_at is None
        assert stored.attempt_count == 1

    async def test_release_is_tolerant_of_a_non_holder(self, store: Store) -> None:
        """A non-holder's release (or one for an unknown Run) is a silent no-op.

        The real holder's lease must be untouched.
        """
        run = await _admit(store)
        held = await _claim_only(store, run, W1, 0)
        await store.release(run.run_id, W2, RunState.SETTLED)
        await store.release(data.new_run_id("ghost"), W2, RunState.SETTLED)
        assert await store.get_run(run.run_id) == held

    async def test_release_to_runnable_lets_another_worker_claim(self, store: Store) -> None:
        """A Run released as runnable is claimable at once, as the next attempt."""
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        await store.release(run.run_id, W1, RunState.RUNNABLE)
        again = await _claim_only(store, run, W2, 1)
        assert again.attempt_count == 2

    async def test_release_with_runnable_at_parks_the_run(self, store: Store) -> None:
        """``release(..., runnable_at=t)`` keeps the Run unclaimable until ``t``."""
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        await store.release(run.run_id, W1, RunState.RUNNABLE, runnable_at=data.at(300))
        stored = await _stored(store, run.run_id)
        assert stored.runnable_at == data.at(300)
        assert await store.claim(W2, data.at(299), LEASE) is None
        await _claim_only(store, run, W2, 300)

    async def test_release_with_deadline_at_replaces_the_deadline(self, store: Store) -> None:
        """``deadline_at`` given to release replaces the deadline; omitted, it is kept."""
        run = await _admit(store, deadline_at=data.at(600))
        await _claim_only(store, run, W1, 0)
        await store.release(run.run_id, W1, RunState.RUNNABLE)
        kept = await _stored(store, run.run_id)
        assert kept.deadline_at == data.at(600)
        await _claim_only(store, run, W1, 1)
        await store.release(run.run_id, W1, RunState.SUSPENDED, deadline_at=data.at(5000))
        moved = await _stored(store, run.run_id)
        assert moved.deadline_at == data.at(5000)
        assert await store.overdue_deadlines(data.at(1000)) == []

    # --- settle_inline -----------------------------------------------------------------

    async def test_settle_inline_settles_a_nested_run_nobody_holds(self, store: Store) -> None:
        """A nested Run moves to settled and the call reports True."""
        run = await _admit(store, state=RunState.NESTED)
        assert await store.settle_inline(run.run_id)
        stored = await _stored(store, run.run_id)
        assert stored.state is RunState.SETTLED

    async def test_settle_inline_is_idempotent(self, store: Store) -> None:
        """The first call settles (True); the second finds nothing to do (False)."""
        run = await _admit(store, state=RunState.NESTED)
        assert await store.settle_inline(run.run_id)
        assert not await store.settle_inline(run.run_id)

    async def test_settle_inline_leaves_a_runnable_run_alone(self, store: Store) -> None:
        """Only ``nested`` Runs are settled inline; a runnable one is untouched."""
        run = await _admit(store)
        assert not await store.settle_inline(run.run_id)
        assert await store.get_run(run.run_id) == run

    async def test_settle_inline_does_not_take_a_run_a_worker_is_holding(
        self, store: Store
    ) -> None:
        """A Run under a Worker's lease is not settled inline."""
        run = await _admit(store)
        held = await _claim_only(store, run, W1, 0)
        assert not await store.settle_inline(run.run_id)
        assert await store.get_run(run.run_id) == held

    async def test_settle_inline_does_not_resurrect_or_re_settle(self, store: Store) -> None:
        """Settled and suspended Runs are left exactly as they are."""
        settled = await _admit(store, created_at=data.at(0))
        suspended = await _admit(store, created_at=data.at(1))
        await _claim_only(store, settled, W1, 10)
        await store.release(settled.run_id, W1, RunState.SETTLED)
        await _claim_only(store, suspended, W1, 10)
        await store.release(suspended.run_id, W1, RunState.SUSPENDED)
        for run in (settled, suspended):
            before = await store.get_run(run.run_id)
            assert not await store.settle_inline(run.run_id)
            assert await store.get_run(run.run_id) == before

    async def test_settle_inline_changes_the_state_and_nothing_else(self, store: Store) -> None:
        """Every header field other than ``state`` (parking, key, deadline) is unchanged."""
        run = await _admit(
            store,
            state=RunState.NESTED,
            runnable_at=data.at(500),
            idempotency_key=data.new_key(),
            deadline_at=data.at(900),
        )
        assert await store.settle_inline(run.run_id)
        assert await store.get_run(run.run_id) == run.model_copy(update={"state": RunState.SETTLED})

    async def test_settle_inline_on_an_unknown_run_is_false(self, store: Store) -> None:
        """An unknown run id is False, not an error."""
        assert not await store.settle_inline(data.new_run_id("ghost"))

    async def test_a_settled_inline_run_is_not_claimable_and_not_overdue(
        self, store: Store
    ) -> None:
        """After settle_inline the Run leaves every sweep: claim, overdue, expired."""
        run = await _admit(store, state=RunState.NESTED, deadline_at=data.at(10))
        assert [h.run_id for h in await store.overdue_deadlines(data.at(100))] == [run.run_id]
        assert await store.settle_inline(run.run_id)
        assert await store.claim(W1, data.at(100), LEASE) is None
        assert await store.overdue_deadlines(data.at(100)) == []
        assert await store.expired_leases(data.at(100)) == []

    # --- parking -----------------------------------------------------------------------

    async def test_set_runnable_at_parks_a_run_until_the_time_passes(self, store: Store) -> None:
        """A parked Run is unclaimable before ``runnable_at`` and claimable from it on."""
        run = await _admit(store)
        await store.set_runnable_at(run.run_id, data.at(300))
        stored = await _stored(store, run.run_id)
        assert stored.runnable_at == data.at(300)
        assert await store.claim(W1, data.at(299), LEASE) is None
        await _claim_only(store, run, W1, 300)

    async def test_set_runnable_at_none_clears_the_parking(self, store: Store) -> None:
        """Clearing the parking makes the Run claimable at once."""
        run = await _admit(store, runnable_at=data.at(3000))
        await store.set_runnable_at(run.run_id, None)
        stored = await _stored(store, run.run_id)
        assert stored.runnable_at is None
        await _claim_only(store, run, W1, 1)

    async def test_set_runnable_at_on_an_unknown_run_raises(self, store: Store) -> None:
        """Parking or waking a run id nobody created is RunNotFound."""
        with pytest.raises(RunNotFound):
            await store.set_runnable_at(data.new_run_id("ghost"), data.at(10))
        with pytest.raises(RunNotFound):
            await store.set_runnable_at(data.new_run_id("ghost"), None)

    async def test_clearing_the_parking_wakes_a_suspended_run(self, store: Store) -> None:
        """A suspended Run becomes runnable (``runnable_at`` None) and claimable."""
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        await store.release(run.run_id, W1, RunState.SUSPENDED)
        assert await store.claim(W2, data.at(100), LEASE) is None
        await store.set_runnable_at(run.run_id, None)
        stored = await _stored(store, run.run_id)
        assert stored.state is RunState.RUNNABLE
        assert stored.runnable_at is None
        assert (await _claim_only(store, run, W2, 100)).attempt_count == 2

    async def test_parking_a_suspended_run_leaves_it_suspended(self, store: Store) -> None:
        """Setting a time on a suspended Run does not make it runnable, even later."""
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        await store.release(run.run_id, W1, RunState.SUSPENDED)
        await store.set_runnable_at(run.run_id, data.at(300))
        stored = await _stored(store, run.run_id)
        assert stored.state is RunState.SUSPENDED
        assert await store.claim(W2, data.at(400), LEASE) is None

    async def test_waking_does_not_resurrect_a_settled_run(self, store: Store) -> None:
        """``set_runnable_at(None)`` on a settled Run leaves it settled and unclaimable."""
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        await store.release(run.run_id, W1, RunState.SETTLED)
        await store.set_runnable_at(run.run_id, None)
        stored = await _stored(store, run.run_id)
        assert stored.state is RunState.SETTLED
        assert await store.claim(W2, data.at(100), LEASE) is None

    # --- sweeps ------------------------------------------------------------------------

    async def test_expired_leases_lists_exactly_the_runs_past_their_lease(
        self, store: Store
    ) -> None:
        """Only running Runs whose lease passed; never-claimed and released Runs excluded."""
        expired = await _admit(store, created_at=data.at(0))
        live = await _admit(store, created_at=data.at(1))
        released = await _admit(store, created_at=data.at(2))
        await _admit(store, created_at=data.at(3))
        await _claim_only(store, expired, W1, 10)
        long_lease = await store.claim(W1, data.at(10), 3600)
        assert long_lease is not None
        assert long_lease.run_id == live.run_id
        await _claim_only(store, released, W1, 10)
        await store.release(released.run_id, W1, RunState.RUNNABLE)
        listed = await store.expired_leases(data.at(100))
        assert [header.run_id for header in listed] == [expired.run_id]
        assert listed[0] == await store.get_run(expired.run_id)

    async def test_expired_leases_respects_limit(self, store: Store) -> None:
        """``limit`` caps the list; without it every expired lease is listed."""
        runs = [await _admit(store, created_at=data.at(i)) for i in range(5)]
        for _ in runs:
            assert await store.claim(W1, data.at(10), LEASE) is not None
        ids = {run.run_id for run in runs}
        limited = await store.expired_leases(data.at(100), limit=2)
        assert len(limited) == 2
        assert {header.run_id for header in limited} <= ids
        assert {header.run_id for header in await store.expired_leases(data.at(100))} == ids

    async def test_overdue_deadlines_lists_exactly_the_runs_past_their_deadline(
        self, store: Store
    ) -> None:
        """Runs whose deadline passed are listed; Runs with a later deadline are not."""
        early = await _admit(store, deadline_at=data.at(10))
        await _admit(store, deadline_at=data.at(1000))
        also_early = await _admit(store, deadline_at=data.at(20), state=RunState.SUSPENDED)
        listed = await store.overdue_deadlines(data.at(100))
        assert {header.run_id for header in listed} == {early.run_id, also_early.run_id}

    async def test_overdue_deadlines_excludes_settled_runs(self, store: Store) -> None:
        """A settled Run is never overdue, whatever its deadline."""
        settled = await _admit(store, deadline_at=data.at(10), created_at=data.at(0))
        pending = await _admit(store, deadline_at=data.at(10), created_at=data.at(1))
        await _claim_only(store, settled, W1, 5)
        await store.release(settled.run_id, W1, RunState.SETTLED)
        listed = await store.overdue_deadlines(data.at(100))
        assert [header.run_id for header in listed] == [pending.run_id]

    async def test_overdue_deadlines_respects_limit(self, store: Store) -> None:
        """``limit`` caps the list; without it every overdue Run is listed."""
        runs = [await _admit(store, deadline_at=data.at(10 + i)) for i in range(5)]
        limited = await store.overdue_deadlines(data.at(100), limit=3)
        assert len(limited) == 3
        assert {h.run_id for h in limited} <= {run.run_id for run in runs}
        assert len(await store.overdue_deadlines(data.at(100))) == 5

    async def test_recent_runs_lists_newest_first_by_tenant_and_state(self, store: Store) -> None:
        """``RunListing.recent_runs``: newest admission first, filtered, capped.

        The protocol is optional: a store without it skips this case, and the skip
        says so (operators' ``psych runs`` then cannot list its Runs). When it fails,
        check the ordering (``created_at`` descending, then run id descending)
        and that the tenant and state filters are applied by the query, not after it.
        """
        if not isinstance(store, RunListing):
            pytest.skip("the store does not implement RunListing: psych runs cannot list its Runs")
        oldest = await _admit(store, created_at=data.at(1))
        other = await _admit(store, tenant="tenant-b", created_at=data.at(2))
        middle = await _admit(store, created_at=data.at(3), state=RunState.SUSPENDED)
        newest = await _admit(store, created_at=data.at(4))
        await _claim_only(store, oldest, W1, 10)
        await store.release(oldest.run_id, W1, RunState.SETTLED)

        listed = await store.recent_runs()
        assert [h.run_id for h in listed] == [
            newest.run_id,
            middle.run_id,
            other.run_id,
            oldest.run_id,
        ]
        assert listed[-1].state is RunState.SETTLED
        assert listed[-1].attempt_count == 1
        mine = await store.recent_runs(tenant="tenant-a")
        assert [h.run_id for h in mine] == [newest.run_id, middle.run_id, oldest.run_id]
        assert await store.recent_runs(tenant="tenant-c") == []
        waiting = await store.recent_runs(
            tenant="tenant-a", states=[RunState.SUSPENDED, RunState.SETTLED]
        )
        assert [h.run_id for h in waiting] == [middle.run_id, oldest.run_id]
        assert [h.run_id for h in await store.recent_runs(limit=2)] == [
            newest.run_id,
            middle.run_id,
        ]
        for bad in (0, -1):
            with pytest.raises(ValueError):
                await store.recent_runs(limit=bad)

    # --- notifier ----------------------------------------------------------------------

    def _require_notifier(self, store: Store) -> Notifier:
        if not self.supports_notifier:
            pytest.skip("the adapter declares supports_notifier = False")
        return _notifier(store)

    async def test_work_wakes_after_admitting_a_runnable_run(self, store: Store) -> None:
        """An idle Worker waiting on ``WORK`` wakes when a runnable Run is admitted.

        Signal ``WORK`` after the create_run transaction commits (never before).
        """
        notifier = self._require_notifier(store)
        run, admitted = data.admission()
        sees = _state_is(store, run.run_id, RunState.RUNNABLE)
        assert await _wakes(notifier, WORK, lambda: store.create_run(run, admitted), sees)

    async def test_work_wakes_after_release_to_runnable(self, store: Store) -> None:
        """Releasing a Run as runnable signals ``WORK``."""
        notifier = self._require_notifier(store)
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        assert await _wakes(
            notifier,
            WORK,
            lambda: store.release(run.run_id, W1, RunState.RUNNABLE),
            _state_is(store, run.run_id, RunState.RUNNABLE),
        )

    async def test_work_wakes_after_waking_a_suspended_run(self, store: Store) -> None:
        """``set_runnable_at(None)`` on a suspended Run signals ``WORK``."""
        notifier = self._require_notifier(store)
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        await store.release(run.run_id, W1, RunState.SUSPENDED)
        assert await _wakes(
            notifier,
            WORK,
            lambda: store.set_runnable_at(run.run_id, None),
            _state_is(store, run.run_id, RunState.RUNNABLE),
        )

    async def test_a_run_key_wakes_after_an_append(self, store: Store) -> None:
        """A reader waiting on a run id wakes when a batch is appended, and sees it.

        The woken reader looks at once: signal after the transaction commits, never
        before, or a reader told "changed" reads the old head and waits again.
        """
        notifier = self._require_notifier(store)
        run = await _admit(store)
        sees = _head_is(store, run.run_id, 3)
        assert await _wakes(notifier, run.run_id, lambda: _append(store, run, 2, 2), sees)

    async def test_a_waiter_without_a_signal_times_out(self, store: Store) -> None:
        """With no commit the wait returns False (so the other wake-up cases mean something)."""
        notifier = self._require_notifier(store)
        run = await _admit(store)
        seen = notifier.generation(run.run_id)
        assert not await notifier.wait(run.run_id, seen, 0.05)

    async def test_signals_reach_another_instance(self, store: Store, peer_store: Store) -> None:
        """Commits through ``store`` wake waiters on ``peer_store``'s notifier.

        Runs only when ``cross_process_notifier`` is True. Check that the listener is
        connected before the fixture returns and that notifications are sent on commit.
        """
        if not self.cross_process_notifier:
            pytest.skip("the adapter declares cross_process_notifier = False")
        notifier = _notifier(peer_store)
        run = await _admit(store)
        assert await _wakes(notifier, WORK, lambda: _admit(store))
        assert await _wakes(
            notifier,
            run.run_id,
            lambda: _append(store, run, 2, 1),
            _head_is(peer_store, run.run_id, 2),
        )

    async def test_a_second_instance_is_provided_or_single_process_declared(
        self, store: Store, peer_store: Store
    ) -> None:
        """Every store offers a second instance on its backend, or says it cannot.

        Override ``peer_store`` (a second pool, another file handle: another process as
        far as the backend can tell), or set ``single_process = True`` and say so in
        your documentation. A second instance that does not see the first one's data
        is no second instance.
        """
        peer = peer_store
        assert peer is not store, "peer_store must be another instance than store"
        run = await _admit(store)
        assert await peer.get_run(run.run_id) == run
        await _append(peer, run, 2, 1)
        assert await store.head(run.run_id) == 2

    async def test_every_signal_kind_reaches_a_listening_peer(
        self, store: Store, peer_store: Store
    ) -> None:
        """Commits of every kind through one instance wake the other's waiters.

        Runs when the notifiers report ``complete`` or the adapter declares
        ``cross_process_notifier``, in both directions: admission (the run id and
        ``WORK``), append, release (the run id, and ``WORK`` when runnable), waking a
        suspended Run (``WORK``), a nested admission and ``settle_inline`` (the run
        id), each seen by the woken waiter. A peer that hears only some kinds leaves
        readers waiting out their timeouts.
        """
        self._require_notifier(store)
        for writer, listener in ((peer_store, store), (store, peer_store)):
            notifier = _notifier(listener)
            await listener.read(data.new_run_id("warm"))  # may start hearing others
            if not (notifier.complete or self.cross_process_notifier):
                pytest.skip(
                    "the store's notifier hears only its own instance (complete = False "
                    "and cross_process_notifier = False): readers look at the store instead"
                )
            await self._every_signal_kind(writer, listener, notifier)

    async def _every_signal_kind(self, writer: Store, listener: Store, notifier: Notifier) -> None:
        run, run_admitted = data.admission()
        fresh, admitted = data.admission(created_at=data.at(-500))
        nested, nested_admitted = data.admission(state=RunState.NESTED)
        runnable = _state_is(listener, fresh.run_id, RunState.RUNNABLE)

        # Each step waits for every key its commit signals, so no signal of one step
        # can arrive late and wake the next step's waiter before its commit.
        steps: list[tuple[str, tuple[str, ...], Callable[[], Awaitable[object]], Sees]] = [
            (
                "admission",
                (run.run_id, WORK),
                lambda: writer.create_run(run, run_admitted),
                _state_is(listener, run.run_id, RunState.RUNNABLE),
            ),
            (
                "admission",
                (fresh.run_id, WORK),
                lambda: writer.create_run(fresh, admitted),
                runnable,
            ),
            (
                "append",
                (run.run_id,),
                lambda: _append(writer, run, 2, 1),
                _head_is(listener, run.run_id, 2),
            ),
            (
                "release to runnable",
                (fresh.run_id, WORK),
                lambda: writer.release(fresh.run_id, W1, RunState.RUNNABLE),
                runnable,
            ),
            (
                "release to suspended",
                (fresh.run_id,),
                lambda: writer.release(fresh.run_id, W1, RunState.SUSPENDED),
                _state_is(listener, fresh.run_id, RunState.SUSPENDED),
            ),
            (
                "waking a suspended Run",
                (WORK,),
                lambda: writer.set_runnable_at(fresh.run_id, None),
                runnable,
            ),
            (
                "a nested admission",
                (nested.run_id,),
                lambda: writer.create_run(nested, nested_admitted),
                _state_is(listener, nested.run_id, RunState.NESTED),
            ),
            (
                "settle_inline",
                (nested.run_id,),
                lambda: writer.settle_inline(nested.run_id),
                _state_is(listener, nested.run_id, RunState.SETTLED),
            ),
        ]
        for index, (what, keys, action, sees) in enumerate(steps):
            if what.startswith("release"):
                claimed = await writer.claim(W1, data.at(index), LEASE)
                assert claimed is not None and claimed.run_id == fresh.run_id
            woke = await _wakes_each(notifier, keys, action, sees)
            missed = [key for key in keys if not woke[key]]
            assert not missed, f"{what} through the other instance did not signal {missed}"
        await _settle_leftovers(writer, (run.run_id, fresh.run_id))

    # --- rules a store must keep exactly ----------------------------------------------

    async def test_every_header_field_round_trips(self, store: Store) -> None:
        """A header with every optional field set comes back equal from every call.

        ``create_run``, ``get_run``, ``claim``, ``expired_leases`` and
        ``overdue_deadlines`` all return whole headers: check that each column is
        written and selected, including ``parent_run_id``, ``continues_run_id`` and
        ``delegation_depth``.
        """
        base = data.header(
            tenant="tenant-a",
            idempotency_key=data.new_key(),
            runnable_at=data.at(-5),
            deadline_at=data.at(100),
        )
        run = base.model_copy(
            update={
                "parent_run_id": data.new_run_id("parent"),
                "continues_run_id": data.new_run_id("before"),
                "delegation_depth": 3,
            }
        )
        admission = await store.create_run(run, data.admitted_for(run))
        assert admission.header == run
        assert await store.get_run(run.run_id) == run
        assert await store.get_run(run.run_id, tenant="tenant-a") == run
        claimed = await store.claim(W1, data.at(0), LEASE)
        expected = run.model_copy(
            update={
                "state": RunState.RUNNING,
                "lease_holder": W1,
                "lease_expires_at": data.at(LEASE),
                "attempt_count": 1,
            }
        )
        assert claimed == expected
        assert await store.expired_leases(data.at(LEASE)) == [expected]
        assert await store.overdue_deadlines(data.at(100)) == [expected]

    async def test_idempotency_keys_of_two_tenants_never_collide(self, store: Store) -> None:
        """Tenant ``X:b`` with key ``c`` and tenant ``X`` with key ``b:c`` are two Runs.

        A store that joins tenant and key into one string with a separator that either
        may contain makes them one key. Keep the pair as two columns (or escape).
        """
        prefix = data.new_key("tenant")
        first, first_admitted = data.admission(tenant=f"{prefix}:b", idempotency_key="c")
        second, second_admitted = data.admission(tenant=prefix, idempotency_key="b:c")
        assert (await store.create_run(first, first_admitted)).created
        assert (await store.create_run(second, second_admitted)).created
        assert await store.get_run(second.run_id) == second

    async def test_a_fractional_lease_is_kept_exactly(self, store: Store) -> None:
        """``lease_seconds`` of 1.5 and 2.25 end 1.5 and 2.25 seconds later, not rounded."""
        run = await _admit(store)
        claimed = await store.claim(W1, data.at(0), 1.5)
        assert claimed is not None
        assert claimed.lease_expires_at == data.at(1.5)
        assert await store.renew(run.run_id, W1, data.at(1), 2.25)
        header = await _stored(store, run.run_id)
        assert header.lease_expires_at == data.at(3.25)
        assert await store.claim(W2, data.at(3), LEASE) is None
        assert await store.expired_leases(data.at(3)) == []

    async def test_a_sub_millisecond_lease_is_kept_exactly(self, store: Store) -> None:
        """Times and leases keep microseconds: 1.5 ms from ``.000501`` ends at ``.002001``.

        A store that keeps milliseconds (or rounds the lease) ends the lease a little
        early or late; keep microseconds end to end, and compute the expiry exactly.
        """
        run = await _admit(store)
        now = data.at(0.000501)
        claimed = await store.claim(W1, now, 0.0015)
        assert claimed is not None
        assert claimed.lease_expires_at == data.at(0.002001)
        assert await store.expired_leases(data.at(0.002)) == []
        assert [h.run_id for h in await store.expired_leases(data.at(0.002001))] == [run.run_id]
        assert await store.renew(run.run_id, W1, data.at(0.0009), 0.001102)
        header = await store.get_run(run.run_id)
        assert header is not None and header.lease_expires_at == data.at(0.002002)
        assert await store.claim(W2, data.at(0.002001), LEASE) is None
        again = await store.claim(W2, data.at(0.002002), LEASE)
        assert again is not None and again.run_id == run.run_id

    async def test_sweeps_break_ties_by_run_id(self, store: Store) -> None:
        """Runs due at the same instant are swept in run id order, whatever their admission.

        ``expired_leases`` and ``overdue_deadlines`` order by time, then run id: the
        Runs here are admitted in the opposite order of their ids, so an order left to
        the backend (insertion order, a heap) shows.
        """
        base = data.new_run_id("tie")
        ids = [RunId(f"{base}-{letter}") for letter in ("c", "b", "a", "e", "d")]
        for run_id in ids:
            run, admitted = data.admission(run_id, deadline_at=data.at(50))
            assert (await store.create_run(run, admitted)).created
        for _ in ids:
            assert await store.claim(W1, data.at(0), LEASE) is not None
        expected = sorted(ids)
        assert [h.run_id for h in await store.overdue_deadlines(data.at(50))] == expected
        assert [h.run_id for h in await store.expired_leases(data.at(LEASE))] == expected
        assert [h.run_id for h in await store.overdue_deadlines(data.at(50), limit=2)] == (
            expected[:2]
        )

    async def test_claim_order_counts_from_when_a_parked_run_became_runnable(
        self, store: Store
    ) -> None:
        """Claim order is ``runnable_at`` (else ``created_at``), then ``created_at``, run id.

        An old Run parked until second 5 waited less than a Run admitted at second 3,
        so at second 10 the younger one is claimed first.
        """
        parked = await _admit(store, created_at=data.at(0), runnable_at=data.at(5))
        younger = await _admit(store, created_at=data.at(3))
        first = await store.claim(W1, data.at(10), LEASE)
        second = await store.claim(W2, data.at(10), LEASE)
        assert first is not None and second is not None
        assert (first.run_id, second.run_id) == (younger.run_id, parked.run_id)

    async def test_a_run_admitted_with_a_later_created_at_is_claimable_now(
        self, store: Store
    ) -> None:
        """``created_at`` orders the queue; it never holds a Run back. Only parking does."""
        run = await _admit(store, created_at=data.at(500))
        claimed = await store.claim(W1, data.at(0), LEASE)
        assert claimed is not None and claimed.run_id == run.run_id

    async def test_runnable_at_exactly_now_is_claimable(self, store: Store) -> None:
        """Parking ends at ``runnable_at`` inclusive: claimable at that instant, not before."""
        run = await _admit(store, runnable_at=data.at(5))
        assert await store.claim(W1, data.at(4), LEASE) is None
        claimed = await store.claim(W1, data.at(5), LEASE)
        assert claimed is not None and claimed.run_id == run.run_id

    async def test_a_lease_ending_exactly_now_has_expired(self, store: Store) -> None:
        """A lease ends at ``lease_expires_at`` inclusive: swept and reclaimable then."""
        run = await _admit(store)
        claimed = await _claim_only(store, run, W1, 0)
        assert await store.expired_leases(data.at(LEASE - 1)) == []
        assert await store.expired_leases(data.at(LEASE)) == [claimed]
        assert await store.claim(W2, data.at(LEASE - 1), LEASE) is None
        again = await store.claim(W2, data.at(LEASE), LEASE)
        assert again is not None and again.run_id == run.run_id

    async def test_a_deadline_exactly_now_is_overdue(self, store: Store) -> None:
        """``overdue_deadlines(now)`` includes a deadline equal to ``now``."""
        run = await _admit(store, deadline_at=data.at(50))
        assert await store.overdue_deadlines(data.at(49)) == []
        assert await store.overdue_deadlines(data.at(50)) == [run]

    async def test_a_running_run_parked_until_later_is_not_reclaimed_early(
        self, store: Store
    ) -> None:
        """A running Run parked past its lease's end is claimable only once parking ends."""
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        await store.set_runnable_at(run.run_id, data.at(100))
        assert await store.claim(W2, data.at(LEASE + 10), LEASE) is None
        again = await store.claim(W2, data.at(100), LEASE)
        assert again is not None and again.run_id == run.run_id

    async def test_release_without_runnable_at_clears_earlier_parking(self, store: Store) -> None:
        """``release`` replaces ``runnable_at``: leaving it out unparks the Run."""
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        await store.set_runnable_at(run.run_id, data.at(100))
        await store.release(run.run_id, W1, RunState.RUNNABLE)
        header = await store.get_run(run.run_id)
        assert header is not None and header.runnable_at is None
        again = await store.claim(W2, data.at(1), LEASE)
        assert again is not None and again.run_id == run.run_id

    async def test_parking_a_settled_run_changes_nothing(self, store: Store) -> None:
        """``set_runnable_at`` with a time leaves a settled Run exactly as it was."""
        run = await _admit(store)
        await _claim_only(store, run, W1, 0)
        await store.release(run.run_id, W1, RunState.SETTLED)
        settled = await store.get_run(run.run_id)
        await store.set_runnable_at(run.run_id, data.at(100))
        assert await store.get_run(run.run_id) == settled

    async def test_work_wakes_when_a_parked_run_is_unparked(self, store: Store) -> None:
        """``set_runnable_at(None)`` on a parked runnable Run signals ``WORK``."""
        notifier = self._require_notifier(store)
        run = await _admit(store, runnable_at=data.at(1000))
        assert await _wakes(notifier, WORK, lambda: store.set_runnable_at(run.run_id, None))

    async def test_a_complete_notifier_hears_another_instance(
        self, store: Store, peer_store: Store
    ) -> None:
        """A notifier reporting ``complete`` must hear commits made by another instance.

        ``complete`` tells readers that "no signal" means "nothing changed"; a notifier
        that only hears its own process must report ``complete = False``.
        """
        notifier = self._require_notifier(store)
        run = await _admit(store)
        await store.read(run.run_id)  # a store may start hearing others on first use
        if not notifier.complete:
            assert await peer_store.head(run.run_id) == 1
            return
        assert await _wakes(
            notifier,
            run.run_id,
            lambda: _append(peer_store, run, 2, 1),
            _head_is(store, run.run_id, 2),
        )

    async def test_a_closed_store_refuses_further_calls(self, store: Store) -> None:
        """After ``close()`` every call raises ``StoreError``; closing again is harmless.

        A ``close`` that does nothing leaves connections (or threads) behind for the
        life of the process; refusing calls afterwards is how a user finds out they
        closed a store too early.
        """
        run = await _admit(store)
        await store.close()
        await store.close()
        calls: dict[str, Callable[[], Awaitable[object]]] = {
            "head": lambda: store.head(run.run_id),
            "get_run": lambda: store.get_run(run.run_id),
            "read": lambda: store.read(run.run_id),
            "claim": lambda: store.claim(W1, data.at(0), LEASE),
            "append": lambda: _append(store, run, 2, 1),
        }
        for name, call in calls.items():
            try:
                await call()
            except StoreError:
                continue
            pytest.fail(f"{name} worked on a closed store")

    # --- values every store can keep ---------------------------------------------------

    async def test_a_batch_with_an_unstorable_value_is_refused_and_writes_nothing(
        self, store: Store
    ) -> None:
        """Every store refuses the same values, with ``UnstorableValue``, writing nothing.

        A lone surrogate has no UTF-8 encoding, a non-finite number no JSON spelling, and
        nesting past ``MAX_RECORD_DEPTH`` cannot be read back by the parser. Call
        ``check_append_batch`` first in ``append`` (before any backend call): it refuses
        these, and so keeps one store from keeping what another cannot.
        """
        run = await _admit(store)
        deep: object = "leaf"
        for _ in range(MAX_RECORD_DEPTH + 1):
            deep = [deep]
        hostile: list[object] = ["text \ud800", {"n": math.nan}, [math.inf], deep]
        for value in hostile:
            good = data.batch(run, 2, 1)[0]
            bad = QueueEnqueued(
                run_id=run.run_id,
                seq=3,
                at=data.at(3),
                scope=run.scope,
                queue=QueueKind.STEER,
                entry_id=EntryId("entry-hostile"),
                payload={"message": value},  # type: ignore[dict-item]
            )
            with pytest.raises(UnstorableValue):
                await store.append(run.run_id, 2, [good, bad])
            assert await store.head(run.run_id) == 1
            assert [r.seq for r in await store.read(run.run_id)] == [1]
        await store.append(run.run_id, 2, data.batch(run, 2, 1))
        assert await store.head(run.run_id) == 2

    async def test_an_admission_with_unstorable_keys_or_input_is_refused(
        self, store: Store
    ) -> None:
        """``create_run`` refuses keys and input no store can hold, and admits nothing.

        A tenant, principal, run id or idempotency key holding NUL or a lone surrogate
        cannot be written to an indexed text column everywhere; call ``check_admission``
        first in ``create_run``.
        """
        candidates = [
            data.admission(idempotency_key="key\x00"),
            data.admission(tenant="tenant\x00"),
            data.admission(data.new_run_id("nul\x00")),
            data.admission(message="\udfff"),
        ]
        for run, admitted in candidates:
            with pytest.raises(UnstorableValue):
                await store.create_run(run, admitted)
            assert await store.get_run(run.run_id) is None
            assert await store.head(run.run_id) == 0

    async def test_hostile_lookups_answer_as_unknown_everywhere(self, store: Store) -> None:
        """Every store answers the same hostile lookup the same way: as for an unknown key.

        A hash or tenant holding a lone surrogate or NUL, and one far longer than any
        column, names no Version and no Run: ``get_version`` is None (with and without a
        tenant), the tenant-scoped reads and the retention calls find nothing. No driver
        error (``UnicodeEncodeError``, a data error) may escape; call
        ``no_run_can_match`` first, as for run ids.
        """
        version = data.version("hostile")
        await store.put_version(version, tenant="tenant-a")
        run = await _admit(store)
        hashes = ["sha256:\ud800", "sha256:\x00", "sha256:" + "f" * 5000, version.hash + "\udfff"]
        for raw in hashes:
            assert await store.get_version(VersionHash(raw)) is None, raw[:40]
            assert await store.get_version(VersionHash(raw), tenant="tenant-a") is None
        for tenant in ("tenant-a\ud800", "tenant-a\x00", "t" * 5000):
            assert await store.get_version(version.hash, tenant=tenant) is None, tenant[:40]
            assert await store.get_run(run.run_id, tenant=tenant) is None
            assert await store.read(run.run_id, tenant=tenant) == []
            deleter = _deleter(store)
            assert await deleter.settled_runs(tenant=tenant, created_before=data.at(10**6)) == []
            assert await deleter.delete_runs([run.run_id], tenant=tenant) == []
        assert await store.get_version(version.hash, tenant="tenant-a") is not None

    async def test_run_ids_no_store_can_hold_read_as_unknown(self, store: Store) -> None:
        """An id with NUL or a lone surrogate names no Run, and no driver sees it.

        ``get_run``, ``read`` and ``head`` answer it as unknown, and ``append`` raises
        ``RunNotFound``. Call ``no_run_can_match(run_id, tenant)`` first in those methods.
        """
        for raw in ("run_\x00", "run_\ud800", "\x00"):
            run_id = RunId(raw)
            assert await store.get_run(run_id) is None
            assert await store.get_run(run_id, tenant="tenant-a") is None
            assert await store.read(run_id) == []
            assert await store.read(run_id, tenant="tenant-a") == []
            assert await store.head(run_id) == 0
            ghost = data.header(data.new_run_id("ghost"))
            record = data.batch(ghost, 2, 1)[0].model_copy(update={"run_id": run_id})
            with pytest.raises(RunNotFound):
                await store.append(run_id, 2, [record])


__all__ = ["StoreContract"]
