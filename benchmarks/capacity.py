"""What one Run costs each store, the inputs of the capacity model in docs/deploying.md.

Run with ``python -m benchmarks.capacity`` (every reachable durable store) or
``--store postgres --runs 100``. For K=3 and K=10 tool turns of the PERFORMANCE.md
workload, a burst of Runs is dispatched, then drained by one Worker (concurrency 8) in
this process, and one JSON line per store and K reports per Run:

* ``store_calls``: Store port calls by method (``claim_empty`` is a claim that found
  nothing); on PostgreSQL and MariaDB each is one statement in one transaction, and
  every call but ``read``, ``head``, ``get_run`` and ``get_version`` commits a write;
* ``record_json_bytes``: the records' JSON as appended;
* ``stored_bytes``: table and index growth, where the backend says (PostgreSQL);
* ``dispatch_cpu_ms``, ``dispatch_database_cpu_ms``: what admitting the Runs cost
  this process and the server, dispatched one after another before the drain;
* ``worker_cpu_ms``: this process's CPU time during the drain (on SQLite it includes
  the database's own work, which runs on the store's threads in this process);
* ``database_cpu_ms``: the server's CPU time during the drain: PostgreSQL's backends
  serving this benchmark's connections (found by their ``application_name``; the
  server's background writers are left out), MariaDB's whole server process (shared
  with anything else using it at the time); None for DynamoDB (moto stands in for it);
* ``runs_per_second``: this one process's drain rate, CPU-bound here.

The waiter costs nothing: the drain ends when the last Run's lease is released, which
the counting store sees, so no polling read competes with the Worker.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import psych_runtime
from benchmarks.run import SCOPE
from benchmarks.run import ScriptModel
from benchmarks.run import _registry
from benchmarks.run import spec
from benchmarks.stores import StoreFactory
from psych_runtime import RunId
from psych_runtime import Store
from psych_runtime.adapters.store import RunState
from psych_runtime.records import Record
from psych_runtime.records import WorkerId
from psych_runtime.records import record_to_json
from psych_runtime.testing import ForwardingStore
from tests.support.scratch_stores import DURABLE_KINDS
from tests.support.scratch_stores import POSTGRES_DSN
from tests.support.scratch_stores import scratch_store_url

APPLICATION = "psych-capacity"
"""The PostgreSQL ``application_name`` that tells this benchmark's backends apart."""

_TICKS = os.sysconf("SC_CLK_TCK")


class MeteredStore(ForwardingStore):
    """Counts Store calls and appended bytes; wakes the drain when enough Runs settled."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.calls: Counter[str] = Counter()
        self.bytes = 0
        self.released = 0
        self.target = 0
        self.drained = asyncio.Event()

    async def append(
        self, run_id: RunId, expected_seq: int, records: Sequence[Record], **kw: Any
    ) -> None:
        self.calls["append"] += 1
        self.bytes += sum(len(record_to_json(r)) for r in records)
        await super().append(run_id, expected_seq, records, **kw)

    async def read(self, run_id: RunId, **kw: Any) -> list[Record]:
        self.calls["read"] += 1
        return await super().read(run_id, **kw)

    async def head(self, run_id: RunId) -> int:
        self.calls["head"] += 1
        return await super().head(run_id)

    async def claim(
        self, worker_id: WorkerId, now: datetime, lease_seconds: float
    ) -> psych_runtime.adapters.store.RunHeader | None:
        header = await super().claim(worker_id, now, lease_seconds)
        self.calls["claim" if header is not None else "claim_empty"] += 1
        return header

    async def renew(self, *args: Any, **kw: Any) -> bool:
        self.calls["renew"] += 1
        return await super().renew(*args, **kw)

    async def release(self, run_id: RunId, worker_id: WorkerId, state: RunState, **kw: Any) -> None:
        self.calls["release"] += 1
        await super().release(run_id, worker_id, state, **kw)
        self.released += 1
        if self.released >= self.target:
            self.drained.set()

    async def get_run(self, run_id: RunId, **kw: Any) -> Any:
        self.calls["get_run"] += 1
        return await super().get_run(run_id, **kw)

    async def get_version(self, *args: Any, **kw: Any) -> Any:
        self.calls["get_version"] += 1
        return await super().get_version(*args, **kw)

    async def create_run(self, *args: Any, **kw: Any) -> Any:
        self.calls["create_run"] += 1
        return await super().create_run(*args, **kw)

    async def expired_leases(self, *args: Any, **kw: Any) -> Any:
        self.calls["expired_leases"] += 1
        return await super().expired_leases(*args, **kw)

    async def overdue_deadlines(self, *args: Any, **kw: Any) -> Any:
        self.calls["overdue_deadlines"] += 1
        return await super().overdue_deadlines(*args, **kw)


def _cpu_seconds(pid: int) -> float | None:
    """User plus system CPU of a process (all its threads), from ``/proc``."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICKS


