"""The example store against the whole Store contract, the way any adapter runs it."""

import uuid
from collections.abc import AsyncIterator

import pytest_asyncio
from psych_store_example import ExampleStore

from psych_contract import StoreContract
from psych_runtime import Store


class TestExampleStore(StoreContract):
    supports_notifier = True  # store.notifier is not None and is signalled on commit
    shares_backend = True  # a second ExampleStore on the same name shares the data

    @pytest_asyncio.fixture
    async def store(self) -> AsyncIterator[Store]:
        # A fresh, empty database for every case: a name nobody used.
        store = ExampleStore(f"example://contract-{uuid.uuid4().hex}")
        yield store
        await store.close()

    @pytest_asyncio.fixture
    async def peer_store(self, store: Store) -> AsyncIterator[Store]:
        assert isinstance(store, ExampleStore)
        peer = ExampleStore(store.settings)
        yield peer
        await peer.close()
