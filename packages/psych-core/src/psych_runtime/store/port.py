"""The Store port: the three primitives everything durable rests on.

A Store keeps, per Run, an immutable append-only log and one small mutable header (the
lease, the claimable state). Everything else in Psych is built on three operations:
append a batch at an expected sequence, claim a Run under a condition, and read a range.

The queue is the store: a Run is claimable when it is ``runnable`` (and its
``runnable_at`` has passed) or ``running`` with an expired lease. There is no broker.
"""

from collections.abc import Collection
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Annotated
from typing import Protocol
from typing import runtime_checkable

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field

from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import VersionHash
from psych_runtime.core.ids import WorkerId
from psych_runtime.core.records import Record
from psych_runtime.core.records import RunAdmitted
from psych_runtime.core.scope import Scope
from psych_runtime.core.version import Version
from psych_runtime.store.notify import Notifier


class RunState(StrEnum):
    """Where a Run stands for claiming purposes; the log holds the detail."""

    RUNNABLE = "runnable"
    RUNNING = "running"
    SUSPENDED = "suspended"
    NESTED = "nested"
    """A child executed inline by its parent's Attempt; never claimable."""
    SETTLED = "settled"


class RunHeader(BaseModel):
    """The one mutable row beside a Run's immutable log.

    Attributes:
        run_id: the Run.
        scope: tenancy; stores filter by ``scope.tenant``.
        version_hash: the Version the Run pinned at admission.
        state: claimability.
        created_at: admission time.
        deadline_at: when the supervisor aborts the Run. Moved later by time spent
            suspended, so waiting for a person does not eat the working budget.
        lease_holder: which Worker currently holds the Run, or None.
        lease_expires_at: the instant the holder's claim lapses unless renewed.
        idempotency_key: admission is exactly-once per (tenant, key).
        attempt_count: how many times the Run has been claimed; also the fence epoch.
        runnable_at: not claimable before this instant.
        parent_run_id: the delegating Run, for a child.
        delegation_depth: how deep in a delegation tree the Run sits.
        continues_run_id: the previous Run of a conversation thread.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: RunId
    scope: Scope
    version_hash: VersionHash
    state: RunState
    created_at: datetime
    deadline_at: datetime
    lease_holder: WorkerId | None = None
    lease_expires_at: datetime | None = None
    idempotency_key: Annotated[str | None, Field(max_length=256)] = None
    attempt_count: Annotated[int, Field(ge=0)] = 0
    runnable_at: datetime | None = None
    parent_run_id: RunId | None = None
    delegation_depth: Annotated[int, Field(ge=0)] = 0
    continues_run_id: RunId | None = None


@dataclass(frozen=True, slots=True)
class Fence:
    """Identifies the lease an Attempt's writes are valid under.

    A fenced append succeeds only while the Run's header still names this Worker as
    holder at this attempt count; a takeover bumps the count, so a zombie Worker's
    writes are refused in the same atomic step as the sequence check.
    """

    worker_id: WorkerId
    attempt_count: int


@dataclass(frozen=True, slots=True)
class Admission:
    """The result of ``create_run``: the Run's header and whether this call made it."""

    header: RunHeader
    created: bool


