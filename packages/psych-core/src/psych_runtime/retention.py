"""Retention: delete a settled Run for good, or every Run of a tenant settled before a time.

A Run is deleted whole: its header, its log, its idempotency key, the Runs it
delegated to (found in its log, recursively), and every blob those Runs offloaded.
Deleting is for settled Runs only; a Run still working, or with a child still
working, is refused before anything is deleted. Nothing here runs on its own: a
deployment calls these from its own scheduled job (see ``docs/deploying.md``).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from psych_runtime.blob.port import BlobKey
from psych_runtime.blob.port import BlobStore
from psych_runtime.blob.port import InvalidBlobKey
from psych_runtime.blob.port import RunBlobDeletion
from psych_runtime.core.errors import PsychError
from psych_runtime.core.errors import RunNotFound
from psych_runtime.core.ids import RunId
from psych_runtime.core.records import Record
from psych_runtime.core.records import RunSettled
from psych_runtime.core.records import ToolCallFinished
from psych_runtime.core.scope import Scope
from psych_runtime.store.port import RunDeletion
from psych_runtime.store.port import RunHeader
from psych_runtime.store.port import RunState
from psych_runtime.store.port import Store


class RunStillActive(PsychError):
    """A Run (or one of the Runs it delegated to) has not settled, so it is not deleted."""

    def __init__(self, run_id: str, state: RunState) -> None:
        super().__init__(
            f"run {run_id!r} is {state.value}, not settled: interrupt it and wait for it to "
            "settle before deleting it"
        )
        self.run_id = run_id
        self.state = state


class DeletionUnsupported(PsychError, TypeError):
    """The store (or blob store) cannot delete Runs (or a Run's blobs)."""


@dataclass(frozen=True, slots=True)
class DeletedRuns:
    """What a deletion removed.

    Attributes:
        runs: the Runs deleted, parents before the Runs they delegated to.
        blobs: how many blobs went with them.
    """

    runs: tuple[RunId, ...] = ()
    blobs: int = 0

    def __add__(self, other: "DeletedRuns") -> "DeletedRuns":
        return DeletedRuns(self.runs + other.runs, self.blobs + other.blobs)


async def delete_run(
    store: Store, run_id: RunId, *, scope: Scope, blobs: BlobStore | None = None
) -> DeletedRuns:
    """Delete one settled Run of ``scope``'s tenant, the Runs it delegated to and their blobs.

    Args:
        store: where the Run lives; it must implement ``RunDeletion``.
        run_id: the Run.
        scope: whose Run it is; another tenant's Run is reported as not found.
        blobs: the blob store the Runtime offloaded large results to. Required when
            any of the Runs' logs names a blob.

    Returns:
        The Runs and the number of blobs deleted.

    Raises:
        RunNotFound: no such Run for this tenant.
        RunStillActive: the Run or one of its descendants is not settled; nothing
            was deleted.
        DeletionUnsupported: the store cannot delete Runs, or a log names blobs and
            no blob store was given.
    """
    deleter = _deleter(store)
    tenant = scope.tenant
    header = await store.get_run(run_id, tenant=tenant)
    if header is None:
        raise RunNotFound(run_id)
    tree = await _tree(store, header, tenant)
    for member, _ in tree:
        if member.state is not RunState.SETTLED:
            raise RunStillActive(member.run_id, member.state)
    keys = [key for _, log in tree for key in _blob_keys(log)]
    removed = 0
    if blobs is not None:
        for key in keys:
            removed += int(await blobs.delete(key))
        if isinstance(blobs, RunBlobDeletion):
            for member, _ in tree:
                removed += await blobs.delete_run_blobs(tenant, member.run_id)
    elif keys:
        raise DeletionUnsupported(
            f"run {run_id!r} offloaded results to a blob store; pass blobs= so they are "
            "deleted with it"
        )
    ids = [member.run_id for member, _ in tree]
    deleted = set(await deleter.delete_runs(ids, tenant=tenant))
    return DeletedRuns(tuple(r for r in ids if r in deleted), removed)


async def delete_settled_runs(
    store: Store,
    *,
    scope: Scope,
    settled_before: datetime,
    blobs: BlobStore | None = None,
    page_size: int = 100,
) -> DeletedRuns:
    """Delete every Run of ``scope``'s tenant that settled before ``settled_before``.

    Top-level Runs are chosen by when they settled (the time of their
    ``run_settled`` record); each goes with the Runs it delegated to, as in
    ``delete_run``. A Run whose tree is not all settled yet is skipped this time.

    Args:
        store: where the Runs live; it must implement ``RunDeletion``.
        scope: whose Runs; no other tenant's Run is ever listed or deleted.
        settled_before: the cut-off instant (timezone-aware).
        blobs: the blob store large results went to, as for ``delete_run``.
        page_size: how many Runs to list per store call.

    Returns:
        Everything deleted.
    """
    deleter = _deleter(store)
    if settled_before.tzinfo is None:
        raise ValueError("settled_before must be timezone-aware")
    total = DeletedRuns()
    after: tuple[datetime, RunId] | None = None
    while True:
        page = await deleter.settled_runs(
            tenant=scope.tenant, created_before=settled_before, after=after, limit=page_size
        )
        for header in page:
            if header.parent_run_id is not None:
                continue  # deleted with the Run that delegated to it
            log = await store.read(header.run_id, tenant=scope.tenant)
            settled_at = _settled_at(log)
            if settled_at is None or settled_at >= settled_before:
                continue
            try:
                total += await delete_run(store, header.run_id, scope=scope, blobs=blobs)
            except (RunStillActive, RunNotFound):
                continue
        if len(page) < page_size:
            return total
        last = page[-1]
        after = (last.created_at, last.run_id)


def _deleter(store: Store) -> RunDeletion:
    if not isinstance(store, RunDeletion):
        raise DeletionUnsupported(
            f"{type(store).__name__} cannot delete Runs (it does not implement RunDeletion)"
        )
    return store


async def _tree(store: Store, root: RunHeader, tenant: str) -> list[tuple[RunHeader, list[Record]]]:
    """The Run and every Run it delegated to, each with its log, parents first."""
    found: list[tuple[RunHeader, list[Record]]] = []
    seen: set[RunId] = set()
    pending = [root]
    while pending:
        header = pending.pop(0)
        if header.run_id in seen:
            continue
        seen.add(header.run_id)
        log = await store.read(header.run_id, tenant=tenant)
        found.append((header, log))
        for child_id in _children(log):
            child = await store.get_run(child_id, tenant=tenant)
            if child is not None:
                pending.append(child)
    return found


def _children(log: Sequence[Record]) -> list[RunId]:
    children: list[RunId] = []
    for record in log:
        child = getattr(record, "child_run_id", None)
        if isinstance(child, str) and child not in children:
            children.append(RunId(child))
    return children


def _blob_keys(log: Sequence[Record]) -> list[BlobKey]:
    keys: list[BlobKey] = []
    for record in log:
        if isinstance(record, ToolCallFinished) and record.result_blob_key is not None:
            try:
                keys.append(BlobKey.parse(record.result_blob_key))
            except InvalidBlobKey:
                continue
    return keys


def _settled_at(log: Sequence[Record]) -> datetime | None:
    for record in reversed(log):
        if isinstance(record, RunSettled):
            return record.at
    return None


__all__ = [
    "DeletedRuns",
    "DeletionUnsupported",
    "RunStillActive",
    "delete_run",
    "delete_settled_runs",
]
