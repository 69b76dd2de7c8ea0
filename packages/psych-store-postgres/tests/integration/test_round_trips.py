"""Each hot-path call is one statement: one round trip once asyncpg's cache is warm.

asyncpg prepares a statement the first time a connection sees its text and caches it;
from then on every ``fetch``/``fetchval``/``fetchrow``/``execute`` is a single
Bind/Execute/Sync exchange. So counting the store's calls into the pool (after a
warm-up) counts its round trips. A second call per method would mean a read before a
write (a race, besides the latency).
"""

from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

import pytest

from psych_contract import _data as data
from psych_runtime.adapters import Fence
from psych_runtime.adapters import RunState
from psych_runtime.records import WorkerId
from psych_store_postgres import PostgresStore
from psych_store_postgres._connection import GuardedPool

Factory = Callable[..., Awaitable[PostgresStore]]
W = WorkerId("w")


async def test_every_method_is_one_statement(
    make_store: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await make_store(listen=False)
    warm, warm_admitted = data.admission()
    await store.create_run(warm, warm_admitted)  # opens the pool and checks the schema
    pool = await store._ready()
    calls: list[str] = []

    def counting(cls: type, name: str, owner: object) -> Callable[..., Any]:
        original = getattr(cls, name)

        def call(self: object, *args: Any, **kwargs: Any) -> Any:
            if self is owner:
                calls.append(name)
            return original(self, *args, **kwargs)

        return call

    # Each of the pool's statement calls borrows one connection through ``acquire``.
    for name in ("fetch", "fetchrow", "fetchval", "execute", "acquire"):
        monkeypatch.setattr(GuardedPool, name, counting(GuardedPool, name, pool))

    async def count(operation: Awaitable[object]) -> int:
        calls.clear()
        await operation
        statements = [name for name in calls if name != "acquire"]
        # Each pool.fetch* borrows a connection once; an extra borrow would mean a
        # transaction of several statements on a connection of its own.
        assert calls.count("acquire") == len(statements), calls
        return len(statements)

    run, admitted = data.admission()
    assert await count(store.create_run(run, admitted)) == 1
    assert await count(store.create_run(run, admitted)) == 1  # the duplicate path too
    claimed = await store.claim(W, data.at(0), 30)  # opens the liveness lock once
    assert claimed is not None
    fence = Fence(W, claimed.attempt_count)
    assert await count(store.append(claimed.run_id, 2, data.batch(claimed, 2, 1), fence=fence)) == 1
    assert await count(store.append(claimed.run_id, 3, data.batch(claimed, 3, 4), fence=fence)) == 1
    assert await count(store.head(claimed.run_id)) == 1
    assert await count(store.read(claimed.run_id, after=2)) == 1
    assert await count(store.renew(claimed.run_id, W, data.at(1), 30)) == 1
    assert await count(store.release(claimed.run_id, W, RunState.RUNNABLE)) == 1
    assert await count(store.claim(W, data.at(2), 30)) == 1
    assert await count(store.get_run(claimed.run_id)) == 1
    assert await count(store.set_runnable_at(claimed.run_id, None)) == 1
    assert await count(store.expired_leases(data.at(3))) == 1
    assert await count(store.overdue_deadlines(data.at(3))) == 1
