"""An executable reference model of the Store port: its rules, and nothing else.

``ReferenceStore`` answers every port call the way the port's docstrings say a store
must, written as plainly as possible: dictionaries, lists and no indexes, no
cleverness, no concurrency (the model-based test calls it one operation at a time).
It is what the stateful test compares a store under test with, step by step.

It also says which notifier keys a correct store must signal for each write
(``signals``); a store may signal more (a spurious wake-up costs a read), never less.
"""

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
from psych_runtime.adapters.store import RunHeader
from psych_runtime.adapters.store import RunState
from psych_runtime.adapters.store import SeqConflict
from psych_runtime.records import Record
from psych_runtime.records import RunAdmitted
from psych_runtime.records import WorkerId


def claimable(header: RunHeader, now: datetime) -> bool:
    """Whether ``claim(now)`` may lease this Run.

    Not parked (``runnable_at`` absent or at or before ``now``), and either
    ``runnable`` or ``running`` with a lease that has run out (expiry at or before
    ``now``). ``created_at`` plays no part: a Run admitted "in the future" is claimable.
    """
    if header.runnable_at is not None and header.runnable_at > now:
        return False
    if header.state is RunState.RUNNABLE:
        return True
    if header.state is RunState.RUNNING:
        return header.lease_expires_at is None or header.lease_expires_at <= now
    return False


def claim_order(header: RunHeader) -> tuple[datetime, datetime, str]:
    """The order ``claim`` leases Runs in: the first of these keys wins.

    Since when the Run has been waiting (``runnable_at`` when parked, else
    ``created_at``), then ``created_at``, then the run id.
    """
    since = header.runnable_at if header.runnable_at is not None else header.created_at
    return (since, header.created_at, header.run_id)


def _holds(header: RunHeader, worker_id: WorkerId, attempt_count: int | None) -> bool:
    return header.lease_holder == worker_id and (
        attempt_count is None or header.attempt_count == attempt_count
    )


