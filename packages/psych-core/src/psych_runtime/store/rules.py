"""The Store port's lease and sweep rules as plain functions over headers.

``claimable`` and ``claim_order`` choose, ``leased``, ``released`` and ``parked`` give
the header after ``claim``, ``release`` and ``set_runnable_at``, and the two sweeps
select from a collection of headers.

A store that keeps its headers in memory (the in-memory store, a third party's
in-process store, a cache) can apply the rules exactly as the port states them
instead of restating them. Stores with a query language express the same rules in
it; ``psych-contract`` checks both kinds against its own, independent reference model.
"""

from collections.abc import Collection
from collections.abc import Iterable
from datetime import datetime
from datetime import timedelta

from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import WorkerId
from psych_runtime.store.port import RunHeader
from psych_runtime.store.port import RunState


def claimable(header: RunHeader, now: datetime) -> bool:
    """Whether ``claim(now)`` may lease this Run.

    Not parked (``runnable_at`` absent or at or before ``now``), and ``runnable``, or
    ``running`` with a lease that expired at or before ``now``.
    """
    if header.runnable_at is not None and header.runnable_at > now:
        return False
    if header.state is RunState.RUNNABLE:
        return True
    if header.state is RunState.RUNNING:
        expires = header.lease_expires_at
        return expires is None or expires <= now
    return False


def claim_order(header: RunHeader) -> tuple[datetime, datetime, str]:
    """The key ``claim`` takes the smallest of: waiting since, admitted at, run id.

    Oldest first, so a steady stream of new Runs cannot starve an old one; a parked Run
    waits from the end of its parking.
    """
    since = header.runnable_at if header.runnable_at is not None else header.created_at
    return (since, header.created_at, header.run_id)


def holds_lease(header: RunHeader, worker_id: WorkerId, attempt_count: int | None) -> bool:
    """Whether the lease is ``worker_id``'s (and that claim's, when a count is given)."""
    if header.lease_holder != worker_id:
        return False
    return attempt_count is None or header.attempt_count == attempt_count


def leased(
    header: RunHeader, worker_id: WorkerId, now: datetime, lease_seconds: float
) -> RunHeader:
    """The header after ``claim``: running, held by ``worker_id``, one more attempt."""
    return header.model_copy(
        update={
            "state": RunState.RUNNING,
            "lease_holder": worker_id,
            "lease_expires_at": now + timedelta(seconds=lease_seconds),
            "attempt_count": header.attempt_count + 1,
        }
    )


def released(
    header: RunHeader,
    state: RunState,
    runnable_at: datetime | None,
    deadline_at: datetime | None,
) -> RunHeader:
    """The header after ``release``: no lease, the new state, parking replaced.

    ``runnable_at`` replaces any earlier parking (None clears it); a given
    ``deadline_at`` replaces the deadline.
    """
    changes: dict[str, object] = {
        "state": state,
        "lease_holder": None,
        "lease_expires_at": None,
        "runnable_at": runnable_at,
    }
    if deadline_at is not None:
        changes["deadline_at"] = deadline_at
    return header.model_copy(update=changes)


def parked(header: RunHeader, runnable_at: datetime | None) -> RunHeader:
    """The header after ``set_runnable_at`` on an unsettled Run.

    Clearing the parking of a suspended Run makes it runnable.
    """
    changes: dict[str, object] = {"runnable_at": runnable_at}
    if runnable_at is None and header.state is RunState.SUSPENDED:
        changes["state"] = RunState.RUNNABLE
    return header.model_copy(update=changes)


def sweep_expired_leases(
    headers: Iterable[RunHeader], now: datetime, limit: int
) -> list[RunHeader]:
    """Running Runs whose lease ended at or before ``now``, earliest expiry first."""
    expired = [
        header
        for header in headers
        if header.state is RunState.RUNNING
        and header.lease_expires_at is not None
        and header.lease_expires_at <= now
    ]
    expired.sort(key=lambda h: (h.lease_expires_at, h.run_id))
    return expired[:limit]


def sweep_overdue_deadlines(
    headers: Iterable[RunHeader], now: datetime, limit: int
) -> list[RunHeader]:
    """Unsettled Runs whose deadline is at or before ``now``, earliest first."""
    overdue = [h for h in headers if h.state is not RunState.SETTLED and h.deadline_at <= now]
    overdue.sort(key=lambda h: (h.deadline_at, h.run_id))
    return overdue[:limit]


def newest_runs(
    headers: Iterable[RunHeader],
    *,
    tenant: str | None,
    states: Collection[RunState] | None,
    limit: int,
) -> list[RunHeader]:
    """``RunListing.recent_runs`` over headers held in memory."""
    check_listing_limit(limit)
    wanted = set(states) if states else None
    found = [
        h
        for h in headers
        if (tenant is None or h.scope.tenant == tenant) and (wanted is None or h.state in wanted)
    ]
    found.sort(key=lambda h: (h.created_at, h.run_id), reverse=True)
    return found[:limit]


def oldest_settled_runs(
    headers: Iterable[RunHeader],
    *,
    tenant: str,
    created_before: datetime,
    after: tuple[datetime, RunId] | None,
    limit: int,
) -> list[RunHeader]:
    """``RunDeletion.settled_runs`` over headers held in memory."""
    check_listing_limit(limit)
    found = [
        h
        for h in headers
        if h.scope.tenant == tenant
        and h.state is RunState.SETTLED
        and h.created_at < created_before
        and (after is None or (h.created_at, h.run_id) > after)
    ]
    found.sort(key=lambda h: (h.created_at, h.run_id))
    return found[:limit]


def check_listing_limit(limit: int) -> None:
    """Refuse a ``recent_runs`` limit below 1 (or not an int) before any query runs."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive int, got {limit!r}")


__all__ = [
    "check_listing_limit",
    "claim_order",
    "claimable",
    "holds_lease",
    "newest_runs",
    "oldest_settled_runs",
    "sweep_expired_leases",
    "sweep_overdue_deadlines",
]
