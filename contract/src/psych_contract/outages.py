"""Checks an adapter's own tests make of a store whose server drops its connections.

Ending a server session from outside takes an administrator's connection and the
server's own words for it (``pg_terminate_backend``, ``KILL CONNECTION``), which only
the adapter's tests know; what the store must do about it is the same everywhere.
"""

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable

from psych_runtime import RunId
from psych_runtime import Store
from psych_runtime import StoreUnavailable


async def check_ended_sessions_cost_one_call_each(
    store: Store,
    run_id: RunId,
    *,
    sessions: Callable[[], Awaitable[list[int]]],
    end: Callable[[list[int]], Awaitable[object]],
    wait_gone: Callable[[list[int]], Awaitable[None]],
    rounds: int,
    spread: int,
) -> None:
    """Each time the server ends the store's idle session, at most one call fails.

    Round after round the store's sessions are ended while calls go out, the calls
    started from ``0`` to ``spread - 1`` half-milliseconds into the ending so that some
    meet it half way and some find the session already gone. A call may fail with
    ``StoreUnavailable`` (it was on the session that ended), but the pool must hand the
    next one a fresh connection, not the broken one; and some calls must get through.

    Args:
        store: the store under test, with ``run_id`` admitted (its log at seq 1).
        run_id: a Run whose log holds its admission alone.
        sessions: the server's ids of the store's current sessions.
        end: ends those sessions (from another connection).
        wait_gone: returns once the server has finished ending them.
        rounds: how many sessions to end.
        spread: how many different delays to cycle through.
    """
    answered = 0
    for round_number in range(rounds):
        assert await store.head(run_id) == 1  # one open connection, now idle
        ended = await sessions()
        ending = asyncio.ensure_future(end(ended))
        await asyncio.sleep(0.0005 * (round_number % spread))
        failed = 0
        for _ in range(3):
            try:
                assert await store.head(run_id) == 1
                answered += 1
            except StoreUnavailable:
                failed += 1
        await ending
        await wait_gone(ended)
        try:
            await store.head(run_id)
        except StoreUnavailable:
            failed += 1
        assert failed <= 1, f"round {round_number}: {failed} calls failed with one session"
    assert answered > 0


__all__ = ["check_ended_sessions_cost_one_call_each"]
