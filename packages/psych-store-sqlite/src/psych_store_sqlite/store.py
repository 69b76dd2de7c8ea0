"""``SqliteStore``: the durable Store that needs nothing but a file.

Several Worker processes on one machine may share the file. SQLite's WAL mode lets
readers run beside the one writer; each write transaction starts with ``BEGIN
IMMEDIATE``, so writers queue on the file's lock (for up to ``busy_timeout_ms``) rather
than failing, and a check made at the start of a transaction still holds when it
commits. A claim is a single ``UPDATE ... RETURNING`` inside such a transaction, so
exactly one process wins each Run.

Wake-ups reach only this instance's own waiters (``cross_process_notifier`` is False):
a Worker in another process learns about new work when it next polls.
"""

from collections.abc import Collection
from collections.abc import Sequence
from datetime import datetime

from psych_runtime import RunId
from psych_runtime import Version
from psych_runtime import VersionHash
from psych_runtime.adapters.store import WORK
from psych_runtime.adapters.store import Admission
from psych_runtime.adapters.store import Fence
from psych_runtime.adapters.store import LocalNotifier
from psych_runtime.adapters.store import RunHeader
from psych_runtime.adapters.store import RunState
from psych_runtime.adapters.store import check_admission
from psych_runtime.adapters.store import check_append_batch
from psych_runtime.adapters.store import check_listing_limit
from psych_runtime.adapters.store import check_read_window
from psych_runtime.adapters.store import no_run_can_match
from psych_runtime.adapters.store import signal_run
from psych_runtime.records import Record
from psych_runtime.records import RunAdmitted
from psych_runtime.records import WorkerId
from psych_store_sqlite import _queries as ops
from psych_store_sqlite._database import SqliteDatabase
from psych_store_sqlite.settings import SqliteSettings


