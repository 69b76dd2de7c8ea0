"""An in-process Store: dictionaries behind the Store port.

Useful for unit tests, notebooks and single-process deployments that accept losing every
Run when the process exits. It passes the same conformance suite as the durable stores,
so code tested against it behaves the same on them.

Atomicity without a lock: every method body runs on one event loop and never awaits
between reading the state it checks and writing the state it changes. asyncio only
switches tasks at an ``await``, so no other coroutine can observe or change the store
halfway through a method. Anyone editing this module must keep it that way: an
``await`` inside a method would quietly turn each conditional write into a race.
"""

from collections.abc import Collection
from collections.abc import Sequence
from datetime import datetime
from datetime import timedelta

from psych_runtime.core.errors import RunNotFound
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import VersionHash
from psych_runtime.core.ids import WorkerId
from psych_runtime.core.raw import RawItem
from psych_runtime.core.records import Record
from psych_runtime.core.records import RunAdmitted
from psych_runtime.core.records import record_to_json
from psych_runtime.core.version import Version
from psych_runtime.store.checks import check_admission
from psych_runtime.store.checks import check_append_batch
from psych_runtime.store.checks import check_read_window
from psych_runtime.store.errors import LeaseLost
from psych_runtime.store.errors import SeqConflict
from psych_runtime.store.errors import StoreError
from psych_runtime.store.notify import WORK
from psych_runtime.store.notify import LocalNotifier
from psych_runtime.store.notify import signal_run
from psych_runtime.store.port import Admission
from psych_runtime.store.port import Fence
from psych_runtime.store.port import RunHeader
from psych_runtime.store.port import RunState
from psych_runtime.store.rules import claim_order
from psych_runtime.store.rules import claimable
from psych_runtime.store.rules import holds_lease
from psych_runtime.store.rules import leased
from psych_runtime.store.rules import newest_runs
from psych_runtime.store.rules import oldest_settled_runs
from psych_runtime.store.rules import parked
from psych_runtime.store.rules import released
from psych_runtime.store.rules import sweep_expired_leases
from psych_runtime.store.rules import sweep_overdue_deadlines

_CANDIDATE_STATES = frozenset({RunState.RUNNABLE, RunState.RUNNING})


