"""Work budgets for the hot path: counts that a change adding work to every turn breaks.

Timings are noisy on shared machines, but on the scripted workload of
``docs/benchmarks.md`` (one code tool, a scripted model, K tool turns, one Worker in
this process) these counts are the same on every run:

- Python function calls made in ``psych_runtime`` modules, under ``cProfile``, for a
  Run of K=10 tool turns and per tool turn (the K=10 Run minus a K=0 Run, over 10);
- Store port calls per K=10 Run (in memory, SQLite, PostgreSQL), counted by a
  forwarding store;
- statements and commits per K=10 Run on SQLite and PostgreSQL, counted on the
  connections themselves through each adapter's ``_init_connection`` seam;
- records appended per tool turn.

Each budget sits just above today's figure. When one fails, the message names the count,
the budget and the figure: find what added the work (``hatch run bench`` and a profile of
the workload show where), and either remove it or raise the budget in the same commit as
the change that needs it, saying why in the commit message. When a change lowers a
figure, lower its budget too, so the gain is kept. ``docs/benchmarks.md`` says more.

The Worker runs with ``concurrency=2`` and a long poll interval on purpose: after it
claims the Run it claims once more, finds nothing and waits for work, so exactly one
empty claim falls in each Run, and no timer fires while the Run executes.
"""

import asyncio
import contextlib
import cProfile
import gc
import os
import pstats
import sqlite3
from collections import Counter
from collections.abc import AsyncIterator
from collections.abc import Callable
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import pytest

import psych_runtime
from benchmarks.run import ScriptModel
from benchmarks.run import lookup
from benchmarks.run import spec
from psych_runtime import RunId
from psych_runtime import Store
from psych_runtime.runtime import interrupt_watch
from psych_runtime.testing import ForwardingStore
from tests.support.scratch_stores import scratch_store_url

K = 10
"""Tool turns in the measured Run (and one answering model call after them)."""

PROFILED_MODULES = str(Path(psych_runtime.__file__).parent) + os.sep
"""Only calls into the runtime's own modules are counted: asyncio's and the drivers'
calls depend on scheduling and on what the event loop had queued, ours do not."""

# --- the budgets --------------------------------------------------------------------------
# Function calls have about 1.5 % of headroom and fail only above their budget. Store
# calls, statements, commits and records are exact: each is a round trip or a row, so a
# change in either direction fails, and a gain is kept by lowering the figure here.

CALLS_PER_RUN = 3500
"""Function calls in ``psych_runtime`` modules for the K=10 Run (3449 measured)."""
CALLS_PER_TOOL_TURN = 310
"""Function calls per tool turn: (K=10 Run - K=0 Run) / 10 (305.8 measured)."""

STORE_CALLS: dict[str, dict[str, int]] = {
    "memory": {
        "append": 22,
        "claim": 1,
        "claim_empty": 1,
        "create_run": 1,
        "read": 1,
        "release": 1,
    },
    "sqlite": {
        "append": 22,
        "claim": 1,
        "claim_empty": 1,
        "create_run": 1,
        "read": 13,
        "release": 1,
    },
    "postgres": {
        "append": 22,
        "claim": 1,
        "claim_empty": 1,
        "create_run": 1,
        "read": 1,
        "release": 1,
    },
}
"""Store port calls per K=10 Run, by method, dispatch included."""

STATEMENTS: dict[str, dict[str, int]] = {
    # Every write is one BEGIN IMMEDIATE .. COMMIT; reads are single statements.
    "sqlite": {"begin": 26, "commit": 26, "insert": 57, "select": 35, "update": 25},
    # Each store call is one statement in its own transaction, named here by the
    # store's query it ran; every one but ``read`` commits a write.
    "postgres": {"append": 22, "claim": 2, "create_run": 1, "read": 1, "release": 1},
}
"""Statements per K=10 Run on the connections of each SQL store."""

COMMITS = {"sqlite": 26, "postgres": 26}
"""Write transactions per K=10 Run (the empty claim's included)."""
POSTGRES_BACKGROUND = frozenset({"running_holders"})
"""Statements the PostgreSQL store sends on a timer of its own (the peers it watches for
dead sessions), not for any Run: left out of the counts."""
POSTGRES_WRITES = frozenset({"append", "claim", "create_run", "release", "renew", "put_version"})

RECORDS_PER_RUN = 56
RECORDS_PER_TOOL_TURN = 5
APPENDS_PER_TOOL_TURN = 2


WORKER = psych_runtime.WorkerSettings(
    concurrency=2, poll_interval=3600.0, supervisor_interval=3600.0
)

PORT_CALLS = (
    "append",
    "read",
    "head",
    "put_version",
    "get_version",
    "create_run",
    "get_run",
    "claim",
    "renew",
    "release",
    "settle_inline",
    "set_runnable_at",
    "expired_leases",
    "overdue_deadlines",
)


