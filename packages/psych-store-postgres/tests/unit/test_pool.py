"""The store's own connection pool, driven with stand-in connections (no server needed).

The pool only ever asks a connection whether it is closed and tells it to close or
terminate, so a small object with those three methods stands in for asyncpg's.
"""

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

import pytest

from psych_store_postgres import _connection
from psych_store_postgres._connection import GuardedPool
from psych_store_postgres._connection import PoolClosed


class Conn:
    def __init__(self, number: int) -> None:
        self.number = number
        self.closed = False

    def is_closed(self) -> bool:
        return self.closed

    def terminate(self) -> None:
        self.closed = True

    async def close(self, timeout: float | None = None) -> None:
        self.closed = True

    async def fetchval(self, query: str, *args: Any) -> Any:
        if query == "broken":
            self.closed = True
            raise ConnectionResetError("the server went away")
        if query == "wrong":
            raise ValueError("a plain error: the connection itself is fine")
        await asyncio.sleep(float(args[0]) if args else 0)
        return self.number


class Refused(Exception):
    """An opening that failed (not an ``OSError``: a timeout is one of those)."""


class Opener:
    def __init__(self) -> None:
        self.made: list[Conn] = []
        self.fail_next = False

    async def __call__(self) -> Any:
        await asyncio.sleep(0)
        if self.fail_next:
            self.fail_next = False
            raise Refused("connection refused")
        conn = Conn(len(self.made))
        self.made.append(conn)
        return conn


def _pool(*, min_size: int = 0, max_size: int = 1) -> tuple[Opener, GuardedPool]:
    """A pool of stand-in connections, and the opener that makes them."""
    opener = Opener()
    return opener, GuardedPool(opener, min_size=min_size, max_size=max_size)


async def _started(pool: GuardedPool, *args: object) -> asyncio.Task[Any]:
    """A ``fetchval("q", *args)`` call that holds a connection, or waits for one, by now."""
    call = asyncio.create_task(pool.fetchval("q", *args))
    await asyncio.sleep(0.01)
    return call


def _slow(opener: Opener, seconds: float) -> Callable[[], Awaitable[Any]]:
    """``opener``, taking ``seconds`` longer to open each connection."""

    async def open_slowly() -> Any:
        await asyncio.sleep(seconds)
        return await opener()

    return open_slowly


async def test_start_opens_min_size_and_calls_reuse_the_most_recent_connection() -> None:
    opener, pool = _pool(min_size=2, max_size=4)
    await pool.start()
    assert (pool.size, pool.idle) == (2, 2)
    first = await pool.fetchval("q")
    assert await pool.fetchval("q") == first
    assert len(opener.made) == 2
    await pool.close()
    assert all(conn.closed for conn in opener.made)


async def test_never_more_than_max_size_and_waiters_are_served_in_order() -> None:
    opener, pool = _pool(max_size=2)
    order: list[int] = []

    async def call(i: int) -> None:
        await pool.fetchval("q", 0.01)
        order.append(i)

    async with asyncio.timeout(5):  # a lost wake-up would hang here
        await asyncio.gather(*(call(i) for i in range(7)))
    assert len(opener.made) == 2
    assert pool.size == 2
    assert sorted(order) == list(range(7))
    await pool.close()


async def test_a_broken_connection_is_dropped_and_its_slot_goes_to_a_waiter() -> None:
    opener, pool = _pool()
    holder = await _started(pool, 0.05)
    with pytest.raises(ConnectionResetError):
        await asyncio.gather(pool.fetchval("broken"), holder)
    # The waiter behind the broken call got a fresh connection, not the broken one.
    assert await pool.fetchval("q") == 1
    assert opener.made[0].closed
    assert pool.size == 1
    await pool.close()


async def test_a_plain_error_keeps_the_connection() -> None:
    opener, pool = _pool()
    with pytest.raises(ValueError):
        await pool.fetchval("wrong")
    assert await pool.fetchval("q") == 0
    assert not opener.made[0].closed
    await pool.close()