class SqliteStore(SqliteDatabase):
    """A Store kept in one SQLite database file.

    Construction does no IO; the file is opened on first use (or by ``connect``).
    Create the tables once with ``await store.migrate()``.

    Args:
        url: ``sqlite:////absolute/path.db`` or ``sqlite:///relative/path.db``
            (relative to the working directory now), optionally with the options
            below in the query string; or ``SqliteSettings`` already resolved.
        synchronous: ``"NORMAL"`` (default), ``"FULL"`` or ``"EXTRA"``. NORMAL in
            WAL mode loses nothing when a process crashes but may lose the latest
            commits if the machine loses power; FULL fsyncs every commit.
        busy_timeout_ms: how long a write waits for another connection's write lock
            (default 5000).
        readers: reader threads, each with its own connection (default 2); 0 runs
            reads on the writer thread.

    Raises:
        InvalidStoreUrl: the URL is malformed.
        TypeError: an unknown option, or a value of the wrong type.
        ValueError: an option value is out of range.
    """

    def __init__(self, url: str | SqliteSettings, /, **options: object) -> None:
        super().__init__(url, **options)
        # Signalled by this instance's own commits only: other processes are not heard.
        self._notifier = LocalNotifier(complete=False)

    @property
    def notifier(self) -> LocalNotifier:
        """Signalled after this instance's own commits; other processes are not heard."""
        return self._notifier

    # Lifecycle (``connect``, ``migrate``, ``schema_version``, ``close``) and the
    # ``path`` and ``settings`` properties come from ``SqliteDatabase``.

    # --- the log -----------------------------------------------------------------------

    async def append(
        self,
        run_id: RunId,
        expected_seq: int,
        records: Sequence[Record],
        *,
        fence: Fence | None = None,
    ) -> None:
        """See ``Store.append``: one transaction, one hop to the writer thread."""
        check_append_batch(run_id, expected_seq, records)
        batch = ops.encode(records)
        await self._lanes.write(lambda conn: ops.append(conn, run_id, expected_seq, batch, fence))
        self._notifier.signal(run_id)

    async def read(
        self,
        run_id: RunId,
        *,
        after: int = 0,
        limit: int | None = None,
        tenant: str | None = None,
    ) -> list[Record]:
        """See ``Store.read``; another tenant's Run reads as empty."""
        check_read_window(after, limit)
        if no_run_can_match(run_id, tenant):
            return []
        return await self._lanes.read(lambda conn: ops.read(conn, run_id, after, limit, tenant))

    async def head(self, run_id: RunId) -> int:
        """See ``Store.head``."""
        if no_run_can_match(run_id):
            return 0
        return await self._lanes.read(lambda conn: ops.head(conn, run_id))

    # --- versions ----------------------------------------------------------------------

    async def put_version(self, version: Version, *, tenant: str | None) -> Version:
        """See ``Store.put_version``; the first stored copy and each first grant win."""
        return await self._lanes.write(lambda conn: ops.put_version(conn, version, tenant))

    async def get_version(
        self, version_hash: VersionHash, *, tenant: str | None = None
    ) -> Version | None:
        """See ``Store.get_version``; a hash or tenant no store can hold names nothing."""
        if no_run_can_match(version_hash, tenant):
            return None
        return await self._lanes.read(lambda conn: ops.get_version(conn, version_hash, tenant))

    # --- admission and headers ---------------------------------------------------------

    async def create_run(self, header: RunHeader, admitted: RunAdmitted) -> Admission:
        """See ``Store.create_run``: header and ``run_admitted`` in one transaction."""
        check_admission(header, admitted)
        (encoded,) = ops.encode([admitted])
        admission = await self._lanes.write(lambda conn: ops.create_run(conn, header, encoded))
        if admission.created:
            signal_run(self._notifier, header.run_id, runnable=header.state is RunState.RUNNABLE)
        return admission

    async def get_run(self, run_id: RunId, *, tenant: str | None = None) -> RunHeader | None:
        """See ``Store.get_run``."""
        if no_run_can_match(run_id, tenant):
            return None
        return await self._lanes.read(lambda conn: ops.get_run(conn, run_id, tenant))

    # --- leases ------------------------------------------------------------------------

    async def claim(
        self, worker_id: WorkerId, now: datetime, lease_seconds: float
    ) -> RunHeader | None:
        """See ``Store.claim``: one ``UPDATE ... RETURNING`` under the write lock."""
        return await self._lanes.write(lambda conn: ops.claim(conn, worker_id, now, lease_seconds))

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
        return await self._lanes.write(
            lambda conn: ops.renew(conn, run_id, worker_id, now, lease_seconds, attempt_count)
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
        """See ``Store.release``; signals the Run, and ``WORK`` when it is runnable again."""
        released = await self._lanes.write(
            lambda conn: ops.release(
                conn, run_id, worker_id, state, runnable_at, deadline_at, attempt_count
            )
        )
        if released:
            signal_run(self._notifier, run_id, runnable=state is RunState.RUNNABLE)

    async def settle_inline(self, run_id: RunId) -> bool:
        """See ``Store.settle_inline``."""
        settled = await self._lanes.write(lambda conn: ops.settle_inline(conn, run_id))
        if settled:
            self._notifier.signal(run_id)
        return settled

    async def set_runnable_at(self, run_id: RunId, runnable_at: datetime | None) -> None:
        """See ``Store.set_runnable_at``; a settled Run is left exactly as it is."""
        state = await self._lanes.write(lambda conn: ops.set_runnable_at(conn, run_id, runnable_at))
        if state is RunState.RUNNABLE and runnable_at is None:
            self._notifier.signal(WORK)

    # --- sweeps ------------------------------------------------------------------------

    async def expired_leases(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        """See ``Store.expired_leases``; earliest expiry first."""
        return await self._lanes.read(lambda conn: ops.expired_leases(conn, now, limit))

    async def overdue_deadlines(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        """See ``Store.overdue_deadlines``; earliest deadline first."""
        return await self._lanes.read(lambda conn: ops.overdue_deadlines(conn, now, limit))

    async def recent_runs(
        self,
        *,
        tenant: str | None = None,
        states: Collection[RunState] | None = None,
        limit: int = 20,
    ) -> list[RunHeader]:
        """See ``RunListing.recent_runs``; newest admission first."""
        check_listing_limit(limit)
        return await self._lanes.read(lambda conn: ops.recent_runs(conn, tenant, states, limit))

    async def settled_runs(
        self,
        *,
        tenant: str,
        created_before: datetime,
        after: tuple[datetime, RunId] | None = None,
        limit: int = 100,
    ) -> list[RunHeader]:
        """See ``RunDeletion.settled_runs``; one indexed range read."""
        check_listing_limit(limit)
        if no_run_can_match(RunId(""), tenant):
            return []
        return await self._lanes.read(
            lambda conn: ops.settled_runs(conn, tenant, created_before, after, limit)
        )

    async def delete_runs(self, run_ids: Collection[RunId], *, tenant: str) -> list[RunId]:
        """See ``RunDeletion.delete_runs``: one transaction, then the log is cut.

        The rows are overwritten with zeros in the file (``secure_delete``) and the
        write-ahead log is truncated afterwards (``scrub``), so the Runs' bytes are
        gone from the files, not only from the answers.
        """
        wanted = [
            run_id for run_id in dict.fromkeys(run_ids) if not no_run_can_match(run_id, tenant)
        ]
        if not wanted:
            return []
        deleted = await self._lanes.write(lambda conn: ops.delete_runs(conn, wanted, tenant))
        if deleted:
            await self.scrub()
        return deleted


__all__ = ["SqliteStore"]
