"""Retention on every store: delete one Run with its children and blobs, or a tenant's old Runs.

The logs are written through the public Store port (a parent that delegated to a
child, the child with an offloaded result in the blob store), so each case checks the
deletion helpers against the real backend: what goes, what stays, and that another
tenant's Runs are never touched.
"""

from collections.abc import Awaitable
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path

import pytest

import psych_runtime
from psych_runtime import RunId
from psych_runtime import RunNotFound
from psych_runtime import Store
from psych_runtime import VersionHash
from psych_runtime.adapters import BlobKey
from psych_runtime.adapters import FileBlobStore
from psych_runtime.adapters import RunHeader
from psych_runtime.adapters import RunState
from psych_runtime.records import AbortRequested
from psych_runtime.records import RunAdmitted
from psych_runtime.records import RunSettled
from psych_runtime.records import SubagentSpawned
from psych_runtime.records import TerminalState
from psych_runtime.records import ToolCallFinished
from psych_runtime.records import ToolCallId
from psych_runtime.records import ToolOutcome
from psych_runtime.records import WorkerId
from psych_runtime.retention import RunStillActive
from psych_runtime.retention import delete_run
from psych_runtime.retention import delete_settled_runs

from .conftest import EVERY

UrlFor = Callable[[str], Awaitable[str]]
HASH = VersionHash("sha256:" + "cd" * 32)
T0 = datetime(2031, 3, 1, tzinfo=UTC)
WORKER = WorkerId("retention-worker")
_counter = [0]


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


async def _admit(
    store: Store, tenant: str, created_s: float, *, parent: RunId | None = None
) -> RunHeader:
    _counter[0] += 1
    run_id = RunId(f"run_ret_{_counter[0]}_{id(store):x}_{created_s:g}")
    scope = psych_runtime.Scope(tenant=tenant)
    header = RunHeader(
        run_id=run_id,
        scope=scope,
        version_hash=HASH,
        state=RunState.NESTED if parent else RunState.RUNNABLE,
        created_at=_at(created_s),
        deadline_at=_at(created_s + 86_400),
        parent_run_id=parent,
        delegation_depth=1 if parent else 0,
    )
    admitted = RunAdmitted(
        run_id=run_id,
        seq=1,
        at=_at(created_s),
        scope=scope,
        version_hash=HASH,
        deadline_at=header.deadline_at,
        parent_run_id=parent,
        delegation_depth=header.delegation_depth,
    )
    assert (await store.create_run(header, admitted)).created
    return header


async def _settle(store: Store, run: RunHeader, settled_s: float) -> None:
    seq = await store.head(run.run_id) + 1
    record = RunSettled(
        run_id=run.run_id,
        seq=seq,
        at=_at(settled_s),
        scope=run.scope,
        state=TerminalState.COMPLETED,
    )
    await store.append(run.run_id, seq, [record])
    if run.state is RunState.NESTED:
        assert await store.settle_inline(run.run_id)
        return
    claimed = await store.claim(WORKER, _at(10**6), 30)
    assert claimed is not None and claimed.run_id == run.run_id
    await store.release(run.run_id, WORKER, RunState.SETTLED)


async def _family(
    store: Store, blobs: FileBlobStore, tenant: str, created_s: float, settled_s: float
) -> tuple[RunHeader, RunHeader, BlobKey]:
    """A parent that spawned a child; the child offloaded a result to the blob store."""
    parent = await _admit(store, tenant, created_s)
    child = await _admit(store, tenant, created_s + 0.5, parent=parent.run_id)
    await store.append(
        parent.run_id,
        2,
        [
            SubagentSpawned(
                run_id=parent.run_id,
                seq=2,
                at=_at(created_s + 1),
                scope=parent.scope,
                child_run_id=child.run_id,
                name="helper",
                call_id=ToolCallId("c1"),
                child_version_hash=HASH,
            )
        ],
    )
    key = BlobKey(tenant, child.run_id, ToolCallId("c2"))
    await blobs.put(key, b"offloaded result " + tenant.encode(), content_type="text/plain")
    # An orphan too: written before a crash, never named by the log.
    orphan = BlobKey(tenant, child.run_id, ToolCallId("c3.stdout"))
    await blobs.put(orphan, b"never recorded", content_type="text/plain")
    await store.append(
        child.run_id,
        2,
        [
            ToolCallFinished(
                run_id=child.run_id,
                seq=2,
                at=_at(created_s + 2),
                scope=child.scope,
                call_id=ToolCallId("c2"),
                outcome=ToolOutcome.OK,
                result_blob_key=str(key),
                result_bytes=20,
                result_content_type="text/plain",
            )
        ],
    )
    await _settle(store, child, settled_s)
    await _settle(store, parent, settled_s)
    return parent, child, key


