"""The MySQL / MariaDB Store.

Round trips per operation (one round trip = one query packet and its replies):

* ``append``: 1. ``START TRANSACTION``, the locking read of the header row, the
  guarded multi-row INSERT, the guarded head update and ``COMMIT`` travel together;
  a refused batch inserts and updates nothing, and the locked read says why. A batch
  larger than one packet is split over several round trips inside one transaction.
* ``create_run``: 1 (header INSERT, ``run_admitted`` INSERT, COMMIT); a duplicate
  costs a second one that rolls back and fetches the existing header.
* ``claim``: 2 (lock a candidate with ``FOR UPDATE SKIP LOCKED``; then UPDATE and
  COMMIT, or just COMMIT when there was nothing to claim).
* everything else: 1.

Connections run in autocommit mode at READ COMMITTED; the multi-statement
transactions above open with ``START TRANSACTION``, which suspends autocommit until
their ``COMMIT``.
"""

from collections.abc import Collection
from collections.abc import Sequence
from datetime import datetime
from datetime import timedelta

import psych_runtime
from psych_runtime.adapters.store import WORK
from psych_runtime.adapters.store import signal_run
from psych_runtime.adapters.store import unencodable
from psych_runtime.records import record_from_json
from psych_runtime.records import record_to_json
from psych_store_mysql import errors
from psych_store_mysql._batches import Batch
from psych_store_mysql._batches import Result
from psych_store_mysql._batches import Statement
from psych_store_mysql._batches import pack
from psych_store_mysql._database import MySQLDatabase
from psych_store_mysql._queries import BEGIN
from psych_store_mysql._queries import COMMIT
from psych_store_mysql._queries import ROLLBACK
from psych_store_mysql._queries import Statements
from psych_store_mysql._rows import checked_id
from psych_store_mysql._rows import header_from_row
from psych_store_mysql._rows import header_values
from psych_store_mysql._rows import instant_or_none
from psych_store_mysql._rows import integer
from psych_store_mysql._rows import text
from psych_store_mysql._rows import to_db_time
from psych_store_mysql._rows import to_db_time_or_none
from psych_store_mysql.settings import MySQLSettings

_ADMISSION_ATTEMPTS = 5
"""How often create_run retries after a deadlock between racing duplicate admissions."""


_SHARED = ""
"""The grantee of a Version shared with every tenant; no tenant is the empty string."""


def _grantee(tenant: str | None) -> str:
    if tenant == _SHARED:
        raise ValueError("a tenant name is never empty; pass None for a shared Version")
    return _SHARED if tenant is None else tenant


