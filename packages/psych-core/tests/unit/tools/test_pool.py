"""The connection pool: its bound, idle expiry, broken connections and closing."""

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable

import pytest

from psych_runtime.tools.pool import ConnectionPool


class FakeConnection:
    opened = 0

    def __init__(self, key: str) -> None:
        FakeConnection.opened += 1
        self.key = key
        self.broken = False
        self.closed = False

    async def close(self) -> None:
        await asyncio.sleep(0)
        self.closed = True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def opener(key: str, opened: list[FakeConnection]) -> Callable[[], Awaitable[FakeConnection]]:
    async def open_() -> FakeConnection:
        connection = FakeConnection(key)
        opened.append(connection)
        return connection

    return open_


async def _use(
    pool: ConnectionPool[str, FakeConnection], key: str, opened: list[FakeConnection]
) -> FakeConnection:
    async with pool.lease(key, opener(key, opened)) as connection:
        return connection


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_one_key_shares_one_connection_and_two_keys_get_two() -> None:
    pool: ConnectionPool[str, FakeConnection] = ConnectionPool(max_connections=4, idle_seconds=60)
    opened: list[FakeConnection] = []
    first = await _use(pool, "acme", opened)
    again = await _use(pool, "acme", opened)
    other = await _use(pool, "globex", opened)
    assert first is again and other is not first
    assert len(opened) == 2 and len(pool) == 2


async def test_the_least_recently_used_connection_goes_past_the_bound() -> None:
    pool: ConnectionPool[str, FakeConnection] = ConnectionPool(max_connections=2, idle_seconds=60)
    opened: list[FakeConnection] = []
    a = await _use(pool, "a", opened)
    b = await _use(pool, "b", opened)
    await _use(pool, "a", opened)  # a is now the most recently used
    c = await _use(pool, "c", opened)
    await _settle()
    assert pool.keys() == ("a", "c")
    assert b.closed and not a.closed and not c.closed
    assert (await _use(pool, "b", opened)) is not b  # reopened
    await pool.close()


async def test_a_connection_in_use_is_closed_only_when_released() -> None:
    pool: ConnectionPool[str, FakeConnection] = ConnectionPool(max_connections=1, idle_seconds=60)
    opened: list[FakeConnection] = []
    async with pool.lease("a", opener("a", opened)) as a:
        await _use(pool, "b", opened)  # evicts a while it is leased
        await _settle()
        assert pool.keys() == ("b",) and not a.closed
    await _settle()
    assert a.closed
    await pool.close()


async def test_idle_connections_are_closed_on_next_use() -> None:
    clock = Clock()
    pool: ConnectionPool[str, FakeConnection] = ConnectionPool(
        max_connections=8, idle_seconds=10, clock=clock
    )
    opened: list[FakeConnection] = []
    a = await _use(pool, "a", opened)
    clock.now = 5
    b = await _use(pool, "b", opened)
    clock.now = 12  # a idle for 12 s, b for 7 s
    assert (await _use(pool, "b", opened)) is b
    await _settle()
    assert a.closed and pool.keys() == ("b",)
    assert (await _use(pool, "a", opened)) is not a


async def test_a_broken_connection_is_dropped_and_opened_again() -> None:
    pool: ConnectionPool[str, FakeConnection] = ConnectionPool(max_connections=8, idle_seconds=60)
    opened: list[FakeConnection] = []
    a = await _use(pool, "a", opened)
    a.broken = True
    fresh = await _use(pool, "a", opened)
    await _settle()
    assert fresh is not a and a.closed and len(opened) == 2
    pool.discard("a", fresh)
    await _settle()
    assert fresh.closed and len(pool) == 0


async def test_callers_of_one_key_at_once_share_one_opening() -> None:
    pool: ConnectionPool[str, FakeConnection] = ConnectionPool(max_connections=8, idle_seconds=60)
    gate = asyncio.Event()
    opened: list[FakeConnection] = []

    async def slow() -> FakeConnection:
        await gate.wait()
        connection = FakeConnection("a")
        opened.append(connection)
        return connection

    async def use() -> FakeConnection:
        async with pool.lease("a", slow) as connection:
            return connection

    tasks = [asyncio.create_task(use()) for _ in range(3)]
    await _settle()
    gate.set()
    first, second, third = await asyncio.gather(*tasks)
    assert first is second is third and len(opened) == 1


async def test_a_failed_opening_is_shared_and_pools_nothing() -> None:
    pool: ConnectionPool[str, FakeConnection] = ConnectionPool(max_connections=8, idle_seconds=60)
    gate = asyncio.Event()

    async def refused() -> FakeConnection:
        await gate.wait()
        raise ConnectionRefusedError("down")

    async def use() -> None:
        async with pool.lease("a", refused):
            pass

    tasks = [asyncio.create_task(use()) for _ in range(2)]
    await _settle()
    gate.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(r, ConnectionRefusedError) for r in results)
    assert len(pool) == 0


async def test_close_closes_everything_and_the_pool_stays_usable() -> None:
    pool: ConnectionPool[str, FakeConnection] = ConnectionPool(max_connections=8, idle_seconds=60)
    opened: list[FakeConnection] = []
    for key in ("a", "b", "c"):
        await _use(pool, key, opened)
    await pool.close()
    assert all(connection.closed for connection in opened) and len(pool) == 0
    assert not (await _use(pool, "a", opened)).closed
    await pool.close()


@pytest.mark.parametrize(("size", "idle"), [(0, 1.0), (1, -1.0)])
def test_limits_are_checked(size: int, idle: float) -> None:
    with pytest.raises(ValueError):
        ConnectionPool(max_connections=size, idle_seconds=idle)
