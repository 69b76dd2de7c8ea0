"""The in-process MemoryStore against the shared MemoryStore conformance suite."""

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from psych_contract import MemoryContract
from psych_runtime import InMemoryMemoryStore
from psych_runtime import MemoryKey
from psych_runtime import open_memory_store


class TestInMemoryMemoryStore(MemoryContract):
    single_process = True  # its facts live in this process only
    durable = False

    @pytest_asyncio.fixture
    async def memory_store(self) -> AsyncIterator[InMemoryMemoryStore]:
        store = InMemoryMemoryStore()
        yield store
        await store.close()


async def test_memory_url_opens_a_fresh_store_each_time() -> None:
    first = await open_memory_store("memory://")
    second = await open_memory_store("memory://")
    key = MemoryKey(tenant="acme", end_user_id="alice")
    await first.remember(key, "only in the first")
    assert await second.recall(key) == ()
    assert len(await first.recall(key)) == 1


async def test_a_closed_store_refuses_calls() -> None:
    store = InMemoryMemoryStore()
    await store.close()
    with pytest.raises(RuntimeError, match="closed"):
        await store.recall(MemoryKey(tenant="acme", end_user_id="alice"))
