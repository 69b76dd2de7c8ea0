"""``DynamoStore``: the Store port on one DynamoDB table.

Where each guarantee comes from (the layout is described in ``_rows``):

* append: one ``TransactWriteItems``. Its first operation updates the Run's header on
  the condition ``head_seq = expected_seq - 1`` (and, when fenced, that the lease
  holder and attempt count still match) and moves ``head_seq`` on; the rest put one
  record each on the condition that its (run, seq) key is free. All or nothing.
* create_run: one transaction putting the header, the idempotency item (when there is
  a key) and the ``run_admitted`` record, each only if absent.
* claim: Queries on the sparse ``claimable`` index for a few candidates in claim
  order, then a conditional ``UpdateItem`` on the first; a lost race moves on to the
  next. Exactly one claimer's condition holds (see ``_claiming``).
* sweeps: Queries on the sparse indexes, then strongly consistent reads of the Runs
  found, re-checked, so an index that lags behind never reports a stale header.

Nothing on a hot path scans the table.
"""

import asyncio
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Sequence
from contextlib import suppress
from datetime import datetime
from datetime import timedelta

from psych_runtime import RunId
from psych_runtime import RunNotFound
from psych_runtime import StoreError
from psych_runtime import StoreUnavailable
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
from psych_runtime.adapters.store import newest_runs
from psych_runtime.adapters.store import no_run_can_match
from psych_runtime.adapters.store import oldest_settled_runs
from psych_runtime.adapters.store import signal_run
from psych_runtime.adapters.store import sweep_expired_leases
from psych_runtime.adapters.store import sweep_overdue_deadlines
from psych_runtime.adapters.store import unencodable
from psych_runtime.records import Record
from psych_runtime.records import RunAdmitted
from psych_runtime.records import WorkerId
from psych_runtime.records import record_from_json
from psych_runtime.records import record_to_json
from psych_store_dynamo import _claiming
from psych_store_dynamo import _rows as it
from psych_store_dynamo._batches import check_sizes
from psych_store_dynamo._database import DynamoDatabase
from psych_store_dynamo._queries import set_entry
from psych_store_dynamo._queries import set_time
from psych_store_dynamo._queries import update_expression
from psych_store_dynamo._table import ConditionFailed
from psych_store_dynamo._table import Table
from psych_store_dynamo._table import TransactionCanceled
from psych_store_dynamo._table import back_off
from psych_store_dynamo.settings import DynamoSettings

_CONDITION_FAILED = "ConditionalCheckFailed"
_TRANSIENT_REASONS = frozenset(
    {"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"}
)
_TRANSACTION_TRIES = 8
"""Tries of a transaction that DynamoDB cancelled only because of a concurrent one."""

_READ_MODIFY_WRITE_TRIES = 16
"""Tries of ``set_runnable_at`` when the Run's state keeps moving under it."""
_CREATED_AT_CACHE = 4096
"""Runs whose (immutable) created_at is remembered, to spare ``release`` a read."""


