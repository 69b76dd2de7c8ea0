"""The example Store: every port call as one step under its database's lock.

A real adapter would talk to a database here; this one keeps dictionaries in a
process-wide registry of named databases. Each method holds the database's lock for the
whole call, which is what makes each call one atomic operation (the port's first rule):
the check and the write of an append, or the choice and the update of a claim, can
never interleave with another caller's.

Every name comes from ``psych_runtime`` or ``psych_runtime.adapters`` (and
``psych_runtime.records``): the public namespaces an adapter may rely on. The lease
and sweep rules (``claimable``, ``claim_order``, ``holds_lease`` and the two sweeps)
are the core's own, ready for any store that holds its headers in memory.
"""

import asyncio
from collections.abc import Collection
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from datetime import timedelta

from psych_runtime import RunId
from psych_runtime import RunNotFound
from psych_runtime import Version
from psych_runtime import VersionHash
from psych_runtime.adapters.store import WORK
from psych_runtime.adapters.store import Admission
from psych_runtime.adapters.store import Fence
from psych_runtime.adapters.store import LeaseLost
from psych_runtime.adapters.store import LocalNotifier
from psych_runtime.adapters.store import RawItem
from psych_runtime.adapters.store import RunHeader
from psych_runtime.adapters.store import RunState
from psych_runtime.adapters.store import SeqConflict
from psych_runtime.adapters.store import StoreError
from psych_runtime.adapters.store import check_admission
from psych_runtime.adapters.store import check_append_batch
from psych_runtime.adapters.store import check_read_window
from psych_runtime.adapters.store import claim_order
from psych_runtime.adapters.store import claimable
from psych_runtime.adapters.store import holds_lease
from psych_runtime.adapters.store import leased
from psych_runtime.adapters.store import oldest_settled_runs
from psych_runtime.adapters.store import parked
from psych_runtime.adapters.store import released
from psych_runtime.adapters.store import settings_from
from psych_runtime.adapters.store import sweep_expired_leases
from psych_runtime.adapters.store import sweep_overdue_deadlines
from psych_runtime.records import Record
from psych_runtime.records import RunAdmitted
from psych_runtime.records import WorkerId
from psych_runtime.records import record_to_json
from psych_store_example.settings import ExampleSettings


