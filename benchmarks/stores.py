"""The stores the benchmarks run against: a fresh, empty store per benchmark."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import psych_runtime
from psych_runtime import Store
from tests.support.scratch_stores import ALL_KINDS
from tests.support.scratch_stores import POSTGRES_DSN
from tests.support.scratch_stores import scratch_store_url


class StoreFactory:
    """Opens a fresh store of one kind; says why when its backend is unreachable."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.unavailable_reason = ""
        self.url = ""

    async def available(self) -> bool:
        try:
            async with self():
                return True
        except Exception as error:
            self.unavailable_reason = f"{type(error).__name__}: {error}"
            return False

    @contextlib.asynccontextmanager
    async def __call__(self) -> AsyncIterator[Store]:
        url, cleanup = await scratch_store_url(self.kind)
        self.url = url
        store = await psych_runtime.open_store(url)
        try:
            yield store
        finally:
            await store.close()
            await cleanup()

    async def stored_bytes(self) -> int | None:
        """Bytes the backend holds for the current store (tables and indexes), if known.

        Compare two readings around a number of Runs: the difference is what those Runs
        cost, free of the fixed-size pages every table starts with.
        """
        if self.kind != "postgres" or "schema=" not in self.url:
            return None
        import asyncpg

        schema = self.url.split("schema=", 1)[1].split("&", 1)[0]
        connection = await asyncpg.connect(POSTGRES_DSN)
        try:
            total = await connection.fetchval(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = $1 AND c.relkind = 'r' "
                "AND c.relname IN ('psych_runs', 'psych_records')",
                schema,
            )
        finally:
            await connection.close()
        return int(total)


STORE_FACTORIES: dict[str, StoreFactory] = {kind: StoreFactory(kind) for kind in ALL_KINDS}