class DynamoStore(DynamoDatabase):
    """A Store kept in one DynamoDB table.

    Construction does no IO: the client is created on first use, and the first
    operation checks once that the table exists at this release's schema version.
    Create or upgrade the table with ``await store.migrate()`` (idempotent, safe from
    several processes at once), or ``create_table(url)`` during development.

    Records are stored as compact JSON; an item may not exceed 400 KB, so a record
    that large is refused with ``RecordTooLarge`` before anything is written (large
    tool results belong in a BlobStore). An append must fit one transaction (100
    items, 4 MB); a larger batch is refused with ``BatchTooLarge``.

    The notifier wakes waiters in this process after this instance's own commits;
    other processes are not heard and rely on their polling.

    Args:
        url: ``dynamodb://TABLE?region=...&endpoint_url=...``, or ``DynamoSettings``
            already resolved. The options below override the URL's query.
        region: AWS region (overrides the URL's).
        endpoint_url: a local endpoint such as DynamoDB Local or moto.
        connect_timeout: seconds to wait for a connection (default 5).
        read_timeout: seconds to wait for a response (default 10).
        max_attempts: tries per request for transient failures (default 3).
        wait_seconds: how long ``migrate`` waits for the table to become ACTIVE.

    Raises:
        InvalidStoreUrl: the URL is malformed.
        TypeError: an option has the wrong type.
        ValueError: an option value is out of range.
    """

    def __init__(self, url: str | DynamoSettings, /, **options: object) -> None:
        super().__init__(url, **options)
        # Signalled by this instance's own commits only: other processes are not heard.
        self._notifier = LocalNotifier(complete=False)
        self._created_at: dict[RunId, datetime] = {}

    @property
    def notifier(self) -> LocalNotifier:
        """Signalled after this instance's own commits; other processes are not heard."""
        return self._notifier

    # --- lifecycle ---------------------------------------------------------------------

    async def drop_table(self) -> bool:
        """Delete the table and everything in it; False when it did not exist.

        For development and tests only: there is no undo.
        """
        table = await self._open()
        self._verified = False
        return await table.delete()

    # --- the log -----------------------------------------------------------------------

    async def append(
        self,
        run_id: RunId,
        expected_seq: int,
        records: Sequence[Record],
        *,
        fence: Fence | None = None,
    ) -> None:
        """See ``Store.append``: one transaction, checked in the order fence, sequence.

        Raises:
            RecordTooLarge: a record's item would exceed 400 KB (nothing is written).
            BatchTooLarge: the batch exceeds one transaction (nothing is written).
        """
        check_append_batch(run_id, expected_seq, records)
        bodies = [record_to_json(record) for record in records]
        check_sizes(run_id, expected_seq, bodies)
        table = await self._ready()
        last = expected_seq + len(records) - 1
        condition = "#head_seq = :previous"
        values: dict[str, it.Attribute] = {
            ":previous": it.n(expected_seq - 1),
            ":last": it.n(last),
        }
        if fence is not None:
            condition += " AND " + _holder(fence.worker_id, fence.attempt_count, values)
        operations: list[dict[str, object]] = [
            {
                "Update": {
                    "Key": it.run_key(run_id),
                    "UpdateExpression": "SET #head_seq = :last",
                    "ConditionExpression": condition,
                    "ExpressionAttributeValues": values,
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                }
            }
        ]
        operations.extend(
            {
                "Put": {
                    "Item": it.record_item(run_id, expected_seq + offset, body),
                    "ConditionExpression": "attribute_not_exists(#pk)",
                }
            }
            for offset, body in enumerate(bodies)
        )
        for attempt in range(_TRANSACTION_TRIES):
            try:
                await table.transact(operations)
            except TransactionCanceled as exc:
                await self._explain_refused_append(table, run_id, expected_seq, fence, exc)
                await back_off(attempt)
                continue
            self._notifier.signal(run_id)
            return
        raise StoreUnavailable(
            f"DynamoDB kept cancelling the append to run {run_id!r} at seq {expected_seq} "
            "because of concurrent transactions; try again"
        )

    async def _explain_refused_append(
        self,
        table: Table,
        run_id: RunId,
        expected_seq: int,
        fence: Fence | None,
        exc: TransactionCanceled,
    ) -> None:
        """Raise the port's error for a cancelled append, or return to have it retried.

        The header is read again to tell the cases apart: a missing Run, a fence that
        no longer matches (reported first, as the port asks), or a head that moved.
        """
        reasons = exc.reasons
        conflicted = any(code in _TRANSIENT_REASONS for code in reasons)
        known = {_CONDITION_FAILED, "None", *_TRANSIENT_REASONS}
        if reasons and not set(reasons) <= known:
            raise StoreError(
                f"DynamoDB refused the append to run {run_id!r}: {', '.join(reasons)} ({exc})"
            )
        if reasons and _CONDITION_FAILED in reasons[1:] and reasons[0] != _CONDITION_FAILED:
            # The header's check passed, so only a record key was taken.
            raise SeqConflict(run_id, expected_seq)
        # The header as it stood when its condition failed comes back with the
        # cancellation; read it only when it did not (a conflict, or no such Run).
        item = exc.item(0) if reasons[:1] == (_CONDITION_FAILED,) else None
        if item is None:
            item = await table.get(
                it.run_key(run_id), projection=(it.HEAD_SEQ, it.LEASE_HOLDER, it.ATTEMPT_COUNT)
            )
        if item is None:
            raise RunNotFound(run_id)
        if fence is not None and (
            it.optional_text(item, it.LEASE_HOLDER) != fence.worker_id
            or it.number(item, it.ATTEMPT_COUNT) != fence.attempt_count
        ):
            raise LeaseLost(run_id, fence.worker_id, fence.attempt_count)
        if it.number(item, it.HEAD_SEQ) != expected_seq - 1 or not conflicted:
            raise SeqConflict(run_id, expected_seq)

    async def read(
        self,
        run_id: RunId,
        *,
        after: int = 0,
        limit: int | None = None,
        tenant: str | None = None,
    ) -> list[Record]:
        """See ``Store.read``: one consistent Query over the Run's partition."""
        if after < 0:
            raise ValueError("after must not be negative")
        if limit is not None and limit < 0:
            raise ValueError("limit must not be negative")
        if limit == 0 or no_run_can_match(run_id, tenant):
            return []
        table = await self._ready()
        if tenant is None:
            items = await self._records(table, run_id, after, limit)
        else:
            header, items = await asyncio.gather(
                table.get(it.run_key(run_id), projection=(it.PK, it.SCOPE)),
                self._records(table, run_id, after, limit),
            )
            if header is None or it.header_scope(header).tenant != tenant:
                return []
        return [record_from_json(it.text(item, it.RECORD)) for item in items]

    async def _records(
        self, table: Table, run_id: RunId, after: int, limit: int | None
    ) -> list[it.Item]:
        values: dict[str, it.Attribute] = {
            ":pk": it.s(it.run_pk(run_id)),
            ":first": it.n(after + 1),
        }
        if limit is None:
            condition = "#pk = :pk AND #sk >= :first"
        else:
            condition = "#pk = :pk AND #sk BETWEEN :first AND :last"
            values[":last"] = it.n(after + limit)
        found: list[it.Item] = []
        start: it.Item | None = None
        while True:
            page, start = await table.query(condition, values, start=start)
            found.extend(page)
            if start is None:
                return found

    async def head(self, run_id: RunId) -> int:
        """See ``Store.head``: the header's ``head_seq``, no aggregate over the log."""
        if no_run_can_match(run_id):
            return 0
        table = await self._ready()
        item = await table.get(it.run_key(run_id), projection=(it.HEAD_SEQ,))
        return 0 if item is None else it.number(item, it.HEAD_SEQ)

    # --- versions ----------------------------------------------------------------------

    async def put_version(self, version: Version, *, tenant: str | None) -> Version:
        """See ``Store.put_version``: the first stored copy and each first grant win.

        The Version item and the grant item are two conditional puts; a crash between
        them leaves a Version granted to nobody yet, which the next publish completes.
        """
        if tenant == "":
            raise ValueError("a tenant name is never empty; pass None for a shared Version")
        table = await self._ready()
        item = {
            **it.version_key(version.hash),
            it.VERSION_DOCUMENT: it.s(version.export_json()),
            it.VERSION_GRANTED: it.n(1),
        }
        with suppress(ConditionFailed):
            await table.put(item, condition="attribute_not_exists(#pk)")
        key = it.grant_key(version.hash, tenant)
        grant = {**key, it.PUBLISHED_AT: it.time_value(version.published_at)}
        try:
            await table.put(grant, condition="attribute_not_exists(#pk)")
        except ConditionFailed:
            held = await table.get(key)
            if held is not None:
                granted = it.instant(it.number(held, it.PUBLISHED_AT))
                return version.model_copy(update={"published_at": granted})
        return version

    async def get_version(
        self, version_hash: VersionHash, *, tenant: str | None = None
    ) -> Version | None:
        """See ``Store.get_version``; the stored Spec is rehashed on the way out.

        A Version stored before grants existed carries no ``granted`` mark and is
        shared, as it effectively was.
        """
        if unencodable(version_hash) or (tenant is not None and unencodable(tenant)):
            return None
        table = await self._ready()
        if tenant is None:
            item = await table.get(it.version_key(version_hash))
            return None if item is None else Version.import_json(it.text(item, it.VERSION_DOCUMENT))
        keys = {
            "version": it.version_key(version_hash),
            "own": it.grant_key(version_hash, tenant),
            "shared": it.grant_key(version_hash, None),
        }
        found = {it.text(item, it.PK): item for item in await table.batch_get(list(keys.values()))}
        items = {name: found.get(it.text(key, it.PK)) for name, key in keys.items()}
        stored = items["version"]
        if stored is None:
            return None
        version = Version.import_json(it.text(stored, it.VERSION_DOCUMENT))
        grant = items["own"] or items["shared"]
        if grant is not None:
            granted = it.instant(it.number(grant, it.PUBLISHED_AT))
            return version.model_copy(update={"published_at": granted})
        return version if it.VERSION_GRANTED not in stored else None

    # --- admission and headers ---------------------------------------------------------

    async def create_run(self, header: RunHeader, admitted: RunAdmitted) -> Admission:
        """See ``Store.create_run``: header, key and ``run_admitted`` in one transaction."""
        check_admission(header, admitted)
        body = record_to_json(admitted)
        check_sizes(header.run_id, 1, [body])
        table = await self._ready()
        absent = "attribute_not_exists(#pk)"
        old = "ALL_OLD"
        operations: list[dict[str, object]] = [
            {
                "Put": {
                    "Item": it.header_item(header, 1),
                    "ConditionExpression": absent,
                    "ReturnValuesOnConditionCheckFailure": old,
                }
            }
        ]
        if header.idempotency_key is not None:
            key_item = {
                **it.idempotency_key(header.scope.tenant, header.idempotency_key),
                it.KEY_RUN_ID: it.s(header.run_id),
            }
            operations.append(
                {
                    "Put": {
                        "Item": key_item,
                        "ConditionExpression": absent,
                        "ReturnValuesOnConditionCheckFailure": old,
                    }
                }
            )
        operations.append(
            {"Put": {"Item": it.record_item(header.run_id, 1, body), "ConditionExpression": absent}}
        )
        for attempt in range(_TRANSACTION_TRIES):
            try:
                await table.transact(operations)
            except TransactionCanceled as exc:
                unknown = set(exc.reasons) - {_CONDITION_FAILED, "None", *_TRANSIENT_REASONS}
                if unknown:
                    raise StoreError(
                        f"DynamoDB refused to admit run {header.run_id!r}: "
                        f"{', '.join(exc.reasons)} ({exc})"
                    ) from exc
                existing = await self._admitted_before(table, header, exc)
                if existing is not None:
                    self._remember(existing)
                    return Admission(existing, created=False)
                await back_off(attempt)
                continue
            self._remember(header)
            signal_run(self._notifier, header.run_id, runnable=header.state is RunState.RUNNABLE)
            return Admission(header, created=True)
        raise StoreUnavailable(
            f"DynamoDB kept cancelling the admission of run {header.run_id!r} because of "
            "concurrent transactions; try again"
        )

    async def _admitted_before(
        self, table: Table, header: RunHeader, exc: TransactionCanceled
    ) -> RunHeader | None:
        """The Run that already holds this idempotency key or run id, key first.

        The cancellation carries the items whose absence was required, so usually at
        most the key's Run has to be read.
        """
        if header.idempotency_key is not None:
            key = exc.item(1) if exc.reasons[1:2] == (_CONDITION_FAILED,) else None
            if key is None:
                key = await table.get(
                    it.idempotency_key(header.scope.tenant, header.idempotency_key)
                )
            if key is not None:
                holder = await table.get(it.run_key(it.text(key, it.KEY_RUN_ID)))
                if holder is not None:
                    return it.header_of(holder)
        existing = exc.item(0) if exc.reasons[:1] == (_CONDITION_FAILED,) else None
        if existing is None:
            existing = await table.get(it.run_key(header.run_id))
        return None if existing is None else it.header_of(existing)

    async def get_run(self, run_id: RunId, *, tenant: str | None = None) -> RunHeader | None:
        """See ``Store.get_run``."""
        if no_run_can_match(run_id, tenant):
            return None
        table = await self._ready()
        item = await table.get(it.run_key(run_id))
        if item is None:
            return None
        header = it.header_of(item)
        self._remember(header)
        if tenant is not None and header.scope.tenant != tenant:
            return None
        return header

    # --- leases ------------------------------------------------------------------------

    async def claim(
        self, worker_id: WorkerId, now: datetime, lease_seconds: float
    ) -> RunHeader | None:
        """See ``Store.claim``: index Queries for candidates, then one conditional update.

        Candidates are tried in the in-memory store's order (``runnable_at`` or else
        ``created_at``, then ``created_at``, then run id); see ``_claiming``.
        """
        table = await self._ready()
        item = await _claiming.claim(table, worker_id, now, lease_seconds)
        if item is None:
            return None
        header = it.header_of(item)
        self._remember(header)
        return header

    async def renew(
        self,
        run_id: RunId,
        worker_id: WorkerId,
        now: datetime,
        lease_seconds: float,
        *,
        attempt_count: int | None = None,
    ) -> bool:
        """See ``Store.renew``: a conditional update on the holder."""
        table = await self._ready()
        expires = now + timedelta(seconds=lease_seconds)
        values: dict[str, it.Attribute] = {
            ":expires": it.time_value(expires),
            ":claim_k": it.s(_claiming.leased_key(run_id, expires)),
            ":running": it.s(RunState.RUNNING.value),
        }
        try:
            await table.update(
                it.run_key(run_id),
                "SET #lease_expires_at = :expires, #claim_k = :claim_k",
                condition="#state = :running AND " + _holder(worker_id, attempt_count, values),
                values=values,
            )
        except ConditionFailed:
            return False
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
        """See ``Store.release``: a conditional update on the holder.

        Signals the Run's key, and ``WORK`` when the Run comes back as runnable.
        """
        table = await self._ready()
        created_at = self._created_at.get(run_id)
        if created_at is None and state is RunState.RUNNABLE:
            # The index key of a runnable Run starts from its (immutable) created_at.
            item = await table.get(it.run_key(run_id), projection=(it.CREATED_AT,))
            if item is None:
                return
            created_at = it.instant(it.number(item, it.CREATED_AT))
        sets = ["#state = :state"]
        removes = ["#lease_holder", "#lease_expires_at"]
        values: dict[str, it.Attribute] = {":state": it.s(state.value)}
        holder = _holder(worker_id, attempt_count, values)
        set_time("runnable_at", runnable_at, sets, removes, values)
        if deadline_at is not None:
            set_time("deadline_at", deadline_at, sets, removes, values)
        claim = it.claim_entry(state, run_id, created_at, runnable_at, None)
        set_entry(claim, it.CLAIM_Q, it.CLAIM_K, sets, removes, values)
        if state is RunState.SETTLED:
            removes.extend(["#open_q", "#open_k"])
        elif deadline_at is not None:
            set_entry(
                it.open_entry(state, run_id, deadline_at),
                it.OPEN_Q,
                it.OPEN_K,
                sets,
                removes,
                values,
            )
        try:
            await table.update(
                it.run_key(run_id),
                update_expression(sets, removes),
                condition=holder,
                values=values,
            )
        except ConditionFailed:
            return
        signal_run(self._notifier, run_id, runnable=state is RunState.RUNNABLE)

    async def settle_inline(self, run_id: RunId) -> bool:
        """See ``Store.settle_inline``: only a nested Run nobody holds is settled."""
        table = await self._ready()
        try:
            await table.update(
                it.run_key(run_id),
                "SET #state = :settled REMOVE #open_q, #open_k, #claim_q, #claim_k",
                condition="#state = :nested AND attribute_not_exists(#lease_holder)",
                values={
                    ":settled": it.s(RunState.SETTLED.value),
                    ":nested": it.s(RunState.NESTED.value),
                },
            )
        except ConditionFailed:
            return False
        self._notifier.signal(run_id)
        return True

    async def set_runnable_at(self, run_id: RunId, runnable_at: datetime | None) -> None:
        """See ``Store.set_runnable_at``; a settled Run is left exactly as it is.

        What changes depends on the current state, which one update cannot branch on,
        so the header is read and then updated on the condition that its state is
        still the one read (retried if it moved in between).
        """
        table = await self._ready()
        for _ in range(_READ_MODIFY_WRITE_TRIES):
            item = await table.get(it.run_key(run_id), projection=(it.STATE, it.CREATED_AT))
            if item is None:
                raise RunNotFound(run_id)
            seen = RunState(it.text(item, it.STATE))
            if seen is RunState.SETTLED:
                return
            created_at = it.instant(it.number(item, it.CREATED_AT))
            state = seen
            if runnable_at is None and seen is RunState.SUSPENDED:
                state = RunState.RUNNABLE
            sets: list[str] = []
            removes: list[str] = []
            values: dict[str, it.Attribute] = {":seen": it.s(seen.value)}
            set_time("runnable_at", runnable_at, sets, removes, values)
            if state is not seen:
                sets.append("#state = :state")
                values[":state"] = it.s(state.value)
            if state is RunState.RUNNABLE:
                entry = it.claim_entry(state, run_id, created_at, runnable_at, None)
                set_entry(entry, it.CLAIM_Q, it.CLAIM_K, sets, removes, values)
            try:
                await table.update(
                    it.run_key(run_id),
                    update_expression(sets, removes),
                    condition="#state = :seen",
                    values=values,
                )
            except ConditionFailed:
                continue
            if state is RunState.RUNNABLE and runnable_at is None:
                self._notifier.signal(WORK)
            return
        raise StoreUnavailable(
            f"run {run_id!r} changed state on every one of {_READ_MODIFY_WRITE_TRIES} tries "
            "to set its runnable_at; try again"
        )

    # --- sweeps ------------------------------------------------------------------------

    async def expired_leases(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        """See ``Store.expired_leases``; oldest expiry first."""
        # A running Run without any expiry sorts first; it has no lease to expire.
        unexpiring = it.sortable(None) + "|"
        headers = await self._due_headers(
            it.CLAIM_INDEX,
            "#claim_q = :q AND #claim_k < :bound",
            it.LEASED,
            now,
            limit,
            keep=lambda entry: not it.text(entry, it.CLAIM_K).startswith(unexpiring),
        )
        return sweep_expired_leases(headers, now, limit)

    async def overdue_deadlines(self, now: datetime, limit: int = 100) -> list[RunHeader]:
        """See ``Store.overdue_deadlines``; earliest deadline first."""
        headers = await self._due_headers(
            it.OPEN_INDEX, "#open_q = :q AND #open_k < :bound", it.OPEN, now, limit
        )
        return sweep_overdue_deadlines(headers, now, limit)

    async def recent_runs(
        self,
        *,
        tenant: str | None = None,
        states: Collection[RunState] | None = None,
        limit: int = 20,
    ) -> list[RunHeader]:
        """See ``RunListing.recent_runs``.

        DynamoDB keeps no index by admission time, so this scans every Run's header
        item: fine for an operator looking at a table, never used by a Worker.
        """
        check_listing_limit(limit)
        headers = await self._scanned_headers()
        return newest_runs(headers, tenant=tenant, states=states, limit=limit)

    async def settled_runs(
        self,
        *,
        tenant: str,
        created_before: datetime,
        after: tuple[datetime, RunId] | None = None,
        limit: int = 100,
    ) -> list[RunHeader]:
        """See ``RunDeletion.settled_runs``.

        Like ``recent_runs``, a Scan of every Run's header item (filtered on the
        server to settled ones): meant for a retention job, never on a Run's path.
        """
        check_listing_limit(limit)
        if no_run_can_match("", tenant):
            return []
        headers = await self._scanned_headers(settled_only=True)
        return oldest_settled_runs(
            headers, tenant=tenant, created_before=created_before, after=after, limit=limit
        )

    async def delete_runs(self, run_ids: Collection[RunId], *, tenant: str) -> list[RunId]:
        """See ``RunDeletion.delete_runs``; not one transaction on DynamoDB.

        Per Run: the header is read (it must be the tenant's and settled), the record
        items and the idempotency key item are deleted, and the header item last, on
        the condition that the Run is still settled. A call cut short leaves the Run
        with part of its log; calling again finishes it. A deleted item is gone from
        every read DynamoDB allows.
        """
        table = await self._ready()
        deleted: list[RunId] = []
        for run_id in dict.fromkeys(run_ids):
            if no_run_can_match(run_id, tenant):
                continue
            item = await table.get(it.run_key(run_id))
            if item is None:
                continue
            header = it.header_of(item)
            if header.scope.tenant != tenant or header.state is not RunState.SETTLED:
                continue
            records = await self._records(table, run_id, 0, None)
            await table.batch_delete([{it.PK: r[it.PK], it.SK: r[it.SK]} for r in records])
            if header.idempotency_key is not None:
                with suppress(ConditionFailed):
                    await table.delete_item(
                        it.idempotency_key(tenant, header.idempotency_key),
                        condition=f"#{it.KEY_RUN_ID} = :run",
                        values={":run": it.s(run_id)},
                    )
            try:
                await table.delete_item(
                    it.run_key(run_id),
                    condition=f"#{it.STATE} = :settled",
                    values={":settled": it.s("settled")},
                )
            except ConditionFailed:
                continue
            deleted.append(run_id)
        return deleted

    async def _scanned_headers(self, *, settled_only: bool = False) -> list[RunHeader]:
        """Every Run's header item, by a Scan of the whole table (filtered on the server)."""
        table = await self._ready()
        condition = f"begins_with(#{it.PK}, :run) AND #{it.SK} = :header"
        values = {":run": it.s("r#"), ":header": it.n(0)}
        if settled_only:
            condition += f" AND #{it.STATE} = :settled"
            values[":settled"] = it.s("settled")
        headers: list[RunHeader] = []
        start: it.Item | None = None
        while True:
            items, start = await table.scan(condition, values, start=start)
            headers.extend(it.header_of(item) for item in items)
            if start is None:
                return headers

    async def _due_headers(
        self,
        index: str,
        condition: str,
        partition: str,
        now: datetime,
        limit: int,
        *,
        keep: Callable[[it.Item], bool] | None = None,
    ) -> list[RunHeader]:
        """The headers behind up to ``limit`` index entries of ``partition`` before ``now``.

        The index is only a hint: the caller judges each header read back by the core's
        sweep rule. ``keep`` leaves out entries that cannot be due.
        """
        if limit <= 0:
            return []
        table = await self._ready()
        values = {":q": it.s(partition), ":bound": it.s(it.before(now))}
        found: list[it.Item] = []
        start: it.Item | None = None
        while len(found) < limit:
            page, start = await table.query(
                condition, values, index=index, limit=limit - len(found), start=start
            )
            found.extend(page)
            if start is None:
                break
        ids = [it.run_id_of_pk(it.text(e, it.PK)) for e in found if keep is None or keep(e)]
        return await self._headers(table, ids)

    async def _headers(self, table: Table, run_ids: Sequence[RunId]) -> list[RunHeader]:
        """The current headers of ``run_ids`` (strongly consistent), missing ones left out."""
        if not run_ids:
            return []
        items = await table.batch_get([it.run_key(run_id) for run_id in dict.fromkeys(run_ids)])
        headers = [it.header_of(item) for item in items]
        for header in headers:
            self._remember(header)
        return headers

    # --- internals ---------------------------------------------------------------------

    def _remember(self, header: RunHeader) -> None:
        """Keep a Run's created_at, which never changes, to spare a read on release."""
        cache = self._created_at
        if header.run_id not in cache and len(cache) >= _CREATED_AT_CACHE:
            del cache[next(iter(cache))]
        cache[header.run_id] = header.created_at


def _holder(worker_id: WorkerId, attempt_count: int | None, values: dict[str, it.Attribute]) -> str:
    """The condition that the lease is this Worker's (and this claim's, when named).

    Shared by fenced appends, renew and release. Adds the placeholders it uses to
    ``values``.
    """
    values[":worker"] = it.s(worker_id)
    if attempt_count is None:
        return "#lease_holder = :worker"
    values[":attempt"] = it.n(attempt_count)
    return "#lease_holder = :worker AND #attempt_count = :attempt"


__all__ = ["DynamoStore"]
