"""``PostgresStore``: the Store port on PostgreSQL through asyncpg.

Round trips per call, once the pool and its prepared statements are warm:

* ``append``: one (a plpgsql function locks the Run row, checks fence and head,
  inserts the batch from arrays and queues the NOTIFY).
* ``create_run``: one (a function inserts header and ``run_admitted`` together, or
  returns the existing header on a duplicate key or run id).
* ``claim``: one (``UPDATE ... WHERE id = (SELECT ... FOR NO KEY UPDATE SKIP LOCKED)
  RETURNING``). The first claim for a worker id also opens its liveness-lock
  connection; see ``psych_store_postgres._liveness``.
* every other method: one.

Connections: a pool (``min_size``/``max_size``), plus one LISTEN connection (opened by
the first claim or read, by touching ``notifier``, or by ``start_listening()``) and one
liveness-lock connection per worker id this instance claims for. The driver is
imported on first use, never at import time.
"""

import hashlib
import logging
import time
from collections.abc import Collection
from collections.abc import Sequence
from datetime import datetime
from datetime import timedelta
from typing import TYPE_CHECKING

from psych_runtime import RunId
from psych_runtime import RunNotFound
from psych_runtime import Version
from psych_runtime import VersionHash
from psych_runtime.adapters.store import WORK
from psych_runtime.adapters.store import Admission
from psych_runtime.adapters.store import Fence
from psych_runtime.adapters.store import LeaseLost
from psych_runtime.adapters.store import LocalNotifier
from psych_runtime.adapters.store import RunHeader
from psych_runtime.adapters.store import RunState
from psych_runtime.adapters.store import SeqConflict
from psych_runtime.adapters.store import check_admission
from psych_runtime.adapters.store import check_append_batch
from psych_runtime.adapters.store import check_listing_limit
from psych_runtime.adapters.store import check_read_window
from psych_runtime.adapters.store import no_run_can_match
from psych_runtime.adapters.store import signal_run
from psych_runtime.records import Record
from psych_runtime.records import RunAdmitted
from psych_runtime.records import WorkerId
from psych_store_postgres._database import PostgresDatabase
from psych_store_postgres._listener import NotificationListener
from psych_store_postgres._liveness import LivenessLocks
from psych_store_postgres._peers import PeerWatch
from psych_store_postgres._queries import Queries
from psych_store_postgres._rows import aware
from psych_store_postgres._rows import decode_batch
from psych_store_postgres._rows import encode_batch
from psych_store_postgres._rows import header_from_row
from psych_store_postgres._rows import maybe_aware
from psych_store_postgres._rows import run_id_json
from psych_store_postgres._rows import scope_json
from psych_store_postgres.settings import PostgresSettings

if TYPE_CHECKING:
    import asyncpg

    from psych_store_postgres._connection import GuardedPool

_APPENDED, _NO_RUN, _FENCE_REFUSED, _SEQ_TAKEN = 0, 1, 2, 3
"""Status codes returned by the ``psych_append`` function."""

_PARK_NO_RUN, _PARK_WOKE = 1, 2
"""Status codes of ``psych_set_runnable_at`` (0: changed, or settled and left alone)."""


def notify_channel(schema: str) -> str:
    """The NOTIFY channel of the deployment living in ``schema``.

    Derived from the schema so two deployments sharing a database never wake each
    other's Workers. Channel names are limited to 63 bytes, so a long schema name is
    replaced by a digest of it.
    """
    channel = f"psych_{schema}"
    if len(channel) <= 63:
        return channel
    return "psych_" + hashlib.sha256(schema.encode()).hexdigest()[:32]


_SHARED = ""
"""The grantee of a Version shared with every tenant; no tenant is the empty string."""


def _grantee(tenant: str | None) -> str:
    if tenant == _SHARED:
        raise ValueError("a tenant name is never empty; pass None for a shared Version")
    return _SHARED if tenant is None else tenant


