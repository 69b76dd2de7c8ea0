"""``ForwardingStore``: a Store that hands every call to another one.

Subclass it and override the one call you want to change: count it, slow it down,
fail it, or break a rule on purpose to see a test catch it. Everything else reaches
the inner store unchanged. A test that only watches what is written overrides
``before_append`` or ``after_append`` instead of ``append`` itself.
"""

from collections.abc import Collection
from collections.abc import Sequence
from datetime import datetime

from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import VersionHash
from psych_runtime.core.ids import WorkerId
from psych_runtime.core.raw import RawItem
from psych_runtime.core.raw import RawStorage
from psych_runtime.core.records import Record
from psych_runtime.core.records import RunAdmitted
from psych_runtime.core.version import Version
from psych_runtime.store.notify import Notifier
from psych_runtime.store.port import Admission
from psych_runtime.store.port import Fence
from psych_runtime.store.port import RunDeletion
from psych_runtime.store.port import RunHeader
from psych_runtime.store.port import RunState
from psych_runtime.store.port import Store


class ForwardingStore:
    """Passes every Store call to ``inner``.

    Args:
        inner: the store that does the work; ``close()`` closes it too.
    """

    def __init__(self, inner: Store) -> None:
        self.inner = inner

    @property
    def notifier(self) -> Notifier | None:
        """The inner store's notifier."""
        return self.inner.notifier

    async def append(
        self,
        run_id: RunId,
        expected_seq: int,
        records: Sequence[Record],
        *,
        fence: Fence | None = None,
    ) -> None:
        """Passed to the inner store, between ``before_append`` and ``after_append``."""
        await self.before_append(run_id, records)
        await self.inner.append(run_id, expected_seq, records, fence=fence)
        await self.after_append(run_id, records)

    async def before_append(self, run_id: RunId, records: Sequence[Record]) -> None:
        """Sees a batch before the inner store does; raising keeps it from being written."""

    async def after_append(self, run_id: RunId, records: Sequence[Record]) -> None:
        """Sees a batch the inner store has written; raising reports the write as failed."""

    async def read(
        self, run_id: RunId, *, after: int = 0, limit: int | None = None, tenant: str | None = None
    ) -> list[Record]:
        """Passed to the inner store."""
        return await self.inner.read(run_id, after=after, limit=limit, tenant=tenant)

    async def head(self, run_id: RunId) -> int:
        """Passed to the inner store."""
        return await self.inner.head(run_id)

    async def put_version(self, version: Version, *, tenant: str | None) -> Version:
        """Passed to the inner store."""
        return await self.inner.put_version(version, tenant=tenant)

    async def get_version(
        self, version_hash: VersionHash, *, tenant: str | None = None
    ) -> Version | None:
        """Passed to the inner store."""
        return await self.inner.get_version(version_hash, tenant=tenant)

    async def create_run(self, header: RunHeader, admitted: RunAdmitted) -> Admission:
        """Passed to the inner store."""
        return await self.inner.create_run(header, admitted)

    async def get_run(self, run_id: RunId, *, tenant: str | None = None) -> RunHeader | None:
        """Passed to the inner store."""
        return await self.inner.get_run(run_id, tenant=tenant)

    async def claim(
        self, worker_id: WorkerId, now: datetime, lease_seconds: float
    ) -> RunHeader | None:
        """Passed to the inner store."""
        return await self.inner.claim(worker_id, now, lease_seconds)

    async def renew(
        self,
        run_id: RunId,
        worker_id: WorkerId,
        now: datetime,
        lease_seconds: float,
        *,
        attempt_count: int | None = None,
    ) -> bool:
        """Passed to the inner store."""
        return await self.inner.renew(
            run_id, worker_id, now, lease_seconds, attempt_count=attempt_count
        )

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
        """Passed to the inner store."""
        await self.inner.release(
            run_id,
            worker_id,
            state,
            runnable_at=runnable_at,
            deadline_at=deadline_at,
            attempt_count=attempt_count,
        )

    async def settle_inline(self, run_id: RunId) -> bool:
        """Passed to the inner store."""
        return await self.inner.settle_inline(run_id)

    async def set_runnable_at(self, run_id: RunId, runnable_at: datetime | None) -> None:
        """Passed to the inner store."""
        await self.inner.set_runnable_at(run_id, runnable_at)

    async def expired_leases(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        """Passed to the inner store."""
        return await self.inner.expired_leases(now, limit)

    async def overdue_deadlines(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        """Passed to the inner store."""
        return await self.inner.overdue_deadlines(now, limit)

    async def settled_runs(
        self,
        *,
        tenant: str,
        created_before: datetime,
        after: tuple[datetime, RunId] | None = None,
        limit: int = 100,
    ) -> list[RunHeader]:
        """Passed to the inner store, which must implement ``RunDeletion``."""
        inner = self.inner
        if not isinstance(inner, RunDeletion):
            raise NotImplementedError(f"{type(inner).__name__} cannot delete Runs")
        return await inner.settled_runs(
            tenant=tenant, created_before=created_before, after=after, limit=limit
        )

    async def delete_runs(self, run_ids: Collection[RunId], *, tenant: str) -> list[RunId]:
        """Passed to the inner store, which must implement ``RunDeletion``."""
        inner = self.inner
        if not isinstance(inner, RunDeletion):
            raise NotImplementedError(f"{type(inner).__name__} cannot delete Runs")
        return await inner.delete_runs(run_ids, tenant=tenant)

    async def raw_storage(self) -> list[RawItem]:
        """Passed to the inner store, which must implement ``RawStorage``."""
        inner = self.inner
        if not isinstance(inner, RawStorage):
            raise NotImplementedError(f"{type(inner).__name__} shows no raw storage")
        return await inner.raw_storage()

    async def close(self) -> None:
        """Close the inner store."""
        await self.inner.close()


__all__ = ["ForwardingStore"]