class InMemoryStore:
    """A Store that keeps everything in this process's memory.

    It satisfies ``psych_runtime.store.port.Store`` structurally. Records and headers
    are immutable pydantic models, so they are kept and handed out as they are: nothing
    a caller holds can change what the store holds.

    Besides the primary maps it keeps two indexes so the frequent scans stay small:
    the Runs that could ever be claimed (``runnable`` or ``running``) and the Runs not
    yet settled (the only ones a deadline sweep has to look at).
    """

    def __init__(self) -> None:
        self._headers: dict[RunId, RunHeader] = {}
        self._logs: dict[RunId, list[Record]] = {}
        self._by_key: dict[tuple[str, str], RunId] = {}
        self._versions: dict[VersionHash, Version] = {}
        # Who may see each Version: tenant (None for the share) -> its first publication.
        self._grants: dict[VersionHash, dict[str | None, datetime]] = {}
        self._candidates: set[RunId] = set()
        self._unsettled: set[RunId] = set()
        self._notifier = LocalNotifier()
        self._closed = False

    @property
    def notifier(self) -> LocalNotifier:
        """Signalled after every commit that a reader or an idle Worker may care about."""
        return self._notifier

    # --- the log -----------------------------------------------------------------------

    async def append(
        self,
        run_id: RunId,
        expected_seq: int,
        records: Sequence[Record],
        *,
        fence: Fence | None = None,
    ) -> None:
        """See ``Store.append``; checks run in the order input, fence, sequence."""
        self._check_open()
        check_append_batch(run_id, expected_seq, records)
        header = self._headers.get(run_id)
        if header is None:
            raise RunNotFound(run_id)
        if fence is not None and not holds_lease(header, fence.worker_id, fence.attempt_count):
            raise LeaseLost(run_id, fence.worker_id, fence.attempt_count)
        log = self._logs[run_id]
        if len(log) != expected_seq - 1:
            raise SeqConflict(run_id, expected_seq)
        log.extend(records)
        self._notifier.signal(run_id)

    async def read(
        self,
        run_id: RunId,
        *,
        after: int = 0,
        limit: int | None = None,
        tenant: str | None = None,
    ) -> list[Record]:
        """See ``Store.read``."""
        self._check_open()
        check_read_window(after, limit)
        if self._visible(run_id, tenant) is None:
            return []
        log = self._logs[run_id]
        end = len(log) if limit is None else after + limit
        return log[after:end]

    async def head(self, run_id: RunId) -> int:
        """See ``Store.head``."""
        self._check_open()
        log = self._logs.get(run_id)
        return 0 if log is None else len(log)

    # --- versions ----------------------------------------------------------------------

    async def put_version(self, version: Version, *, tenant: str | None) -> Version:
        """See ``Store.put_version``; the first stored copy and first grant win."""
        self._check_open()
        stored = self._versions.setdefault(version.hash, version)
        granted = self._grants.setdefault(version.hash, {})
        published_at = granted.setdefault(tenant, version.published_at)
        return stored.model_copy(update={"published_at": published_at})

    async def get_version(
        self, version_hash: VersionHash, *, tenant: str | None = None
    ) -> Version | None:
        """See ``Store.get_version``."""
        self._check_open()
        stored = self._versions.get(version_hash)
        if stored is None or tenant is None:
            return stored
        granted = self._grants.get(version_hash, {})
        published_at = granted.get(tenant, granted.get(None))
        if published_at is None:
            return None
        return stored.model_copy(update={"published_at": published_at})

    # --- admission and headers ---------------------------------------------------------

    async def create_run(self, header: RunHeader, admitted: RunAdmitted) -> Admission:
        """See ``Store.create_run``."""
        self._check_open()
        check_admission(header, admitted)
        key = None
        if header.idempotency_key is not None:
            key = (header.scope.tenant, header.idempotency_key)
            existing_id = self._by_key.get(key)
            if existing_id is not None:
                return Admission(self._headers[existing_id], created=False)
        existing = self._headers.get(header.run_id)
        if existing is not None:
            return Admission(existing, created=False)
        if key is not None:
            self._by_key[key] = header.run_id
        self._logs[header.run_id] = [admitted]
        self._put(header)
        signal_run(self._notifier, header.run_id, runnable=header.state is RunState.RUNNABLE)
        return Admission(header, created=True)

    async def get_run(self, run_id: RunId, *, tenant: str | None = None) -> RunHeader | None:
        """See ``Store.get_run``."""
        self._check_open()
        return self._visible(run_id, tenant)

    # --- leases ------------------------------------------------------------------------

    async def claim(
        self, worker_id: WorkerId, now: datetime, lease_seconds: float
    ) -> RunHeader | None:
        """See ``Store.claim``; scans only the Runs that could be claimable."""
        self._check_open()
        best: RunHeader | None = None
        for run_id in self._candidates:
            header = self._headers[run_id]
            if claimable(header, now) and (best is None or claim_order(header) < claim_order(best)):
                best = header
        if best is None:
            return None
        claimed = leased(best, worker_id, now, lease_seconds)
        self._put(claimed)
        return claimed

    async def renew(
        self,
        run_id: RunId,
        worker_id: WorkerId,
        now: datetime,
        lease_seconds: float,
        *,
        attempt_count: int | None = None,
    ) -> bool:
        """See ``Store.renew``."""
        self._check_open()
        header = self._headers.get(run_id)
        if header is None or header.state is not RunState.RUNNING:
            return False
        if not holds_lease(header, worker_id, attempt_count):
            return False
        self._put(
            header.model_copy(update={"lease_expires_at": now + timedelta(seconds=lease_seconds)})
        )
        return True

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
        """See ``Store.release``.

        Signals the Run's key (someone may be waiting for it to stop) and, when the Run
        comes back as ``runnable``, ``WORK`` so an idle Worker picks it up.
        """
        self._check_open()
        header = self._headers.get(run_id)
        if header is None or not holds_lease(header, worker_id, attempt_count):
            return
        self._put(released(header, state, runnable_at, deadline_at))
        signal_run(self._notifier, run_id, runnable=state is RunState.RUNNABLE)

    async def settle_inline(self, run_id: RunId) -> bool:
        """See ``Store.settle_inline``."""
        self._check_open()
        header = self._headers.get(run_id)
        if header is None or header.state is not RunState.NESTED:
            return False
        if header.lease_holder is not None:
            return False
        self._put(header.model_copy(update={"state": RunState.SETTLED}))
        self._notifier.signal(run_id)
        return True

    async def set_runnable_at(self, run_id: RunId, runnable_at: datetime | None) -> None:
        """See ``Store.set_runnable_at``; a settled Run is left exactly as it is."""
        self._check_open()
        header = self._headers.get(run_id)
        if header is None:
            raise RunNotFound(run_id)
        if header.state is RunState.SETTLED:
            return
        updated = parked(header, runnable_at)
        self._put(updated)
        if updated.state is RunState.RUNNABLE and runnable_at is None:
            self._notifier.signal(WORK)

    # --- sweeps ------------------------------------------------------------------------

    async def expired_leases(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        """See ``Store.expired_leases``; only the Runs that could be running are looked at."""
        self._check_open()
        return sweep_expired_leases((self._headers[r] for r in self._candidates), now, limit)

    async def overdue_deadlines(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        """See ``Store.overdue_deadlines``; only unsettled Runs are looked at."""
        self._check_open()
        return sweep_overdue_deadlines((self._headers[r] for r in self._unsettled), now, limit)

    async def recent_runs(
        self,
        *,
        tenant: str | None = None,
        states: Collection[RunState] | None = None,
        limit: int = 20,
    ) -> list[RunHeader]:
        """See ``RunListing.recent_runs``."""
        self._check_open()
        return newest_runs(self._headers.values(), tenant=tenant, states=states, limit=limit)

    async def settled_runs(
        self,
        *,
        tenant: str,
        created_before: datetime,
        after: tuple[datetime, RunId] | None = None,
        limit: int = 100,
    ) -> list[RunHeader]:
        """See ``RunDeletion.settled_runs``."""
        self._check_open()
        return oldest_settled_runs(
            self._headers.values(),
            tenant=tenant,
            created_before=created_before,
            after=after,
            limit=limit,
        )

    async def delete_runs(self, run_ids: Collection[RunId], *, tenant: str) -> list[RunId]:
        """See ``RunDeletion.delete_runs``: the header, the log and the key go."""
        self._check_open()
        deleted: list[RunId] = []
        for run_id in dict.fromkeys(run_ids):
            header = self._visible(run_id, tenant)
            if header is None or header.state is not RunState.SETTLED:
                continue
            del self._headers[run_id]
            self._logs.pop(run_id, None)
            self._candidates.discard(run_id)
            self._unsettled.discard(run_id)
            if header.idempotency_key is not None:
                self._by_key.pop((tenant, header.idempotency_key), None)
            deleted.append(run_id)
        return deleted

    async def raw_storage(self) -> list[RawItem]:
        """See ``RawStorage.raw_storage``: every header, record and Version held."""
        items = [
            RawItem(f"header {run_id}", header.model_dump_json().encode())
            for run_id, header in self._headers.items()
        ]
        items.extend(
            RawItem(f"record {run_id}/{record.seq}", record_to_json(record))
            for run_id, log in self._logs.items()
            for record in log
        )
        items.extend(
            RawItem(f"version {digest}", version.model_dump_json().encode())
            for digest, version in self._versions.items()
        )
        return items

    async def close(self) -> None:
        """Refuse every later call, as a store with connections would; idempotent."""
        self._closed = True

    # --- internals ---------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("this InMemoryStore is closed")

    def _visible(self, run_id: RunId, tenant: str | None) -> RunHeader | None:
        header = self._headers.get(run_id)
        if header is None or (tenant is not None and header.scope.tenant != tenant):
            return None
        return header

    def _put(self, header: RunHeader) -> None:
        """Replace a header and keep both indexes in step with its state."""
        run_id = header.run_id
        self._headers[run_id] = header
        if header.state in _CANDIDATE_STATES:
            self._candidates.add(run_id)
        else:
            self._candidates.discard(run_id)
        if header.state is RunState.SETTLED:
            self._unsettled.discard(run_id)
        else:
            self._unsettled.add(run_id)


__all__ = ["InMemoryStore"]