@dataclass
class ReferenceStore:
    """The Store port's behaviour, one synchronous call at a time.

    Methods mirror the port's, without ``async``; they return what a correct store
    returns and raise what it raises. ``signals`` holds the notifier keys the last
    write had to signal.
    """

    headers: dict[RunId, RunHeader] = field(default_factory=dict)
    logs: dict[RunId, list[Record]] = field(default_factory=dict)
    keys: dict[tuple[str, str], RunId] = field(default_factory=dict)
    versions: dict[VersionHash, Version] = field(default_factory=dict)
    grants: dict[tuple[VersionHash, str | None], datetime] = field(default_factory=dict)
    signals: set[str] = field(default_factory=set)

    # --- the log -----------------------------------------------------------------------

    def append(
        self,
        run_id: RunId,
        expected_seq: int,
        records: Sequence[Record],
        fence: Fence | None = None,
    ) -> None:
        """Checks run in this order: the Run exists, the fence, then the sequence."""
        self.signals = set()
        header = self.headers.get(run_id)
        if header is None:
            raise RunNotFound(run_id)
        if fence is not None and not _holds(header, fence.worker_id, fence.attempt_count):
            raise LeaseLost(run_id, fence.worker_id, fence.attempt_count)
        if len(self.logs[run_id]) != expected_seq - 1:
            raise SeqConflict(run_id, expected_seq)
        self.logs[run_id].extend(records)
        self.signals = {run_id}

    def read(
        self, run_id: RunId, after: int = 0, limit: int | None = None, tenant: str | None = None
    ) -> list[Record]:
        """Records after ``after``, at most ``limit``; another tenant's Run reads empty."""
        if self.get_run(run_id, tenant) is None:
            return []
        log = self.logs[run_id][after:]
        return log if limit is None else log[:limit]

    def head(self, run_id: RunId) -> int:
        """The last seq written, 0 for an unknown Run."""
        return len(self.logs.get(run_id, []))

    # --- versions ----------------------------------------------------------------------

    def put_version(self, version: Version, tenant: str | None) -> Version:
        """The first stored copy of a hash and each grantee's first publication win."""
        stored = self.versions.setdefault(version.hash, version)
        published = self.grants.setdefault((version.hash, tenant), version.published_at)
        return stored.model_copy(update={"published_at": published})

    def get_version(self, version_hash: VersionHash, tenant: str | None = None) -> Version | None:
        """Visible to its owner and, when shared, to everyone; unfiltered without a tenant."""
        stored = self.versions.get(version_hash)
        if stored is None:
            return None
        if tenant is None:
            return stored  # the first stored copy, with its own publication time
        published = self.grants.get((version_hash, tenant), self.grants.get((version_hash, None)))
        if published is None:
            return None
        return stored.model_copy(update={"published_at": published})

    # --- admission and headers ---------------------------------------------------------

    def create_run(self, header: RunHeader, admitted: RunAdmitted) -> Admission:
        """Exactly once per (tenant, key) and per run id; the record lands with the header."""
        self.signals = set()
        key = header.idempotency_key
        if key is not None and (header.scope.tenant, key) in self.keys:
            return Admission(self.headers[self.keys[header.scope.tenant, key]], created=False)
        if header.run_id in self.headers:
            return Admission(self.headers[header.run_id], created=False)
        if key is not None:
            self.keys[header.scope.tenant, key] = header.run_id
        self.headers[header.run_id] = header
        self.logs[header.run_id] = [admitted]
        self.signals = {header.run_id}
        if header.state is RunState.RUNNABLE and header.runnable_at is None:
            self.signals.add(WORK)
        return Admission(header, created=True)

    def get_run(self, run_id: RunId, tenant: str | None = None) -> RunHeader | None:
        """The header; None for an unknown Run or another tenant's."""
        header = self.headers.get(run_id)
        if header is None or (tenant is not None and header.scope.tenant != tenant):
            return None
        return header

    # --- leases ------------------------------------------------------------------------

    def claim(self, worker_id: WorkerId, now: datetime, lease_seconds: float) -> RunHeader | None:
        """The first claimable Run in claim order, leased until ``now + lease_seconds``."""
        self.signals = set()
        candidates = [h for h in self.headers.values() if claimable(h, now)]
        if not candidates:
            return None
        best = min(candidates, key=claim_order)
        claimed = best.model_copy(
            update={
                "state": RunState.RUNNING,
                "lease_holder": worker_id,
                "lease_expires_at": now + timedelta(seconds=lease_seconds),
                "attempt_count": best.attempt_count + 1,
            }
        )
        self.headers[best.run_id] = claimed
        return claimed

    def renew(
        self,
        run_id: RunId,
        worker_id: WorkerId,
        now: datetime,
        lease_seconds: float,
        attempt_count: int | None = None,
    ) -> bool:
        """Only the holder of a running Run (at that claim, when named) may extend it."""
        self.signals = set()
        header = self.headers.get(run_id)
        if header is None or header.state is not RunState.RUNNING:
            return False
        if not _holds(header, worker_id, attempt_count):
            return False
        self.headers[run_id] = header.model_copy(
            update={"lease_expires_at": now + timedelta(seconds=lease_seconds)}
        )
        return True

    def release(
        self,
        run_id: RunId,
        worker_id: WorkerId,
        state: RunState,
        runnable_at: datetime | None = None,
        deadline_at: datetime | None = None,
        attempt_count: int | None = None,
    ) -> None:
        """The holder drops the lease; ``runnable_at`` is replaced (None clears parking)."""
        self.signals = set()
        header = self.headers.get(run_id)
        if header is None or not _holds(header, worker_id, attempt_count):
            return
        changes: dict[str, object] = {
            "state": state,
            "lease_holder": None,
            "lease_expires_at": None,
            "runnable_at": runnable_at,
        }
        if deadline_at is not None:
            changes["deadline_at"] = deadline_at
        self.headers[run_id] = header.model_copy(update=changes)
        self.signals = {run_id}
        if state is RunState.RUNNABLE and runnable_at is None:
            self.signals.add(WORK)

    def settle_inline(self, run_id: RunId) -> bool:
        """A ``nested`` Run nobody holds becomes ``settled``; nothing else changes."""
        self.signals = set()
        header = self.headers.get(run_id)
        if header is None or header.state is not RunState.NESTED or header.lease_holder:
            return False
        self.headers[run_id] = header.model_copy(update={"state": RunState.SETTLED})
        self.signals = {run_id}
        return True

    def set_runnable_at(self, run_id: RunId, runnable_at: datetime | None) -> None:
        """Park (or unpark) any unsettled Run; unparking a suspended one makes it runnable."""
        self.signals = set()
        header = self.headers.get(run_id)
        if header is None:
            raise RunNotFound(run_id)
        if header.state is RunState.SETTLED:
            return
        changes: dict[str, object] = {"runnable_at": runnable_at}
        if runnable_at is None and header.state is RunState.SUSPENDED:
            changes["state"] = RunState.RUNNABLE
        updated = header.model_copy(update=changes)
        self.headers[run_id] = updated
        if runnable_at is None and updated.state is RunState.RUNNABLE:
            self.signals = {WORK}

    # --- sweeps ------------------------------------------------------------------------

    def expired_leases(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        """Running Runs whose lease expired at or before ``now``, earliest expiry first."""
        expired = [
            h
            for h in self.headers.values()
            if h.state is RunState.RUNNING
            and h.lease_expires_at is not None
            and h.lease_expires_at <= now
        ]
        expired.sort(key=lambda h: (h.lease_expires_at, h.run_id))
        return expired[:limit]

    def overdue_deadlines(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        """Unsettled Runs whose deadline is at or before ``now``, earliest first."""
        overdue = [
            h
            for h in self.headers.values()
            if h.state is not RunState.SETTLED and h.deadline_at <= now
        ]
        overdue.sort(key=lambda h: (h.deadline_at, h.run_id))
        return overdue[:limit]


__all__ = ["ReferenceStore", "claim_order", "claimable"]
