"""``ForwardingStore`` over the in-memory store passes the whole Store contract."""

from collections.abc import AsyncIterator

import pytest_asyncio

from psych_contract import StoreContract
from psych_runtime import Store
from psych_runtime.adapters import InMemoryStore
from psych_runtime.testing import ForwardingStore


class TestForwardingStore(StoreContract):
    single_process = True  # over an InMemoryStore: no second instance

    @pytest_asyncio.fixture
    async def store(self) -> AsyncIterator[Store]:
        store = ForwardingStore(InMemoryStore())
        yield store
        await store.close()