@pytest.mark.parametrize("kind", EVERY)
async def test_delete_run_takes_its_children_and_blobs_and_nothing_else(
    kind: str, store_url_for: UrlFor, tmp_path: Path
) -> None:
    store = await psych_runtime.open_store(await store_url_for(kind))
    blobs = FileBlobStore(tmp_path / "blobs")
    acme = psych_runtime.Scope(tenant="acme")
    try:
        parent, child, key = await _family(store, blobs, "acme", 0, 10)
        kept, kept_child, kept_key = await _family(store, blobs, "acme", 100, 110)
        theirs, _, their_key = await _family(store, blobs, "globex", 200, 210)
        # Another tenant asking is told the Run does not exist, and nothing goes.
        with pytest.raises(RunNotFound):
            await delete_run(store, parent.run_id, scope=psych_runtime.Scope(tenant="globex"))
        deleted = await delete_run(store, parent.run_id, scope=acme, blobs=blobs)
        assert deleted.runs == (parent.run_id, child.run_id)
        assert deleted.blobs == 2
        for gone in (parent.run_id, child.run_id):
            assert await store.get_run(gone) is None
            assert await store.read(gone) == []
            # Every public read answers as for an id nobody admitted.
            for read in (psych_runtime.read_log, psych_runtime.status, psych_runtime.report):
                with pytest.raises(RunNotFound):
                    await read(store, gone, scope=acme)
        assert await blobs.stat(key) is None
        assert not (tmp_path / "blobs").joinpath("acme", child.run_id).exists()
        for stays in (kept.run_id, kept_child.run_id, theirs.run_id):
            assert await store.get_run(stays) is not None
        assert await blobs.stat(kept_key) is not None
        assert await blobs.stat(their_key) is not None
        with pytest.raises(RunNotFound):
            await delete_run(store, parent.run_id, scope=acme, blobs=blobs)
    finally:
        await store.close()


@pytest.mark.parametrize("kind", EVERY)
async def test_a_run_still_working_is_refused_whole(
    kind: str, store_url_for: UrlFor, tmp_path: Path
) -> None:
    store = await psych_runtime.open_store(await store_url_for(kind))
    blobs = FileBlobStore(tmp_path / "blobs")
    acme = psych_runtime.Scope(tenant="acme")
    try:
        parent = await _admit(store, "acme", 0)
        child = await _admit(store, "acme", 1, parent=parent.run_id)
        await store.append(
            parent.run_id,
            2,
            [
                SubagentSpawned(
                    run_id=parent.run_id,
                    seq=2,
                    at=_at(2),
                    scope=parent.scope,
                    child_run_id=child.run_id,
                    name="helper",
                    call_id=ToolCallId("c1"),
                    child_version_hash=HASH,
                )
            ],
        )
        await _settle(store, parent, 3)
        with pytest.raises(RunStillActive) as refused:
            await delete_run(store, parent.run_id, scope=acme, blobs=blobs)
        assert refused.value.run_id == child.run_id
        assert await store.get_run(parent.run_id) is not None
        assert await store.head(parent.run_id) == 3
    finally:
        await store.close()


@pytest.mark.parametrize("kind", EVERY)
async def test_delete_settled_runs_goes_by_settle_time_within_one_tenant(
    kind: str, store_url_for: UrlFor, tmp_path: Path
) -> None:
    store = await psych_runtime.open_store(await store_url_for(kind))
    blobs = FileBlobStore(tmp_path / "blobs")
    acme = psych_runtime.Scope(tenant="acme")
    try:
        old = [await _family(store, blobs, "acme", s, s + 5) for s in (0, 10, 20)]
        # Admitted long ago but settled after the cut-off: kept.
        late, _, _ = await _family(store, blobs, "acme", 30, 5_000)
        recent, _, _ = await _family(store, blobs, "acme", 2_000, 2_005)
        theirs, _, _ = await _family(store, blobs, "globex", 0, 5)
        running = await _admit(store, "acme", 40)
        await store.append(
            running.run_id,
            2,
            [AbortRequested(run_id=running.run_id, seq=2, at=_at(41), scope=running.scope)],
        )
        deleted = await delete_settled_runs(
            store, scope=acme, settled_before=_at(1_000), blobs=blobs, page_size=2
        )
        expected = {r.run_id for family in old for r in family[:2]}
        assert set(deleted.runs) == expected
        assert deleted.blobs == 6
        for run_id in expected:
            assert await store.get_run(run_id) is None
        for stays in (late.run_id, recent.run_id, theirs.run_id, running.run_id):
            assert await store.get_run(stays) is not None, stays
        again = await delete_settled_runs(store, scope=acme, settled_before=_at(1_000))
        assert again.runs == ()
    finally:
        await store.close()