async def _postgres_backends() -> dict[int, float]:
    import asyncpg

    connection = await asyncpg.connect(POSTGRES_DSN)
    try:
        rows = await connection.fetch(
            "SELECT pid FROM pg_stat_activity WHERE application_name = $1", APPLICATION
        )
    finally:
        await connection.close()
    found = {int(row[0]): _cpu_seconds(int(row[0])) for row in rows}
    return {pid: cpu for pid, cpu in found.items() if cpu is not None}


def _server_pids(names: Sequence[str]) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() in names:
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


class DatabaseCpu:
    """CPU the database server spends between ``start`` and ``stop``, where measurable."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._before: dict[int, float] = {}

    async def _sample(self) -> dict[int, float] | None:
        if self.kind == "postgres":
            return await _postgres_backends()
        if self.kind == "mysql":
            pids = _server_pids(("mariadbd", "mysqld"))
            found = {pid: _cpu_seconds(pid) for pid in pids}
            return {pid: cpu for pid, cpu in found.items() if cpu is not None}
        return None

    async def start(self) -> None:
        self._before = await self._sample() or {}

    async def stop(self) -> float | None:
        after = await self._sample()
        if after is None:
            return None
        return sum(cpu - self._before.get(pid, 0.0) for pid, cpu in after.items())


async def _stored_bytes(factory: StoreFactory) -> int | None:
    return await factory.stored_bytes()


async def measure(kind: str, k: int, runs: int) -> dict[str, Any]:
    """Dispatch ``runs`` K-turn Runs, drain them with one Worker, report per-Run costs."""
    url, cleanup = await scratch_store_url(kind)
    if kind == "postgres":
        url = f"{url}&application_name={APPLICATION}"
    factory = StoreFactory(kind)
    factory.url = url
    store = MeteredStore(await psych_runtime.open_store(url))
    database = DatabaseCpu(kind)
    try:
        version = await psych_runtime.publish(store, spec(), scope=SCOPE)
        worker = psych_runtime.Worker(
            store,
            psych_runtime.Runtime(store, ScriptModel(k), _registry()),
            concurrency=8,
            poll_interval=0.05,
        )
        task = asyncio.create_task(worker.run())
        # A warm-up burst opens connections and fills caches; it is not counted.
        store.target = 20
        for i in range(20):
            await psych_runtime.dispatch(store, version, f"warm{i}", scope=SCOPE)
        await asyncio.wait_for(store.drained.wait(), 300)
        worker.request_stop()
        await task
        store.calls.clear()
        store.bytes = store.released = 0
        store.drained.clear()
        store.target = runs
        await database.start()
        dispatch_cpu = time.process_time()
        for i in range(runs):
            await psych_runtime.dispatch(store, version, f"q{i}", scope=SCOPE)
        dispatch_cpu = time.process_time() - dispatch_cpu
        dispatch_database_cpu = await database.stop()
        before_bytes = await _stored_bytes(factory)
        worker = psych_runtime.Worker(
            store,
            psych_runtime.Runtime(store, ScriptModel(k), _registry()),
            concurrency=8,
            poll_interval=0.05,
        )
        await database.start()
        cpu = time.process_time()
        started = time.perf_counter()
        task = asyncio.create_task(worker.run())
        await asyncio.wait_for(store.drained.wait(), 600)
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu
        database_cpu = await database.stop()
        worker.request_stop()
        await task
        after_bytes = await _stored_bytes(factory)
    finally:
        await store.close()
        await cleanup()
    return {
        "metric": "run_cost",
        "store": kind,
        "k": k,
        "runs": runs,
        "store_calls": {name: round(n / runs, 2) for name, n in sorted(store.calls.items())},
        "record_json_bytes": round(store.bytes / runs),
        "stored_bytes": None
        if before_bytes is None or after_bytes is None
        else round((after_bytes - before_bytes) / runs),
        "dispatch_cpu_ms": round(dispatch_cpu / runs * 1000, 3),
        "dispatch_database_cpu_ms": None
        if dispatch_database_cpu is None
        else round(dispatch_database_cpu / runs * 1000, 3),
        "worker_cpu_ms": round(cpu / runs * 1000, 3),
        "database_cpu_ms": None if database_cpu is None else round(database_cpu / runs * 1000, 3),
        "runs_per_second": round(runs / elapsed, 1),
    }


async def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--store", action="append", choices=DURABLE_KINDS)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=1, help="report each round's medians")
    args = parser.parse_args(argv)
    os.environ.setdefault("PSYCH_DISABLE_PLUGIN_AUTOLOAD", "0")
    for kind in args.store or DURABLE_KINDS:
        factory = StoreFactory(kind)
        if not await factory.available():
            print(json.dumps({"metric": "skipped", "store": kind}), flush=True)
            continue
        for k in (3, 10):
            rows = [await measure(kind, k, args.runs) for _ in range(args.rounds)]
            row = rows[0]
            for field in (
                "dispatch_cpu_ms",
                "dispatch_database_cpu_ms",
                "worker_cpu_ms",
                "database_cpu_ms",
                "runs_per_second",
            ):
                values = [r[field] for r in rows if r[field] is not None]
                row[field] = round(statistics.median(values), 3) if values else None
            row["rounds"] = args.rounds
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