class CountingStore(ForwardingStore):
    """Counts every Store port call by name; an empty claim is counted as ``claim_empty``."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.calls: Counter[str] = Counter()
        self.counting = False


def _counted(name: str) -> Callable[..., Any]:
    forward = getattr(ForwardingStore, name)

    async def call(self: CountingStore, *args: Any, **kwargs: Any) -> Any:
        result = await forward(self, *args, **kwargs)
        if self.counting:
            self.calls[name if name != "claim" or result is not None else "claim_empty"] += 1
        return result

    return call


for _name in PORT_CALLS:
    setattr(CountingStore, _name, _counted(_name))


@dataclass
class Statements:
    """Statements seen on a store's connections, by name (see each store's counter)."""

    seen: list[str] = field(default_factory=list)
    counting: bool = False

    def add(self, name: str) -> None:
        if self.counting:
            self.seen.append(name)  # list.append is atomic; SQLite calls from its threads


def _sqlite_store(url: str, statements: Statements) -> Store:
    from psych_store_sqlite import SqliteStore

    class TracedSqliteStore(SqliteStore):
        def _init_connection(self, conn: sqlite3.Connection) -> None:
            def trace(sql: str) -> None:
                word = sql.split(None, 1)[0].upper()
                statements.add("commit" if word == "COMMIT" else word.lower())

            conn.set_trace_callback(trace)

    # Reads run on the writer's connection too, so which reader thread picks up a read
    # (and opens its connection, checking the schema) cannot change the counts.
    return TracedSqliteStore(url, readers=0)


def _postgres_store(url: str, statements: Statements) -> Store:
    from psych_store_postgres import PostgresStore

    class LoggedPostgresStore(PostgresStore):
        async def _init_connection(self, conn: Any) -> None:
            await super()._init_connection(conn)
            names = {text: name for name, text in asdict(self._queries).items()}

            def logged(query: Any) -> None:
                name = names.get(query.query, "other")
                if name not in POSTGRES_BACKGROUND:
                    statements.add(name)

            conn.add_query_logger(logged)

    return LoggedPostgresStore(url)


@contextlib.asynccontextmanager
async def watcher_asleep() -> AsyncIterator[None]:
    """Keep each Attempt's interrupt watcher asleep for the whole Run.

    The watcher wakes a fixed time into an Attempt to look for an interrupt written by
    another process; whether a Run is still going by then depends on the machine's
    speed, not on the work a turn does, so its calls are kept out of the counts.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(interrupt_watch, "ARM_AFTER_SECONDS", 3600.0)
        yield


async def _attempt_ended(worker: psych_runtime.Worker, run_id: RunId, seen: int) -> None:
    ended = worker.attempts_ended
    async with asyncio.timeout(60):
        while ended.generation(run_id) == seen:
            await ended.wait(run_id, seen, 1.0)


@dataclass
class Measured:
    """What one K-turn Run cost."""

    calls: int = 0
    store_calls: dict[str, int] = field(default_factory=dict)
    statements: dict[str, int] = field(default_factory=dict)
    records: int = 0
    record_types: dict[str, int] = field(default_factory=dict)


async def measure(kind: str, k: int, *, profile: bool = False) -> Measured:
    """Run a warm-up Run, then one K-turn Run under the counters; return the counts."""
    url, cleanup = await scratch_store_url(kind)
    statements = Statements()
    if kind == "sqlite":
        inner = _sqlite_store(url, statements)
    elif kind == "postgres":
        inner = _postgres_store(url, statements)
    else:
        inner = await psych_runtime.open_store(url)
    store = CountingStore(inner)
    try:
        async with (
            watcher_asleep(),
            psych_runtime.session(ScriptModel(k), tools=[lookup], store=store, worker=WORKER) as s,
        ):
            version = await s.publish(spec())
            measured = Measured()
            for counted in (False, True):
                profiler = cProfile.Profile() if counted and profile else None
                if counted:
                    # Weak-reference callbacks and finalisers run when the collector
                    # happens to run, which depends on what earlier tests left behind.
                    gc.collect()
                    gc.disable()
                store.counting = statements.counting = counted
                if profiler is not None:
                    profiler.enable()
                try:
                    dispatched = await s.dispatch(version, "status?")
                    seen = s.worker.attempts_ended.generation(dispatched.run_id)
                    await _attempt_ended(s.worker, dispatched.run_id, seen)
                finally:
                    if profiler is not None:
                        profiler.disable()
                    store.counting = statements.counting = False
                    gc.enable()
            log = await s.read_log(dispatched.run_id)
    finally:
        await store.close()
        await cleanup()
    assert log[-1].type == "run_settled"
    assert log[-1].state is psych_runtime.TerminalState.COMPLETED
    assert sum(1 for r in log if r.type == "tool_call_finished") == k
    measured.store_calls = dict(sorted(store.calls.items()))
    measured.statements = dict(sorted(Counter(statements.seen).items()))
    measured.records = len(log)
    measured.record_types = dict(sorted(Counter(r.type for r in log).items()))
    if profiler is not None:
        stats = pstats.Stats(profiler)
        measured.calls = sum(
            calls
            for (filename, _, _), (_, calls, _, _, _) in stats.stats.items()
            if filename.startswith(PROFILED_MODULES)
        )
    return measured


