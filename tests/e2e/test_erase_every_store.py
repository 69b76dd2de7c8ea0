"""Erase that erases, on every store: after ``memory.erase`` no byte anywhere spells the fact.

A fact is remembered in one Run and recalled into the next Run's prompt, then erased.
Afterwards neither a public read (the log, the report, the status) of those Runs nor
any byte the store, the memory store or the blob store keeps (searched through each
adapter's ``raw_storage()``: the SQLite file with its WAL and free pages, every page
of the PostgreSQL schema, the MariaDB tablespace files, every DynamoDB item, every
blob file) holds the fact's text. The log names facts by id, so it is unchanged and
still folds.
"""

import asyncio
import uuid
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path

import pytest

import psych_runtime
from psych_runtime import MemoryKey
from psych_runtime import MemoryStore
from psych_runtime import RunId
from psych_runtime import Store
from psych_runtime.adapters import BlobStore
from psych_runtime.adapters import FileBlobStore
from psych_runtime.adapters import RawStorage
from psych_runtime.adapters import mentions
from psych_runtime.testing import FakeModel

from .conftest import EVERY

ACME = psych_runtime.Scope(tenant="acme")
UrlFor = Callable[[str], Awaitable[str]]
SPEC = psych_runtime.AgentSpec(name="concierge", model="fake-standard")


async def _run(
    store: Store, memory: MemoryStore, blob: BlobStore, model: FakeModel, message: str
) -> RunId:
    version = await psych_runtime.publish(store, SPEC, scope=ACME)
    runtime = psych_runtime.Runtime(
        store, model, psych_runtime.ToolRegistry(), memory=memory, blob=blob
    )
    worker = psych_runtime.Worker(
        store, runtime, lease_seconds=3.0, heartbeat_seconds=0.5, poll_interval=0.05
    )
    task = asyncio.create_task(worker.run())
    try:
        run = await psych_runtime.dispatch(store, version, message, scope=ACME, end_user_id="alice")
        async with asyncio.timeout(30):
            while (await store.get_run(run.run_id)).state.value != "settled":  # type: ignore[union-attr]
                await asyncio.sleep(0.02)
        return run.run_id
    finally:
        worker.request_stop()
        await asyncio.gather(task, return_exceptions=True)


async def _raw(*stores: object) -> list[psych_runtime.adapters.RawItem]:
    items = []
    for each in stores:
        assert isinstance(each, RawStorage), f"{type(each).__name__} shows no raw storage"
        items.extend(await each.raw_storage())
    return items


async def _public_text(store: Store, run_id: RunId) -> str:
    log = await psych_runtime.read_log(store, run_id, scope=ACME)
    report = await psych_runtime.report(store, run_id, scope=ACME)
    status = await psych_runtime.status(store, run_id, scope=ACME)
    return "\n".join(
        [*(record.model_dump_json() for record in log), report.model_dump_json(), repr(status)]
    )


@pytest.mark.parametrize("kind", EVERY)
async def test_an_erased_fact_leaves_no_byte_in_any_store(
    kind: str, store_url_for: UrlFor, tmp_path: Path
) -> None:
    url = await store_url_for(kind)
    store = await psych_runtime.open_store(url)
    memory = await psych_runtime.open_memory_store(url, migrate=True)
    blob = FileBlobStore(tmp_path / "blobs")
    fact = f"Allergic to peanuts, case {uuid.uuid4().hex}"
    try:
        first = FakeModel().turn(tool_calls=[("remember", {"fact": fact})]).turn(text="Noted.")
        kept_in = await _run(store, memory, blob, first, "Please note my allergy.")
        second = FakeModel().turn(text="Here is a menu without peanuts.")
        recalled_in = await _run(store, memory, blob, second, "What can I eat?")
        sent = second.requests[-1].messages[0].content
        assert isinstance(sent, str) and fact in sent, "the fact did not reach the model"
        assert mentions(await _raw(memory), [fact]), "raw_storage() does not see the fact"

        alice = MemoryKey(tenant="acme", end_user_id="alice")
        assert await memory.erase(alice) == 1

        for run_id in (kept_in, recalled_in):
            assert fact not in await _public_text(store, run_id), run_id
        left = mentions(await _raw(store, memory, blob), [fact])
        assert left == [], f"the erased fact is still stored: {left}"

        # The log was never rewritten: both Runs still fold, and name the fact by id.
        log = await psych_runtime.read_log(store, kept_in, scope=ACME)
        [finished] = [r for r in log if r.type == "tool_call_finished"]
        assert finished.result["remembered"].startswith("mem_")  # type: ignore[index]
        report = await psych_runtime.report(store, recalled_in, scope=ACME)
        assert finished.result["remembered"] in report.system_prompt  # type: ignore[index]
        status = await psych_runtime.status(store, recalled_in, scope=ACME)
        assert status.terminal_state is psych_runtime.TerminalState.COMPLETED
    finally:
        await memory.close()
        await store.close()