@runtime_checkable
class Store(Protocol):
    """The persistence port. Every method is a single atomic operation.

    The rules below are what ``psych-contract`` checks, each by a named case and all of
    them together by a model-based case that compares random call sequences with
    ``psych_contract.reference.ReferenceStore``. In short:

    * Times are compared inclusively: a lease, a parking time (``runnable_at``) or a
      deadline that ends exactly at ``now`` has ended. Keep at least microseconds.
    * Atomicity must hold under real contention (a warm connection pool, two store
      instances on one database): an append is one conditional write, a claim one
      conditional update, never a read followed by a write.
    * Every header field is stored and returned, including ``parent_run_id``,
      ``continues_run_id`` and ``delegation_depth``.
    * After ``close()`` every call raises ``StoreError``.
    """

    @property
    def notifier(self) -> Notifier | None:
        """Signals commits to waiters, or None when the backend cannot."""
        ...

    async def append(
        self,
        run_id: RunId,
        expected_seq: int,
        records: Sequence[Record],
        *,
        fence: Fence | None = None,
    ) -> None:
        """Write ``records`` at ``expected_seq .. expected_seq + n - 1``, all or nothing.

        The checks come in this order: the Run exists, then the fence, then the
        sequence; a refused batch writes nothing. Signals the Run's id.

        Raises:
            SeqConflict: the log's head is not ``expected_seq - 1``.
            LeaseLost: ``fence`` is given and no longer matches the lease.
            RunNotFound: the Run does not exist.
            ValueError: the records' own ``seq`` fields do not match the positions.
        """
        ...

    async def read(
        self,
        run_id: RunId,
        *,
        after: int = 0,
        limit: int | None = None,
        tenant: str | None = None,
    ) -> list[Record]:
        """Records with ``seq > after`` in order, at most ``limit`` of them.

        When ``tenant`` is given, another tenant's Run reads as empty. An unknown Run
        reads as empty too.
        """
        ...

    async def head(self, run_id: RunId) -> int:
        """The highest written seq, or 0 for an unknown Run."""
        ...

    async def put_version(self, version: Version, *, tenant: str | None) -> Version:
        """Store a Version and grant it to ``tenant``, or (None) share it with every tenant.

        A Version's hash is its content, so equal Specs published by two tenants are one
        stored Version with two grants. Each grant remembers the ``published_at`` of its
        own first publication; storing the same hash for the same grantee again changes
        nothing. Nobody but the grantee can see a tenant's grant, not even its time.

        Args:
            version: the Version to keep; the first stored copy of a hash is kept.
            tenant: the owning tenant (a non-empty name, compared exactly), or None
                for a shared Version every tenant may read and dispatch.

        Returns:
            The Version as the grantee now sees it: ``published_at`` is that grant's
            first publication, which may be earlier than ``version.published_at``.
        """
        ...

    async def get_version(
        self, version_hash: VersionHash, *, tenant: str | None = None
    ) -> Version | None:
        """The stored Version when ``tenant`` may see it, else None.

        With a tenant, a Version is visible when that tenant owns it or it is shared;
        ``published_at`` is the tenant's own grant's time, else the share's. Without a
        tenant the lookup is unfiltered (the Worker loading an admitted Run's Version)
        and returns the first stored copy as it was stored.
        """
        ...

    async def create_run(self, header: RunHeader, admitted: RunAdmitted) -> Admission:
        """Admit a Run: its header and its ``run_admitted`` record in one operation.

        Idempotent per (tenant, idempotency key): a repeated key returns the existing
        header with ``created=False`` and writes nothing. The pair is two values: tenant
        ``a:b`` with key ``c`` and tenant ``a`` with key ``b:c`` are different keys. A
        duplicate run id never overwrites the existing Run (also ``created=False``).
        A created Run signals its id, and ``WORK`` when it is runnable and not parked.
        """
        ...

    async def get_run(self, run_id: RunId, *, tenant: str | None = None) -> RunHeader | None:
        """The header, or None (also None for another tenant's Run when given)."""
        ...

    async def claim(
        self, worker_id: WorkerId, now: datetime, lease_seconds: float
    ) -> RunHeader | None:
        """Lease one claimable Run to ``worker_id``; exactly one claimer wins.

        Claimable: not parked (``runnable_at`` absent or at or before ``now``), and
        ``runnable``, or ``running`` with a lease that expired at or before ``now``.
        ``created_at`` never holds a Run back. Among claimable Runs the first in this
        order wins: ``runnable_at`` if set else ``created_at``, then ``created_at``, then
        the run id. The returned header reflects the claim: holder, expiry exactly
        ``now + lease_seconds`` (fractions kept), ``attempt_count`` incremented, state
        ``running``.
        """
        ...

    async def renew(
        self,
        run_id: RunId,
        worker_id: WorkerId,
        now: datetime,
        lease_seconds: float,
        *,
        attempt_count: int | None = None,
    ) -> bool:
        """Extend the lease; False when ``worker_id`` no longer holds it.

        With ``attempt_count`` the lease must also still be that claim's: a Worker
        that lost a Run and claimed it again cannot extend the new lease on behalf of
        its older Attempt.
        """
        ...

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
        """Drop the lease and set the state; a silent no-op for a non-holder.

        ``runnable_at`` replaces the header's parking: a time parks the released Run
        until then, None clears any earlier parking. ``deadline_at``, when given,
        replaces the header's deadline (used to extend it by time spent suspended).
        With ``attempt_count``, a header at another attempt count is not the caller's
        lease and is left alone, exactly as for a non-holder. Signals the Run's id,
        and ``WORK`` when it comes back ``runnable`` unparked.
        """
        ...

    async def settle_inline(self, run_id: RunId) -> bool:
        """Move a ``nested`` Run nobody holds to ``settled``; False otherwise.

        Only the state changes. Signals the Run's id when it settles one.
        """
        ...

    async def set_runnable_at(self, run_id: RunId, runnable_at: datetime | None) -> None:
        """Park a Run until a time, or (None) clear parking and wake a suspended Run.

        A settled Run is left exactly as it is. A running Run may be parked: once its
        lease expires it is claimable only when the parking ends too. Clearing the
        parking of a Run that is then ``runnable`` signals ``WORK``.

        Raises:
            RunNotFound: the Run does not exist.
        """
        ...

    async def expired_leases(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        """Running Runs whose lease expired at or before ``now``, earliest first (read only).

        Ties are ordered by run id; at most ``limit`` are returned.
        """
        ...

    async def overdue_deadlines(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        """Unsettled Runs whose deadline is at or before ``now``, earliest first (read only).

        Ties are ordered by run id; at most ``limit`` are returned.
        """
        ...

    async def close(self) -> None:
        """Release connections; every later call raises ``StoreError``. Idempotent."""
        ...


@runtime_checkable
class Migratable(Protocol):
    """A Store whose database has a schema to create and upgrade.

    Stores that keep nothing outside the process (the in-memory one) have no schema
    and do not implement this. ``open_store(url, migrate=True)`` calls ``migrate`` on a
    store that does, and closes the store when migrating fails.
    """

    async def migrate(self) -> list[int]:
        """Bring the schema up to this release's version; safe to call any number of times.

        Several processes may migrate the same database at once; each step is applied
        once. Until a store has been migrated, using it raises ``SchemaNotMigrated``.

        Returns:
            The schema versions this call applied, oldest first; empty when the schema
            was already current.

        Raises:
            SchemaTooNew: a newer release migrated the database; nothing is changed.
            StoreUnavailable: the database cannot be reached.
        """
        ...


@runtime_checkable
class RunListing(Protocol):
    """A Store that can list its Runs, newest first, for people looking at them.

    It serves operators' tools (``psych runs``), never the runtime itself, which finds
    its work by claiming. A Store without it still runs agents; the tools that list
    Runs then say the store cannot. Every store shipped with Psych implements it.
    """

    async def recent_runs(
        self,
        *,
        tenant: str | None = None,
        states: Collection[RunState] | None = None,
        limit: int = 20,
    ) -> list[RunHeader]:
        """The most recently admitted Runs' headers, newest first (read only).

        Ordered by ``created_at`` descending, ties by run id descending.

        Args:
            tenant: only this tenant's Runs; None lists every tenant's.
            states: only Runs in one of these states; None (or empty) lists all.
            limit: at most this many headers, at least 1.

        Raises:
            ValueError: ``limit`` is below 1.
        """
        ...


@runtime_checkable
class RunDeletion(Protocol):
    """A Store that can delete settled Runs for good: retention and erasure rest on it.

    Every store shipped with Psych implements it, and ``psych-contract`` requires it.
    The runtime never calls it; ``psych_runtime.delete_run`` and
    ``psych_runtime.delete_settled_runs`` do, for a deployment's retention jobs.
    """

    async def settled_runs(
        self,
        *,
        tenant: str,
        created_before: datetime,
        after: tuple[datetime, RunId] | None = None,
        limit: int = 100,
    ) -> list[RunHeader]:
        """Settled Runs of ``tenant`` admitted before ``created_before``, oldest first.

        Ordered by ``created_at``, then run id; ``after`` (the ``created_at`` and run
        id of the last header of the previous page) continues a listing past it. Read
        only. The tenant is compared exactly, as everywhere.

        Raises:
            ValueError: ``limit`` is below 1.
        """
        ...

    async def delete_runs(self, run_ids: Collection[RunId], *, tenant: str) -> list[RunId]:
        """Delete these Runs of ``tenant`` that are settled, in one atomic operation.

        A deleted Run loses its header, its whole log and its idempotency key (the
        key admits a new Run afterwards); its id reads as unknown from then on. A Run
        of another tenant, one not settled, and an id nobody admitted are left alone
        and not returned. What is deleted leaves the backend's bytes too, as far as
        the adapter's documentation says (``raw_storage`` shows it).

        Returns:
            The ids of the Runs deleted, in no particular order.
        """
        ...


@runtime_checkable
class SchemaInspection(Protocol):
    """A Store with a schema that can say, without changing anything, where it stands.

    Operators' tools (``psych doctor --store``) use it to compare the database with
    the installed adapter before anyone runs ``migrate``. Every store shipped with
    Psych that has a schema implements it.
    """

    @property
    def expected_schema_version(self) -> int:
        """The schema version this release of the adapter writes and needs."""
        ...

    async def schema_version(self) -> int | None:
        """The version recorded in the database: 0 or None when it was never migrated.

        Reads only: it creates nothing, not even an empty database file.

        Raises:
            StoreUnavailable: the database cannot be reached.
        """
        ...


__all__ = [
    "Admission",
    "Fence",
    "Migratable",
    "RunDeletion",
    "RunHeader",
    "RunListing",
    "RunState",
    "SchemaInspection",
    "Store",
]