_measured: dict[tuple[str, int], Measured] = {}


async def measured(kind: str, k: int = K) -> Measured:
    """``measure`` once per module run for each store and K (tests share the figures)."""
    if (kind, k) not in _measured:
        _measured[(kind, k)] = await measure(kind, k, profile=kind == "memory")
    return _measured[(kind, k)]


def _over(what: str, figure: float, budget: float) -> str:
    return (
        f"{what}: {figure} is over the budget of {budget}. Find what added the work "
        "(a profile of this workload shows where), or raise the budget in "
        "tests/e2e/test_budgets.py in the same change, saying why."
    )


def _changed(what: str, figure: object, budget: object) -> str:
    return (
        f"{what}: measured {figure}, budget {budget}. More is work added to every Run; "
        "less is a gain: lower the budget in tests/e2e/test_budgets.py to keep it."
    )


async def test_python_calls_per_tool_turn_stay_within_budget() -> None:
    """Fails when the runtime makes more Python calls per tool turn than budgeted.

    When it fails: profile the workload (``measure("memory", 10, profile=True)``) and
    look for the new per-turn work in ``psych_runtime``; the figure counts only calls
    into the runtime's own modules.
    """
    run = await measured("memory")
    empty = await measured("memory", 0)
    assert run.calls <= CALLS_PER_RUN, _over(
        "function calls per K=10 Run, in memory", run.calls, CALLS_PER_RUN
    )
    per_turn = (run.calls - empty.calls) / K
    assert per_turn <= CALLS_PER_TOOL_TURN, _over(
        "function calls per tool turn, in memory", per_turn, CALLS_PER_TOOL_TURN
    )


@pytest.mark.parametrize("kind", sorted(STORE_CALLS))
async def test_store_calls_per_run_are_exactly_the_budget(kind: str) -> None:
    """Fails when a K=10 Run makes a different number of Store port calls.

    When it fails: the message lists every method's count; a new read or append on the
    hot path shows up as one more per turn (10 or 11 more per Run).
    """
    run = await measured(kind)
    assert run.store_calls == STORE_CALLS[kind], _changed(
        f"Store calls per K=10 Run on {kind}", run.store_calls, STORE_CALLS[kind]
    )


@pytest.mark.parametrize("kind", sorted(STATEMENTS))
async def test_statements_and_commits_per_run_are_exactly_the_budget(kind: str) -> None:
    """Fails when a K=10 Run sends a different number of statements or commits.

    When it fails on SQLite, a query of a store method changed (or a method is called
    more often: the Store calls test says which); on PostgreSQL the statements are
    named by the store's query texts, ``other`` being one the store does not own.
    """
    run = await measured(kind)
    assert run.statements == STATEMENTS[kind], _changed(
        f"statements per K=10 Run on {kind}", run.statements, STATEMENTS[kind]
    )
    if kind == "sqlite":
        commits = run.statements.get("commit", 0)
    else:
        commits = sum(n for name, n in run.statements.items() if name in POSTGRES_WRITES)
    assert commits == COMMITS[kind], _changed(
        f"commits per K=10 Run on {kind}", commits, COMMITS[kind]
    )


async def test_records_and_appends_per_tool_turn_are_exactly_the_budget() -> None:
    """Fails when a tool turn writes a different number of records or appends.

    When it fails: ``record_types`` in the message shows which kind of record changed.
    """
    run = await measured("memory")
    empty = await measured("memory", 0)
    assert run.records == RECORDS_PER_RUN, _changed(
        "records per K=10 Run", (run.records, run.record_types), RECORDS_PER_RUN
    )
    per_turn = (run.records - empty.records) / K
    assert per_turn == RECORDS_PER_TOOL_TURN, _changed(
        "records per tool turn", (per_turn, run.record_types), RECORDS_PER_TOOL_TURN
    )
    appends = (run.store_calls["append"] - empty.store_calls["append"]) / K
    assert appends == APPENDS_PER_TOOL_TURN, _changed(
        "appends per tool turn", appends, APPENDS_PER_TOOL_TURN
    )
