"""Stores for the cross-package scenarios: every adapter, against its real backend.

Each store is addressed by URL so subprocesses can open the same one. PostgreSQL and
MariaDB must be running (``tools/services.py`` starts them). Every test gets its own
SQLite file, PostgreSQL schema or MySQL table prefix, removed afterwards.
"""

from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable

import pytest

from tests.support.scratch_stores import ALL_KINDS
from tests.support.scratch_stores import DURABLE_KINDS
from tests.support.scratch_stores import Cleanup
from tests.support.scratch_stores import scratch_store_url

DURABLE = list(DURABLE_KINDS)
EVERY = list(ALL_KINDS)


@pytest.fixture
async def store_url_for() -> AsyncIterator[Callable[[str], Awaitable[str]]]:
    """A factory: ``await store_url_for(kind)`` gives a fresh, migrated store URL."""
    cleanups: list[Cleanup] = []

    async def make(kind: str) -> str:
        url, cleanup = await scratch_store_url(kind)
        cleanups.append(cleanup)
        return url

    yield make
    for cleanup in cleanups:
        await cleanup()