class PostgresStore(PostgresDatabase):
    """A durable Store on PostgreSQL.

    Constructing one does no IO. The pool opens on first use, which also checks that
    the schema was migrated by a release this code can read.

    Args:
        url: ``postgresql://user:password@host:port/database`` (``postgres://`` too),
            or ``PostgresSettings`` already resolved. Query parameters ``schema``,
            ``min_size``, ``max_size``, ``listen``, ``liveness_locks`` and ``watch_peers``
            configure this
            store; any other parameter (``sslmode``, say) is handed to asyncpg. The
            keyword options below override them.
        schema: the schema holding every table of this deployment (default
            ``psych``); overrides ``?schema=``. Two deployments can share a database
            by using two schemas.
        min_size: connections the pool keeps open (default 2).
        max_size: most connections the pool opens (default 10).
        listen: keep a LISTEN connection so commits made by other processes wake this
            process's waiters within milliseconds (default True).
        liveness_locks: hold an advisory lock per claiming worker id, so a Run whose
            Worker process died is claimable at once instead of after its lease
            (default True).
        watch_peers: how many busy peer processes an idle instance watches, one
            connection each, to wake its Workers the moment a peer dies rather than
            at their next poll (default 2; 0 turns it off; needs ``liveness_locks``).
        connect_timeout: seconds to wait for a new connection (default 10).

    Raises:
        InvalidStoreUrl: the URL or an option is malformed.
        TypeError: an unknown option, or a value of the wrong type.
    """

    def __init__(self, url: str | PostgresSettings, /, **options: object) -> None:
        super().__init__(url, **options)
        self._queries = Queries.for_schema(self._settings.schema)
        # Commits are always announced, even by an instance that does not listen itself:
        # a dispatch-only process must still wake other processes' idle Workers.
        self._channel = notify_channel(self._settings.schema)
        # With LISTEN on, every writer's commits reach this notifier (a moment late at
        # worst), so readers may trust "nothing changed"; without it they must read.
        self._notifier = LocalNotifier(complete=self._settings.listen)
        self._own_pids: set[int] = set()
        self._listener = NotificationListener(
            self._connect, self._channel, self._notifier, self._own_pids
        )
        self._liveness = LivenessLocks(self._connect)
        watching = self._settings.watch_peers if self._settings.liveness_locks else 0
        self._peers = PeerWatch(self._connect, self._notifier, self._channel, watching)
        self._peers_checked_at = 0.0

    # --- configuration ------------------------------------------------------------------

    @property
    def channel(self) -> str:
        """The NOTIFY channel this deployment's commits are announced on."""
        return self._channel

    @property
    def notifier(self) -> LocalNotifier:
        """Signalled after this store's commits and, via LISTEN, other processes' commits.

        Touching it starts the LISTEN connection in the background (when a loop is
        running and ``listen`` is on); the first ``claim`` or ``read`` waits for it.
        """
        if self._settings.listen:
            self._listener.start_soon()
        return self._notifier

    @property
    def listening(self) -> bool:
        """Whether the LISTEN connection is open right now."""
        return self._listener.listening

    async def start_listening(self) -> bool:
        """Open the LISTEN connection now rather than on first claim or read.

        Returns:
            Whether the store is listening (False when ``listen`` is off or the
            connection could not be made; waiters then fall back to their timeouts).
        """
        if not self._settings.listen:
            return False
        await self._ready()
        return await self._listener.ensure()

    # --- connections -------------------------------------------------------------------
    # The pool, the schema check, ``migrate`` and ``schema_version`` come from
    # ``PostgresDatabase``; what follows is what only the Run store needs.

    async def _init_connection(self, conn: "asyncpg.Connection") -> None:
        """Remember each pool connection's pid, so its own NOTIFYs are not echoed back."""
        pid = conn.get_server_pid()
        self._own_pids.add(pid)

        def forget(_: object) -> None:
            self._own_pids.discard(pid)

        conn.add_termination_listener(forget)

    async def _warm_listener(self) -> None:
        """Make sure a waiter that starts after this call hears later commits."""
        if self._settings.listen and not self._listener.listening:
            await self._listener.ensure()

    # --- the log -----------------------------------------------------------------------

    async def append(
        self,
        run_id: RunId,
        expected_seq: int,
        records: Sequence[Record],
        *,
        fence: Fence | None = None,
    ) -> None:
        """See ``Store.append``: one round trip, all or nothing."""
        check_append_batch(run_id, expected_seq, records)
        pool = await self._ready()
        body = encode_batch(records, run_id_json(run_id))
        status = await self._call(
            pool.fetchval(
                self._queries.append,
                run_id,
                expected_seq,
                expected_seq + len(records) - 1,
                body,
                None if fence is None else fence.worker_id,
                None if fence is None else fence.attempt_count,
                self._channel,
            )
        )
        if status == _APPENDED:
            self._notifier.signal(run_id)
        elif status == _NO_RUN:
            raise RunNotFound(run_id)
        elif status == _FENCE_REFUSED:
            assert fence is not None
            raise LeaseLost(run_id, fence.worker_id, fence.attempt_count)
        else:
            raise SeqConflict(run_id, expected_seq)

    async def read(
        self,
        run_id: RunId,
        *,
        after: int = 0,
        limit: int | None = None,
        tenant: str | None = None,
    ) -> list[Record]:
        """See ``Store.read``; also opens the LISTEN connection on first use."""
        check_read_window(after, limit)
        if no_run_can_match(run_id, tenant):
            return []
        pool = await self._ready()
        await self._warm_listener()
        rows = await self._call(pool.fetch(self._queries.read, run_id, tenant, after, limit))
        quoted_id = run_id_json(run_id)
        out = [
            record
            for row in rows
            for record in decode_batch(row[0], row[1], quoted_id)
            if record.seq > after
        ]
        return out if limit is None else out[:limit]

    async def head(self, run_id: RunId) -> int:
        """See ``Store.head``: the last entry of the log's primary key, no scan."""
        if no_run_can_match(run_id):
            return 0
        pool = await self._ready()
        value = await self._call(pool.fetchval(self._queries.head, run_id))
        return 0 if value is None else int(value)

    # --- versions ----------------------------------------------------------------------

    async def put_version(self, version: Version, *, tenant: str | None) -> Version:
        """See ``Store.put_version``; stored as ``Version.export_json()``, first copy wins.

        The document and the grant are two idempotent inserts; a crash between them
        leaves a Version nobody is granted yet, which the next publish completes.
        """
        grantee = _grantee(tenant)
        pool = await self._ready()
        published_at = aware(version.published_at)
        await self._call(
            pool.execute(
                self._queries.put_version, version.hash, published_at, version.export_json()
            )
        )
        granted = await self._call(
            pool.fetchval(self._queries.put_grant, version.hash, grantee, published_at)
        )
        if granted is None:
            # Another publisher's grant committed after this statement's snapshot.
            granted = await self._call(
                pool.fetchval(self._queries.get_grant, version.hash, grantee)
            )
        return version.model_copy(update={"published_at": granted or published_at})

    async def get_version(
        self, version_hash: VersionHash, *, tenant: str | None = None
    ) -> Version | None:
        """See ``Store.get_version``; the Spec is rehashed on the way out."""
        if no_run_can_match(version_hash, tenant):
            return None
        pool = await self._ready()
        if tenant is None:
            row = await self._call(pool.fetchrow(self._queries.get_version, version_hash))
        else:
            row = await self._call(
                pool.fetchrow(self._queries.get_granted_version, version_hash, _grantee(tenant))
            )
        if row is None:
            return None
        version = Version.import_json(row[0])
        return version.model_copy(update={"published_at": row[1]})

    # --- admission and headers ---------------------------------------------------------

    async def create_run(self, header: RunHeader, admitted: RunAdmitted) -> Admission:
        """See ``Store.create_run``: header and ``run_admitted`` in one round trip."""
        check_admission(header, admitted)
        pool = await self._ready()
        row = await self._call(
            pool.fetchrow(
                self._queries.create_run,
                header.run_id,
                header.scope.tenant,
                scope_json(header.scope),
                header.version_hash,
                header.state.value,
                aware(header.created_at),
                aware(header.deadline_at),
                header.lease_holder,
                maybe_aware(header.lease_expires_at),
                header.idempotency_key,
                header.attempt_count,
                maybe_aware(header.runnable_at),
                header.parent_run_id,
                header.delegation_depth,
                header.continues_run_id,
                encode_batch([admitted], run_id_json(header.run_id)),
                self._channel,
                WORK,
            )
        )
        if row is not None:
            return Admission(header_from_row(row), created=False)
        signal_run(self._notifier, header.run_id, runnable=header.state is RunState.RUNNABLE)
        return Admission(header, created=True)

    async def get_run(self, run_id: RunId, *, tenant: str | None = None) -> RunHeader | None:
        """See ``Store.get_run``."""
        if no_run_can_match(run_id, tenant):
            return None
        pool = await self._ready()
        row = await self._call(pool.fetchrow(self._queries.get_run, run_id, tenant))
        return None if row is None else header_from_row(row)

    # --- leases ------------------------------------------------------------------------

    async def claim(
        self, worker_id: WorkerId, now: datetime, lease_seconds: float
    ) -> RunHeader | None:
        """See ``Store.claim``: one conditional UPDATE, exactly one winner.

        The first claim for a worker id opens its liveness-lock connection (and the
        store's LISTEN connection), so an idle Worker is listening before it first
        waits.
        """
        pool = await self._ready()
        await self._warm_listener()
        key = await self._liveness.key_for(worker_id) if self._settings.liveness_locks else None
        moment = aware(now)
        row = await self._call(
            pool.fetchrow(
                self._queries.claim,
                worker_id,
                moment,
                moment + timedelta(seconds=lease_seconds),
                key,
            )
        )
        if row is not None:
            return header_from_row(row)
        if self._settings.watch_peers and key is not None:
            await self._watch_peers(pool)
        return None

    async def _watch_peers(self, pool: "GuardedPool") -> None:
        """After an empty claim, make sure this idle instance watches its busy peers.

        At most once per ``_PEER_REFRESH_SECONDS``; a failure only costs the early
        wake-up, so it is logged, not raised.
        """
        now = time.monotonic()
        if now - self._peers_checked_at < _PEER_REFRESH_SECONDS:
            return
        self._peers_checked_at = now
        try:
            rows = await pool.fetch(self._queries.running_holders)
        except Exception as exc:
            _log.debug("psych: could not list the peers to watch: %s", exc)
            return
        self._peers.update((row[0] for row in rows), self._liveness.held_keys())

    @property
    def watched_peers(self) -> frozenset[int]:
        """The liveness keys of the peers this instance is watching, for diagnostics."""
        return self._peers.watched

    async def renew(
        self,
        run_id: RunId,
        worker_id: WorkerId,
        now: datetime,
        lease_seconds: float,
        *,
        attempt_count: int | None = None,
    ) -> bool:
        """See ``Store.renew``.

        Also re-points the Run at this instance's liveness lock for the worker, taking
        a new lock first if the old connection was lost, so a live Worker's Run stops
        looking abandoned at its next heartbeat.
        """
        pool = await self._ready()
        key = None
        if self._settings.liveness_locks and self._liveness.knows(worker_id):
            # Cheap when the lock connection is up; reopens it when it was lost.
            key = await self._liveness.key_for(worker_id)
        renewed = await self._call(
            pool.fetchval(
                self._queries.renew,
                run_id,
                worker_id,
                aware(now) + timedelta(seconds=lease_seconds),
                key,
                attempt_count,
            )
        )
        return bool(renewed)

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
        """See ``Store.release``; signals the run key, and ``WORK`` when runnable again."""
        pool = await self._ready()
        released = await self._call(
            pool.fetchval(
                self._queries.release,
                run_id,
                worker_id,
                RunState(state).value,
                maybe_aware(runnable_at),
                maybe_aware(deadline_at),
                self._channel,
                WORK,
                attempt_count,
            )
        )
        if released:
            signal_run(self._notifier, run_id, runnable=state is RunState.RUNNABLE)

    async def settle_inline(self, run_id: RunId) -> bool:
        """See ``Store.settle_inline``."""
        pool = await self._ready()
        settled = bool(
            await self._call(pool.fetchval(self._queries.settle_inline, run_id, self._channel))
        )
        if settled:
            self._notifier.signal(run_id)
        return settled

    async def set_runnable_at(self, run_id: RunId, runnable_at: datetime | None) -> None:
        """See ``Store.set_runnable_at``; a settled Run is left exactly as it is."""
        pool = await self._ready()
        status = await self._call(
            pool.fetchval(
                self._queries.set_runnable_at,
                run_id,
                maybe_aware(runnable_at),
                self._channel,
                WORK,
            )
        )
        if status == _PARK_NO_RUN:
            raise RunNotFound(run_id)
        if status == _PARK_WOKE:
            self._notifier.signal(WORK)

    async def release_worker(self, worker_id: WorkerId) -> None:
        """Close the liveness-lock connection held for ``worker_id``.

        For long-lived processes that start and stop Workers under fresh ids while
        keeping one store open. Runs the worker still holds become claimable by others
        at once, so call it only once the Worker has stopped.
        """
        await self._liveness.release(worker_id)

    # --- sweeps ------------------------------------------------------------------------

    async def expired_leases(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        """See ``Store.expired_leases``.

        Also lists running Runs whose holder's liveness lock is gone (the holding
        process died), whatever their lease says; oldest expiry first.
        """
        pool = await self._ready()
        rows = await self._call(pool.fetch(self._queries.expired_leases, aware(now), limit))
        return [header_from_row(row) for row in rows]

    async def overdue_deadlines(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        """See ``Store.overdue_deadlines``; earliest deadline first."""
        pool = await self._ready()
        rows = await self._call(pool.fetch(self._queries.overdue_deadlines, aware(now), limit))
        return [header_from_row(row) for row in rows]

    async def recent_runs(
        self,
        *,
        tenant: str | None = None,
        states: Collection[RunState] | None = None,
        limit: int = 20,
    ) -> list[RunHeader]:
        """See ``RunListing.recent_runs``; newest admission first."""
        check_listing_limit(limit)
        chosen = sorted({state.value for state in states or ()})
        pool = await self._ready()
        rows = await self._call(pool.fetch(self._queries.recent_runs, tenant, chosen, limit))
        return [header_from_row(row) for row in rows]

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
        if no_run_can_match("", tenant):
            return []
        moment, last = (None, None) if after is None else after
        pool = await self._ready()
        rows = await self._call(
            pool.fetch(self._queries.settled_runs, tenant, created_before, moment, last, limit)
        )
        return [header_from_row(row) for row in rows]

    async def delete_runs(self, run_ids: Collection[RunId], *, tenant: str) -> list[RunId]:
        """See ``RunDeletion.delete_runs``: one statement, then a vacuum of both tables.

        The vacuum removes the deleted row versions from the tables and their indexes
        (a transaction elsewhere that began before the delete keeps them until it
        ends). Their bytes may stay in free space inside a page until PostgreSQL
        writes over it; only a ``VACUUM (FULL)`` of the tables, which locks them while
        it rewrites them, removes those at once. The write-ahead log and backups keep
        the bytes for as long as the server keeps them.
        """
        wanted = [r for r in dict.fromkeys(run_ids) if not no_run_can_match(r, tenant)]
        if not wanted:
            return []
        pool = await self._ready()
        rows = await self._call(pool.fetch(self._queries.delete_runs, wanted, tenant))
        deleted = [RunId(row["run_id"]) for row in rows]
        if deleted:
            await self._vacuum("psych_runs", "psych_records")
        return deleted

    # --- lifecycle ---------------------------------------------------------------------

    async def close(self) -> None:
        """Close the pool, the LISTEN connection and every liveness-lock connection.

        Closing the lock connections releases their locks: Runs this instance still
        holds become claimable by other processes straight away.
        """
        await super().close()

    async def _close_dedicated(self) -> None:
        """Close the LISTEN connection and the liveness-lock connections."""
        await self._peers.close()
        await self._listener.close()
        await self._liveness.close()


_log = logging.getLogger(__name__)

_PEER_REFRESH_SECONDS = 0.1
"""The least time between two looks at which peers to watch (each costs one query)."""

__all__ = ["PostgresStore", "notify_channel"]
