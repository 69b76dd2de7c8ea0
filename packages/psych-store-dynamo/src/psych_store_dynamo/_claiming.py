"""The claim: find candidates on the sparse index, then win one with a conditional write.

The ``claimable`` index (see ``_rows``) keeps three partitions: ``ready`` (runnable,
by created_at), ``parked`` (runnable with a parking time, by that time) and ``leased``
(running, by lease expiry). A claim reads the first few entries of ``ready``, the
first few of ``parked`` whose time has come, and every expired entry of ``leased``
(there are few: a claim drains them), all three Queries at once. It ranks them the way
the in-memory store does (``runnable_at`` or else ``created_at``, then ``created_at``,
then run id) and tries them in that order with one conditional ``UpdateItem`` each.

The update's condition re-checks claimability on the item itself, so the index may lag
(it is eventually consistent) and claimers may race: exactly one condition holds per
Run. A candidate lost to a race is skipped; when a whole round is lost the index is
read again, a few times, before the claim reports that nothing is claimable.
"""

import asyncio
from datetime import datetime
from datetime import timedelta

from psych_runtime import RunId
from psych_runtime.adapters.store import RunState
from psych_runtime.records import WorkerId
from psych_store_dynamo import _rows as it
from psych_store_dynamo._table import ConditionFailed
from psych_store_dynamo._table import Table

CANDIDATES = 8
"""Entries read from ``ready`` and from ``parked`` per round."""
ROUNDS = 3
"""Fresh looks at the index when every candidate of a round was taken by others."""
EXPIRED_SCAN_CAP = 1000
"""Expired leases looked at, at most, to find the oldest among them."""
PAGE = 200

_CONDITION = (
    "(#state = :runnable OR (#state = :running AND "
    "(attribute_not_exists(#lease_expires_at) OR #lease_expires_at <= :now))) "
    "AND (attribute_not_exists(#runnable_at) OR #runnable_at <= :now)"
)
_UPDATE = (
    "SET #state = :running, #lease_holder = :worker, #lease_expires_at = :expires, "
    "#attempt_count = #attempt_count + :one, #claim_q = :leased, #claim_k = :claim_k"
)

Order = tuple[int, int, str]


async def claim(
    table: Table, worker_id: WorkerId, now: datetime, lease_seconds: float
) -> it.Item | None:
    """Lease the best claimable Run to ``worker_id``; its item after the claim, or None."""
    expires = now + timedelta(seconds=lease_seconds)
    for _ in range(ROUNDS):
        candidates = await candidates_at(table, now)
        if not candidates:
            return None
        for run_id in candidates:
            values = {
                ":runnable": it.s(RunState.RUNNABLE.value),
                ":running": it.s(RunState.RUNNING.value),
                ":now": it.time_value(now),
                ":worker": it.s(worker_id),
                ":expires": it.time_value(expires),
                ":one": it.n(1),
                ":leased": it.s(it.LEASED),
                ":claim_k": it.s(leased_key(run_id, expires)),
            }
            try:
                return await table.update(
                    it.run_key(run_id),
                    _UPDATE,
                    condition=_CONDITION,
                    values=values,
                    return_new=True,
                )
            except ConditionFailed:
                continue
    return None


async def candidates_at(table: Table, now: datetime) -> list[RunId]:
    """Run ids worth trying at ``now``, best first."""
    ready, parked, expired = await asyncio.gather(
        table.query(
            "#claim_q = :q",
            {":q": it.s(it.READY)},
            index=it.CLAIM_INDEX,
            limit=CANDIDATES,
        ),
        table.query(
            "#claim_q = :q AND #claim_k < :bound",
            {":q": it.s(it.PARKED), ":bound": it.s(it.before(now))},
            index=it.CLAIM_INDEX,
            limit=CANDIDATES,
        ),
        expired_entries(table, now),
    )
    ranked: list[tuple[Order, RunId]] = []
    cutoff: Order | None = None
    for items, more in (ready, parked):
        keys = [(claim_order(item), entry_run_id(item)) for item in items]
        ranked.extend(keys)
        if more is not None and keys:
            # Entries after a truncated page's last one may be outranked by entries the
            # page left out; they wait for a later claim.
            last = keys[-1][0]
            cutoff = last if cutoff is None else min(cutoff, last)
    ranked.extend((claim_order(item), entry_run_id(item)) for item in expired)
    ranked.sort()
    return [run_id for order, run_id in ranked if cutoff is None or order <= cutoff]


async def expired_entries(table: Table, now: datetime) -> list[it.Item]:
    """Index entries of running Runs whose lease has expired and that are not parked."""
    values = {
        ":q": it.s(it.LEASED),
        ":bound": it.s(it.before(now)),
        ":now": it.time_value(now),
    }
    found: list[it.Item] = []
    start: it.Item | None = None
    while len(found) < EXPIRED_SCAN_CAP:
        page, start = await table.query(
            "#claim_q = :q AND #claim_k < :bound",
            values,
            index=it.CLAIM_INDEX,
            limit=PAGE,
            start=start,
            filter_expression="attribute_not_exists(#runnable_at) OR #runnable_at <= :now",
        )
        found.extend(page)
        if start is None:
            break
    return found


def leased_key(run_id: RunId, expires: datetime) -> str:
    """The ``leased`` partition's sort key for a lease expiring at ``expires``."""
    entry = it.claim_entry(RunState.RUNNING, run_id, None, None, expires)
    if entry is None:  # pragma: no cover - a running Run always has an entry
        raise AssertionError("running Runs are always in the claim index")
    return entry[1]


def entry_run_id(entry: it.Item) -> RunId:
    """The run id of an index entry."""
    return it.run_id_of_pk(it.text(entry, it.PK))


def claim_order(entry: it.Item) -> Order:
    """The in-memory store's claim order of an index entry: since, created, run id."""
    created = it.number(entry, it.CREATED_AT)
    parked = entry.get(it.RUNNABLE_AT, {}).get("N")
    since = created if parked is None else int(parked)
    return since, created, entry_run_id(entry)


__all__ = [
    "CANDIDATES",
    "EXPIRED_SCAN_CAP",
    "ROUNDS",
    "candidates_at",
    "claim",
    "claim_order",
    "entry_run_id",
    "expired_entries",
    "leased_key",
]