@dataclass
class _Database:
    """One named database: what a server would keep, shared by every store on it."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    notifier: LocalNotifier = field(default_factory=LocalNotifier)
    headers: dict[RunId, RunHeader] = field(default_factory=dict)
    logs: dict[RunId, list[Record]] = field(default_factory=dict)
    keys: dict[tuple[str, str], RunId] = field(default_factory=dict)
    versions: dict[VersionHash, Version] = field(default_factory=dict)
    grants: dict[tuple[VersionHash, str | None], datetime] = field(default_factory=dict)


_DATABASES: dict[str, _Database] = {}


class ExampleStore:
    """A Store on a named in-process database (``example://NAME``).

    Args:
        url: ``example://NAME``, or ``ExampleSettings`` already made.
        **options: none are accepted.

    Raises:
        InvalidStoreUrl: the URL is malformed.
        TypeError: an option was given.
    """

    def __init__(self, url: str | ExampleSettings, /, **options: object) -> None:
        self._settings = settings_from(url, ExampleSettings, options)
        self._db = _DATABASES.setdefault(self._settings.database, _Database())
        self._closed = False

    @property
    def settings(self) -> ExampleSettings:
        """What the store was opened with; a second store on the same settings shares data."""
        return self._settings

    @property
    def notifier(self) -> LocalNotifier:
        """Shared by every store on the database, so it hears all their commits.

        That is what ``complete=True`` (LocalNotifier's default) promises. A store whose
        other writers live in other processes, unheard, must say ``complete=False``.
        """
        return self._db.notifier

    async def close(self) -> None:
        """Refuse further calls; the database itself lives on for other stores."""
        self._closed = True

    def _open(self) -> _Database:
        if self._closed:
            raise StoreError(f"the example store on {self._settings.database!r} is closed")
        return self._db

    # --- the log -----------------------------------------------------------------------

    async def append(
        self,
        run_id: RunId,
        expected_seq: int,
        records: Sequence[Record],
        *,
        fence: Fence | None = None,
    ) -> None:
        """Write the batch at ``expected_seq``; Run, then fence, then sequence."""
        check_append_batch(run_id, expected_seq, records)
        db = self._open()
        async with db.lock:
            header = db.headers.get(run_id)
            if header is None:
                raise RunNotFound(run_id)
            if fence is not None and not holds_lease(header, fence.worker_id, fence.attempt_count):
                raise LeaseLost(run_id, fence.worker_id, fence.attempt_count)
            if len(db.logs[run_id]) != expected_seq - 1:
                raise SeqConflict(run_id, expected_seq)
            db.logs[run_id].extend(records)
        db.notifier.signal(run_id)

    async def read(
        self,
        run_id: RunId,
        *,
        after: int = 0,
        limit: int | None = None,
        tenant: str | None = None,
    ) -> list[Record]:
        """Records after ``after``; another tenant's Run reads as empty."""
        check_read_window(after, limit)
        db = self._open()
        async with db.lock:
            header = db.headers.get(run_id)
            if header is None or (tenant is not None and header.scope.tenant != tenant):
                return []
            log = db.logs[run_id][after:]
            return log if limit is None else log[:limit]

    async def head(self, run_id: RunId) -> int:
        """The last seq written, 0 for an unknown Run."""
        db = self._open()
        async with db.lock:
            return len(db.logs.get(run_id, ()))

    # --- versions ----------------------------------------------------------------------

    async def put_version(self, version: Version, *, tenant: str | None) -> Version:
        """Keep the first copy of a hash; each grantee's first publication time wins."""
        db = self._open()
        async with db.lock:
            stored = db.versions.setdefault(version.hash, version)
            published = db.grants.setdefault((version.hash, tenant), version.published_at)
            return stored.model_copy(update={"published_at": published})

    async def get_version(
        self, version_hash: VersionHash, *, tenant: str | None = None
    ) -> Version | None:
        """Visible to its owner and, when shared, to everyone; unfiltered without a tenant."""
        db = self._open()
        async with db.lock:
            stored = db.versions.get(version_hash)
            if stored is None or tenant is None:
                return stored
            published = db.grants.get((version_hash, tenant), db.grants.get((version_hash, None)))
            if published is None:
                return None
            return stored.model_copy(update={"published_at": published})

    # --- admission and headers ---------------------------------------------------------

    async def create_run(self, header: RunHeader, admitted: RunAdmitted) -> Admission:
        """Admit once per (tenant, key) and per run id; header and record together."""
        check_admission(header, admitted)
        db = self._open()
        key = header.idempotency_key
        async with db.lock:
            if key is not None and (header.scope.tenant, key) in db.keys:
                existing = db.headers[db.keys[header.scope.tenant, key]]
                return Admission(existing, created=False)
            if header.run_id in db.headers:
                return Admission(db.headers[header.run_id], created=False)
            if key is not None:
                db.keys[header.scope.tenant, key] = header.run_id
            db.headers[header.run_id] = header
            db.logs[header.run_id] = [admitted]
        db.notifier.signal(header.run_id)
        if header.state is RunState.RUNNABLE:
            db.notifier.signal(WORK)
        return Admission(header, created=True)

    async def get_run(self, run_id: RunId, *, tenant: str | None = None) -> RunHeader | None:
        """The header; None for an unknown Run or another tenant's."""
        db = self._open()
        async with db.lock:
            header = db.headers.get(run_id)
        if header is None or (tenant is not None and header.scope.tenant != tenant):
            return None
        return header

    # --- leases ------------------------------------------------------------------------

    async def claim(
        self, worker_id: WorkerId, now: datetime, lease_seconds: float
    ) -> RunHeader | None:
        """Lease the first claimable Run in claim order; choice and update are one step."""
        db = self._open()
        async with db.lock:
            candidates = [h for h in db.headers.values() if claimable(h, now)]
            if not candidates:
                return None
            best = min(candidates, key=claim_order)
            claimed = leased(best, worker_id, now, lease_seconds)
            db.headers[best.run_id] = claimed
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
        """Extend the holder's lease on a running Run; False for anyone else."""
        db = self._open()
        async with db.lock:
            header = db.headers.get(run_id)
            if header is None or header.state is not RunState.RUNNING:
                return False
            if not holds_lease(header, worker_id, attempt_count):
                return False
            expires = now + timedelta(seconds=lease_seconds)
            db.headers[run_id] = header.model_copy(update={"lease_expires_at": expires})
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
        """Drop the holder's lease; ``runnable_at`` replaces any earlier parking."""
        db = self._open()
        async with db.lock:
            header = db.headers.get(run_id)
            if header is None or not holds_lease(header, worker_id, attempt_count):
                return
            db.headers[run_id] = released(header, state, runnable_at, deadline_at)
        db.notifier.signal(run_id)
        if state is RunState.RUNNABLE:
            db.notifier.signal(WORK)

    async def settle_inline(self, run_id: RunId) -> bool:
        """Settle a nested Run nobody holds; False for anything else."""
        db = self._open()
        async with db.lock:
            header = db.headers.get(run_id)
            if header is None or header.state is not RunState.NESTED or header.lease_holder:
                return False
            db.headers[run_id] = header.model_copy(update={"state": RunState.SETTLED})
        db.notifier.signal(run_id)
        return True

    async def set_runnable_at(self, run_id: RunId, runnable_at: datetime | None) -> None:
        """Park or unpark an unsettled Run; unparking a suspended one makes it runnable."""
        db = self._open()
        async with db.lock:
            header = db.headers.get(run_id)
            if header is None:
                raise RunNotFound(run_id)
            if header.state is RunState.SETTLED:
                return
            updated = parked(header, runnable_at)
            db.headers[run_id] = updated
        if runnable_at is None and updated.state is RunState.RUNNABLE:
            db.notifier.signal(WORK)

    # --- sweeps ------------------------------------------------------------------------

    async def expired_leases(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        """Running Runs whose lease ended at or before ``now``, earliest first."""
        db = self._open()
        async with db.lock:
            return sweep_expired_leases(list(db.headers.values()), now, limit)

    async def overdue_deadlines(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        """Unsettled Runs whose deadline is at or before ``now``, earliest first."""
        db = self._open()
        async with db.lock:
            return sweep_overdue_deadlines(list(db.headers.values()), now, limit)

    # --- retention and raw storage -----------------------------------------------------

    async def settled_runs(
        self,
        *,
        tenant: str,
        created_before: datetime,
        after: tuple[datetime, RunId] | None = None,
        limit: int = 100,
    ) -> list[RunHeader]:
        """A tenant's settled Runs admitted before a time, oldest first, page by page."""
        db = self._open()
        async with db.lock:
            return oldest_settled_runs(
                list(db.headers.values()),
                tenant=tenant,
                created_before=created_before,
                after=after,
                limit=limit,
            )

    async def delete_runs(self, run_ids: Collection[RunId], *, tenant: str) -> list[RunId]:
        """Delete the tenant's settled Runs among ``run_ids``: header, log and key."""
        db = self._open()
        deleted: list[RunId] = []
        async with db.lock:
            for run_id in dict.fromkeys(run_ids):
                header = db.headers.get(run_id)
                if header is None or header.scope.tenant != tenant:
                    continue
                if header.state is not RunState.SETTLED:
                    continue
                del db.headers[run_id]
                db.logs.pop(run_id, None)
                if header.idempotency_key is not None:
                    db.keys.pop((tenant, header.idempotency_key), None)
                deleted.append(run_id)
        return deleted

    async def raw_storage(self) -> list[RawItem]:
        """Everything the database holds, as bytes: how the contract checks deletion.

        A real adapter returns its backend's own bytes here (a file, every page of
        its tables, every item), so that a delete which only hides data is caught.
        """
        db = self._open()
        async with db.lock:
            items = [
                RawItem(f"header {run_id}", header.model_dump_json().encode())
                for run_id, header in db.headers.items()
            ]
            items.extend(
                RawItem(f"record {run_id}/{record.seq}", record_to_json(record))
                for run_id, log in db.logs.items()
                for record in log
            )
            items.extend(
                RawItem(f"key {tenant}/{key}", run_id.encode())
                for (tenant, key), run_id in db.keys.items()
            )
            return items


__all__ = ["ExampleStore"]