async def test_a_call_cancelled_mid_reply_closes_its_connection() -> None:
    opener, pool = _pool()
    call = await _started(pool, 10)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert opener.made[0].closed
    assert (pool.size, pool.idle) == (0, 0)
    assert await pool.fetchval("q") == 1
    await pool.close()


async def test_a_waiter_cancelled_while_queued_loses_nothing() -> None:
    _, pool = _pool()
    busy = await _started(pool, 0.05)
    queued = await _started(pool)
    queued.cancel()
    await busy
    with pytest.raises(asyncio.CancelledError):
        await queued
    assert (pool.size, pool.idle) == (1, 1)
    assert await pool.fetchval("q") == 0
    await pool.close()


async def test_a_failed_open_frees_its_slot_for_the_next_caller() -> None:
    opener, pool = _pool()
    opener.fail_next = True
    # The failure reaches the caller; it must not be left waiting for ever.
    with pytest.raises(Refused):
        async with asyncio.timeout(5):
            await pool.fetchval("q")
    assert pool.size == 0
    assert await pool.fetchval("q") == 0
    await pool.close()


async def test_close_waits_for_lent_connections_and_refuses_waiters() -> None:
    opener, pool = _pool()
    lent = await _started(pool, 0.05)
    queued = await _started(pool)
    await pool.close()
    assert lent.done() and await lent == 0
    with pytest.raises(PoolClosed):
        await queued
    assert opener.made[0].closed
    with pytest.raises(PoolClosed):
        await pool.fetchval("q")


async def test_idle_connections_beyond_min_size_age_out(monkeypatch: pytest.MonkeyPatch) -> None:
    _, pool = _pool(min_size=1, max_size=3)
    await asyncio.gather(*(pool.fetchval("q", 0.01) for _ in range(3)))
    assert (pool.size, pool.idle) == (3, 3)
    monkeypatch.setattr(_connection, "IDLE_SECONDS", 0.0)
    await asyncio.sleep(0.01)
    await pool.fetchval("q")  # giving a connection back prunes the stale ones
    assert pool.size == 1
    await pool.close()


async def test_a_caller_takes_a_connection_coming_back_rather_than_wait_for_a_new_one() -> None:
    opener, pool = _pool(min_size=1, max_size=4)
    await pool.start()
    pool._connect = _slow(opener, 0.5)
    loop = asyncio.get_running_loop()
    short = asyncio.create_task(pool.fetchval("q", 0.01))
    await asyncio.sleep(0)
    started = loop.time()
    assert await pool.fetchval("q") == 0  # the connection given back, not a new one
    assert loop.time() - started < 0.3
    await short
    # The connection opened meanwhile is kept for the next burst.
    await asyncio.sleep(0.6)
    assert (pool.size, pool.idle) == (2, 2)
    await pool.close()


async def test_a_waiter_cancelled_just_as_it_is_handed_a_connection_passes_it_on() -> None:
    _, pool = _pool(min_size=1)
    await pool.start()
    async with pool.acquire():
        queued = asyncio.create_task(pool.fetchval("q"))
        await asyncio.sleep(0.01)  # queued behind the lent connection
    # Given back to the waiter, which is cancelled before it could run.
    queued.cancel()
    with pytest.raises(asyncio.CancelledError):
        await queued
    assert (pool.size, pool.idle) == (1, 1)
    assert await pool.fetchval("q") == 0
    await pool.close()


async def test_no_second_connection_is_opened_while_one_is_already_on_its_way() -> None:
    opener, pool = _pool(min_size=1, max_size=4)
    await pool.start()
    pool._connect = _slow(opener, 0.3)
    short = asyncio.create_task(pool.fetchval("q", 0.01))
    await asyncio.sleep(0)
    await pool.fetchval("q", 0.05)  # served by the connection given back; one opening
    await short
    held = asyncio.create_task(pool.fetchval("q", 0.05))
    await asyncio.sleep(0)
    # None idle, but the opening started for the first waiter is still on its way.
    await pool.fetchval("q")
    await held
    await asyncio.sleep(0.4)
    assert pool.size == 2
    await pool.close()
