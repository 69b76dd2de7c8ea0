"""Sizing a deployment: Worker processes against throughput and latency, and a soak.

Run with ``python -m benchmarks.scaling`` (PostgreSQL by default; ``--store sqlite``
works too). Prints JSON lines:

* ``scaling``: for 1, 2, 4 and 8 Worker processes (each with concurrency 8) draining a
  burst of ``--runs`` Runs (default 1,000) of the PERFORMANCE.md workload at K=3 (the
  tool writes a marker file, as the crash tests' does): Runs per second from the first
  dispatch to the last settlement, and the p50 and p99 of each Run's
  dispatch-to-settled time, read from the timestamps of its first and last records.
  Each count is warmed with an unreported burst first. On a machine with fewer cores
  than Worker processes the processes share them: the table shows where adding
  processes stops paying on this machine, not on yours.
* ``soak``: ``--soak`` Runs (default 10,000; 0 skips it) through two Worker processes,
  in batches of 500, sampling each Worker's resident memory (``/proc/PID/status``) and
  the database's connection count after every batch; a fleet that leaks shows a
  growing series.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psych_runtime
from benchmarks.run import NO_MARKERS
from benchmarks.run import SCOPE
from benchmarks.run import _all_settled
from benchmarks.run import _pay_spec
from benchmarks.run import _spawn_worker
from benchmarks.run import _stop
from benchmarks.stores import STORE_FACTORIES
from benchmarks.stores import StoreFactory
from psych_runtime import RunId
from psych_runtime import Store
from psych_runtime import Version
from tests.support.scratch_stores import POSTGRES_DSN

_BATCH = 100
"""Dispatches issued at once, as a burst of request handlers would."""


def _emit(metric: str, store: str, **values: Any) -> None:
    print(json.dumps({"metric": metric, "store": store, **values}), flush=True)


async def _dispatch(store: Store, version: Version, count: int, tag: str) -> list[RunId]:
    ids: list[RunId] = []
    for start in range(0, count, _BATCH):
        admitted = await asyncio.gather(
            *(
                psych_runtime.dispatch(store, version, f"{tag}-{i}", scope=SCOPE)
                for i in range(start, min(count, start + _BATCH))
            )
        )
        ids += [a.run_id for a in admitted]
    return ids


async def _latencies_ms(store: Store, ids: Sequence[RunId]) -> list[float]:
    """Dispatch-to-settled of each Run, from its first and last records' timestamps."""
    found = []
    for run_id in ids:
        head = await store.head(run_id)
        [first] = await store.read(run_id, limit=1)
        [last] = await store.read(run_id, after=head - 1)
        found.append((last.at - first.at).total_seconds() * 1000)
    return found


def _percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))], 2)


async def bench_scaling(factory: StoreFactory, runs: int, counts: Sequence[int]) -> None:
    """Throughput and latency of a burst of ``runs`` for each number of Worker processes."""
    with tempfile.TemporaryDirectory() as folder:
        for processes in counts:
            async with factory() as store:
                version = await psych_runtime.publish(store, _pay_spec(), scope=SCOPE)
                workers = [
                    _spawn_worker(factory.url, Path(folder), hang=False, turns=3, env=NO_MARKERS)
                    for _ in range(processes)
                ]
                try:
                    warm = await _dispatch(store, version, 20 * processes, "warm")
                    await _all_settled(store, warm, 300)
                    started = time.perf_counter()
                    ids = await _dispatch(store, version, runs, "burst")
                    await _all_settled(store, ids, 1800)
                    elapsed = time.perf_counter() - started
                finally:
                    _stop(workers)
                latencies = await _latencies_ms(store, ids)
            _emit(
                "scaling",
                factory.kind,
                worker_processes=processes,
                concurrency_each=8,
                runs=runs,
                k=3,
                seconds=round(elapsed, 3),
                runs_per_second=round(runs / elapsed, 1),
                p50_dispatch_to_settled_ms=_percentile(latencies, 0.5),
                p99_dispatch_to_settled_ms=_percentile(latencies, 0.99),
            )


def _rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


async def _connections(factory: StoreFactory) -> int | None:
    if factory.kind != "postgres":
        return None
    import asyncpg

    connection = await asyncpg.connect(POSTGRES_DSN)
    try:
        count = await connection.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        )
    finally:
        await connection.close()
    return int(count)


async def bench_soak(factory: StoreFactory, total: int) -> None:
    """``total`` Runs through two Worker processes, with memory and connections sampled."""
    batch = 500
    with tempfile.TemporaryDirectory() as folder:
        async with factory() as store:
            version = await psych_runtime.publish(store, _pay_spec(), scope=SCOPE)
            workers = [
                _spawn_worker(factory.url, Path(folder), hang=False, turns=3, env=NO_MARKERS)
                for _ in range(2)
            ]
            samples: list[dict[str, Any]] = []
            started = time.perf_counter()
            try:
                for done in range(batch, total + 1, batch):
                    ids = await _dispatch(store, version, batch, f"soak{done}")
                    await _all_settled(store, ids, 600)
                    sample = {
                        "runs": done,
                        "rss_kib": [_rss_kib(w.pid) for w in workers],
                        "connections": await _connections(factory),
                    }
                    samples.append(sample)
                    _emit("soak_sample", factory.kind, **sample)
            finally:
                _stop(workers)
            elapsed = time.perf_counter() - started
    first, last = samples[0], samples[-1]
    growth = [(b or 0) - (a or 0) for a, b in zip(first["rss_kib"], last["rss_kib"], strict=True)]
    _emit(
        "soak",
        factory.kind,
        runs=total,
        worker_processes=2,
        seconds=round(elapsed, 1),
        runs_per_second=round(total / elapsed, 1),
        rss_growth_kib_after_first_batch=growth,
        connections_first_last=[first["connections"], last["connections"]],
        rss_kib_median=statistics.median(v or 0 for s in samples for v in s["rss_kib"]),
    )


async def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--store", default="postgres", choices=["postgres", "sqlite", "mysql"])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--workers", default="1,2,4,8", help="comma-separated process counts")
    parser.add_argument("--soak", type=int, default=10_000, help="Runs in the soak; 0 skips")
    args = parser.parse_args(argv)
    factory = STORE_FACTORIES[args.store]
    if not await factory.available():
        _emit("skipped", args.store, reason=factory.unavailable_reason)
        return
    counts = [int(n) for n in args.workers.split(",") if n]
    await bench_scaling(factory, args.runs, counts)
    if args.soak:
        await bench_soak(factory, args.soak)


if __name__ == "__main__":
    asyncio.run(main())