class MySQLStore(MySQLDatabase):
    """A durable Store on MySQL 8 or MariaDB 10.6+, through an aiomysql pool.

    Construct it with a URL (``mysql://user:pw@host:3306/db?table_prefix=app_``) or
    with ready-made settings; nothing connects until the first call. Call
    ``await store.migrate()`` once per deployment before using it, and
    ``await store.close()`` when done.

    Wake-ups: ``notifier`` is signalled after this instance's own commits only. Workers
    in other processes find new work by polling ``claim``; nothing here crosses
    processes.
    """

    def __init__(self, url: str | MySQLSettings, /, **options: object) -> None:
        """Parse the URL and options; raises InvalidStoreUrl for a malformed one."""
        super().__init__(url, **options)
        self._sql = Statements(self._tables)
        # Signalled by this instance's own commits only: other processes are not heard.
        self._notifier = psych_runtime.adapters.LocalNotifier(complete=False)

    @property
    def notifier(self) -> psych_runtime.adapters.LocalNotifier:
        """Signalled after this instance's commits; other processes are not told."""
        return self._notifier

    # --- the log -----------------------------------------------------------------------

    async def append(
        self,
        run_id: psych_runtime.RunId,
        expected_seq: int,
        records: Sequence[psych_runtime.records.Record],
        *,
        fence: psych_runtime.adapters.Fence | None = None,
    ) -> None:
        """See ``Store.append``: fence, then head, then the rows, all in one transaction."""
        psych_runtime.adapters.check_append_batch(run_id, expected_seq, records)
        checked_id(run_id, "run id")
        rows: list[tuple[int, str, str]] = [
            (record.seq, record.type, record_to_json(record).decode()) for record in records
        ]
        guard = None if fence is None else (fence.worker_id, fence.attempt_count)
        head = expected_seq - 1
        try:
            async with self._lend("appending") as batch:
                texts = await batch.render(
                    [
                        BEGIN,
                        self._sql.lock_run(run_id),
                        *self._insert_chunks(run_id, head, rows, guard, batch.budget),
                        self._sql.advance_head(run_id, head, head + len(rows), guard),
                        COMMIT,
                    ]
                )
                refusal = await self._send_append(batch, texts, run_id, expected_seq, fence)
        except psych_runtime.StoreError as exc:
            # The (run_id, seq) primary key is the last line of defence; should it ever
            # fire, the transaction was rolled back and the batch is a plain conflict.
            if errors.error_code(exc.__cause__ or exc) == errors.DUPLICATE_KEY:
                raise psych_runtime.adapters.SeqConflict(run_id, expected_seq) from exc
            raise
        if refusal is not None:
            raise refusal
        self._notifier.signal(run_id)

    def _insert_chunks(
        self,
        run_id: str,
        head: int,
        rows: list[tuple[int, str, str]],
        guard: tuple[str, int] | None,
        budget: int,
    ) -> list[tuple[str, Sequence[object]]]:
        """One guarded INSERT per slice of rows that fits in a packet."""
        chunks: list[list[tuple[int, str, str]]] = [[]]
        used = 0
        allowance = budget // 2  # leave room for the guard, the header read and framing
        for row in rows:
            size = len(row[2].encode()) * 2 + 64  # escaping can at worst double the text
            if chunks[-1] and used + size > allowance:
                chunks.append([])
                used = 0
            chunks[-1].append(row)
            used += size
        return [self._sql.insert_records(run_id, head, chunk, guard) for chunk in chunks]

    async def _send_append(
        self,
        batch: Batch,
        texts: list[str],
        run_id: psych_runtime.RunId,
        expected_seq: int,
        fence: psych_runtime.adapters.Fence | None,
    ) -> Exception | None:
        """Send the rendered transaction; return why it was refused, or None.

        Usually one round trip, after which a refused batch has inserted nothing (its
        statements are guarded) and committed an empty transaction. A batch spanning
        several packets is checked after the first one and rolled back on refusal
        before anything else is sent.
        """
        packets = pack(texts, batch.budget)
        results = await batch.send_rendered(packets[0])
        refusal = _append_refusal(results[1], run_id, expected_seq, fence)
        if len(packets) == 1:
            return refusal
        if refusal is not None:
            await batch.run(ROLLBACK)
            return refusal
        for packet in packets[1:]:
            await batch.send_rendered(packet)
        return None

    async def read(
        self,
        run_id: psych_runtime.RunId,
        *,
        after: int = 0,
        limit: int | None = None,
        tenant: str | None = None,
    ) -> list[psych_runtime.records.Record]:
        """See ``Store.read``."""
        psych_runtime.adapters.check_read_window(after, limit)
        if limit == 0 or psych_runtime.adapters.no_run_can_match(run_id, tenant):
            return []
        async with self._lend("reading") as batch:
            (result,) = await batch.run(self._sql.read(run_id, after, limit, tenant))
        return [record_from_json(text(row[0])) for row in result.rows]

    async def head(self, run_id: psych_runtime.RunId) -> int:
        """See ``Store.head``: read from the header row, never by scanning the log."""
        if psych_runtime.adapters.no_run_can_match(run_id):
            return 0
        async with self._lend("reading the head") as batch:
            (result,) = await batch.run(self._sql.head(run_id))
        return integer(result.rows[0][0]) if result.rows else 0

    # --- versions ----------------------------------------------------------------------

    async def put_version(
        self, version: psych_runtime.Version, *, tenant: str | None
    ) -> psych_runtime.Version:
        """See ``Store.put_version``; the first stored document and grant win.

        The document, the grant and the read of the grant go in one round trip.
        """
        grantee = _grantee(tenant)
        published_at = to_db_time(version.published_at)
        async with self._lend("storing a version") as batch:
            *_, granted = await batch.run(
                self._sql.put_version(version.hash, version.export_json()),
                self._sql.put_grant(version.hash, grantee, published_at),
                self._sql.get_grant(version.hash, grantee),
            )
        held = instant_or_none(granted.rows[0][0]) if granted.rows else None
        return version.model_copy(update={"published_at": held or version.published_at})

    async def get_version(
        self, version_hash: psych_runtime.VersionHash, *, tenant: str | None = None
    ) -> psych_runtime.Version | None:
        """See ``Store.get_version``; the stored Spec is rehashed as it is read."""
        if unencodable(version_hash) or (tenant is not None and unencodable(tenant)):
            return None
        statement = (
            self._sql.get_version(version_hash)
            if tenant is None
            else self._sql.get_granted_version(version_hash, _grantee(tenant))
        )
        async with self._lend("reading a version") as batch:
            (result,) = await batch.run(statement)
        if not result.rows:
            return None
        document, granted_at = result.rows[0]
        version = psych_runtime.Version.import_json(text(document))
        held = instant_or_none(granted_at)
        return version if held is None else version.model_copy(update={"published_at": held})

    # --- admission and headers ---------------------------------------------------------

    async def create_run(
        self, header: psych_runtime.adapters.RunHeader, admitted: psych_runtime.records.RunAdmitted
    ) -> psych_runtime.adapters.Admission:
        """See ``Store.create_run``: header and ``run_admitted`` in one transaction."""
        psych_runtime.adapters.check_admission(header, admitted)
        insert_run = self._sql.insert_run(header_values(header, head_seq=1))
        insert_admitted = self._sql.insert_record(
            header.run_id, 1, admitted.type, record_to_json(admitted).decode()
        )
        for _ in range(_ADMISSION_ATTEMPTS):
            async with self._lend("admitting a run") as batch:
                try:
                    await batch.run(BEGIN, insert_run, insert_admitted, COMMIT)
                except Exception as exc:
                    code = errors.error_code(exc)
                    if code != errors.DUPLICATE_KEY and not errors.is_retryable(exc):
                        raise
                    existing = await self._existing_admission(batch, header)
                    if existing is not None:
                        return psych_runtime.adapters.Admission(existing, created=False)
                    continue
            signal_run(
                self._notifier,
                header.run_id,
                runnable=header.state is psych_runtime.adapters.RunState.RUNNABLE,
            )
            return psych_runtime.adapters.Admission(header, created=True)
        raise psych_runtime.StoreError(
            f"{self._settings.where}: admitting run {header.run_id!r} kept colliding with "
            f"concurrent admissions after {_ADMISSION_ATTEMPTS} attempts"
        )

    async def _existing_admission(
        self, batch: Batch, header: psych_runtime.adapters.RunHeader
    ) -> psych_runtime.adapters.RunHeader | None:
        """After a refused admission: roll back, then find the Run that was there first.

        A matching idempotency key wins over a matching run id, as in the reference
        store.
        """
        lookups = [ROLLBACK, self._sql.header(header.run_id)]
        if header.idempotency_key is not None:
            lookups.append(self._sql.header_by_key(header.scope.tenant, header.idempotency_key))
        results = await batch.run(*lookups)
        for result in reversed(results[1:]):
            if result.rows:
                return header_from_row(result.rows[0])
        return None

    async def get_run(
        self, run_id: psych_runtime.RunId, *, tenant: str | None = None
    ) -> psych_runtime.adapters.RunHeader | None:
        """See ``Store.get_run``."""
        if psych_runtime.adapters.no_run_can_match(run_id, tenant):
            return None
        async with self._lend("reading a run") as batch:
            (result,) = await batch.run(self._sql.header(run_id, tenant))
        return header_from_row(result.rows[0]) if result.rows else None

    # --- leases ------------------------------------------------------------------------

    async def claim(
        self, worker_id: psych_runtime.records.WorkerId, now: datetime, lease_seconds: float
    ) -> psych_runtime.adapters.RunHeader | None:
        """See ``Store.claim``: lock one candidate, skipping rows others hold, and take it."""
        checked_id(worker_id, "worker id")
        expires = now + timedelta(seconds=lease_seconds)
        async with self._lend("claiming") as batch:
            _, found = await batch.run(BEGIN, self._sql.claim_candidate(to_db_time(now)))
            if not found.rows:
                await batch.run(COMMIT)
                return None
            candidate = header_from_row(found.rows[0])
            await batch.run(
                self._sql.take_lease(candidate.run_id, worker_id, to_db_time(expires)), COMMIT
            )
        return candidate.model_copy(
            update={
                "state": psych_runtime.adapters.RunState.RUNNING,
                "lease_holder": worker_id,
                "lease_expires_at": expires,
                "attempt_count": candidate.attempt_count + 1,
            }
        )

    async def renew(
        self,
        run_id: psych_runtime.RunId,
        worker_id: psych_runtime.records.WorkerId,
        now: datetime,
        lease_seconds: float,
        *,
        attempt_count: int | None = None,
    ) -> bool:
        """See ``Store.renew``."""
        expires = to_db_time(now + timedelta(seconds=lease_seconds))
        statement = self._sql.renew(run_id, worker_id, expires, attempt_count)
        async with self._lend("renewing a lease") as batch:
            (result,) = await batch.run(statement)
        return result.rowcount == 1

    async def release(
        self,
        run_id: psych_runtime.RunId,
        worker_id: psych_runtime.records.WorkerId,
        state: psych_runtime.adapters.RunState,
        *,
        runnable_at: datetime | None = None,
        deadline_at: datetime | None = None,
        attempt_count: int | None = None,
    ) -> None:
        """See ``Store.release``; signals the Run, and ``WORK`` when it is runnable again."""
        statement = self._sql.release(
            run_id,
            worker_id,
            state.value,
            to_db_time_or_none(runnable_at),
            to_db_time_or_none(deadline_at),
            attempt_count,
        )
        async with self._lend("releasing a lease") as batch:
            (result,) = await batch.run(statement)
        if result.rowcount != 1:
            return
        signal_run(
            self._notifier, run_id, runnable=state is psych_runtime.adapters.RunState.RUNNABLE
        )

    async def settle_inline(self, run_id: psych_runtime.RunId) -> bool:
        """See ``Store.settle_inline``."""
        async with self._lend("settling a nested run") as batch:
            (result,) = await batch.run(self._sql.settle_inline(run_id))
        if result.rowcount != 1:
            return False
        self._notifier.signal(run_id)
        return True

    async def set_runnable_at(
        self, run_id: psych_runtime.RunId, runnable_at: datetime | None
    ) -> None:
        """See ``Store.set_runnable_at``; a settled Run is left exactly as it is."""
        update = self._sql.set_runnable_at(run_id, to_db_time_or_none(runnable_at))
        async with self._lend("parking a run") as batch:
            _, after = await batch.run(update, self._sql.state(run_id))
        if not after.rows:
            raise psych_runtime.RunNotFound(run_id)
        if (
            runnable_at is None
            and text(after.rows[0][0]) == psych_runtime.adapters.RunState.RUNNABLE
        ):
            self._notifier.signal(WORK)

    # --- sweeps ------------------------------------------------------------------------

    async def _headers(
        self, doing: str, statement: Statement
    ) -> list[psych_runtime.adapters.RunHeader]:
        """The headers ``statement`` selects, in its order, read for ``doing``."""
        async with self._lend(doing) as batch:
            (result,) = await batch.run(statement)
        return [header_from_row(row) for row in result.rows]

    async def expired_leases(
        self, now: datetime, limit: int = 100
    ) -> list[psych_runtime.adapters.RunHeader]:
        """See ``Store.expired_leases``; an index range scan over running Runs only."""
        return await self._headers(
            "listing expired leases", self._sql.expired_leases(to_db_time(now), limit)
        )

    async def overdue_deadlines(
        self, now: datetime, limit: int = 100
    ) -> list[psych_runtime.adapters.RunHeader]:
        """See ``Store.overdue_deadlines``; an index range scan over unsettled Runs."""
        return await self._headers(
            "listing overdue deadlines", self._sql.overdue_deadlines(to_db_time(now), limit)
        )

    async def recent_runs(
        self,
        *,
        tenant: str | None = None,
        states: Collection[psych_runtime.adapters.RunState] | None = None,
        limit: int = 20,
    ) -> list[psych_runtime.adapters.RunHeader]:
        """See ``RunListing.recent_runs``; newest admission first."""
        psych_runtime.adapters.check_listing_limit(limit)
        chosen = sorted({state.value for state in states or ()})
        return await self._headers(
            "listing recent runs", self._sql.recent_runs(tenant, chosen, limit)
        )

    async def settled_runs(
        self,
        *,
        tenant: str,
        created_before: datetime,
        after: tuple[datetime, psych_runtime.RunId] | None = None,
        limit: int = 100,
    ) -> list[psych_runtime.adapters.RunHeader]:
        """See ``RunDeletion.settled_runs``; a range read over the tenant's Runs."""
        psych_runtime.adapters.check_listing_limit(limit)
        if unencodable(tenant):
            return []
        statement = self._sql.settled_runs(tenant, created_before, after, limit)
        return await self._headers("listing settled runs", statement)

    async def delete_runs(
        self, run_ids: Collection[psych_runtime.RunId], *, tenant: str
    ) -> list[psych_runtime.RunId]:
        """See ``RunDeletion.delete_runs``: one transaction of two round trips.

        InnoDB removes the rows from every read at once; their bytes stay in free
        space inside the table's pages until InnoDB reuses it or the table is rebuilt
        (``OPTIMIZE TABLE``), which this method does not do, as it rewrites the whole
        log table. MariaDB zeroes deleted rows when it purges them with
        ``innodb_immediate_scrub_data_uncompressed`` on.
        """
        wanted = [r for r in dict.fromkeys(run_ids) if not unencodable(r)]
        if not wanted or unencodable(tenant):
            return []
        async with self._lend("deleting runs") as batch:
            _, locked = await batch.run(BEGIN, self._sql.lock_settled(wanted, tenant))
            found = [text(row[0]) for row in locked.rows]
            if not found:
                await batch.run(COMMIT)
                return []
            records, headers = self._sql.delete_runs(found)
            await batch.run(records, headers, COMMIT)
        return [psych_runtime.RunId(run_id) for run_id in found]


def _append_refusal(
    locked: Result,
    run_id: psych_runtime.RunId,
    expected_seq: int,
    fence: psych_runtime.adapters.Fence | None,
) -> Exception | None:
    """Why the locked header row refused the batch, checked fence first; None if it did not."""
    if not locked.rows:
        return psych_runtime.RunNotFound(run_id)
    head, holder, attempt = locked.rows[0]
    if fence is not None and (
        holder is None or text(holder) != fence.worker_id or integer(attempt) != fence.attempt_count
    ):
        return psych_runtime.adapters.LeaseLost(run_id, fence.worker_id, fence.attempt_count)
    if integer(head) != expected_seq - 1:
        return psych_runtime.adapters.SeqConflict(run_id, expected_seq)
    return None


__all__ = ["MySQLStore"]
