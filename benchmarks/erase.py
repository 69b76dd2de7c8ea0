"""What erasing a person and deleting Runs cost, per store. Prints one JSON object per line.

``python -m benchmarks.erase`` (``--facts 1000,10000`` to choose table sizes). Each
store gets a fresh database holding ``facts`` facts of 500 other people and five of
the person erased; ``erase`` then deletes the five and removes their bytes (SQLite cuts
its WAL, PostgreSQL rewrites the facts table, MySQL rebuilds it), so its cost grows
with the table on the server databases. ``delete_runs`` is timed the same way on
settled Runs. Figures are medians of three samples, each on its own database.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from datetime import timedelta

import psych_runtime
from psych_runtime import MemoryKey
from psych_runtime.adapters import RunDeletion
from psych_runtime.adapters import RunState
from psych_runtime.records import WorkerId
from tests.support.scratch_stores import DURABLE_KINDS
from tests.support.scratch_stores import scratch_store_url

SAMPLES = 3
TENANT = "bench"


async def _erase_once(kind: str, facts: int) -> float:
    url, cleanup = await scratch_store_url(kind)
    memory = await psych_runtime.open_memory_store(url, migrate=True)
    try:
        await asyncio.gather(
            *(
                memory.remember(
                    MemoryKey(tenant=TENANT, end_user_id=f"user-{n % 500}"), f"fact {n} " + "x" * 80
                )
                for n in range(facts)
            )
        )
        person = MemoryKey(tenant=TENANT, end_user_id="erased")
        for n in range(5):
            await memory.remember(person, f"erased fact {n}")
        started = time.perf_counter()
        assert await memory.erase(person) == 5
        return (time.perf_counter() - started) * 1000
    finally:
        await memory.close()
        await cleanup()


async def _delete_runs_once(kind: str, runs: int) -> float:
    from benchmarks.run import SCOPE
    from benchmarks.run import spec

    url, cleanup = await scratch_store_url(kind)
    store = await psych_runtime.open_store(url)
    try:
        version = await psych_runtime.publish(store, spec(), scope=SCOPE)
        worker = WorkerId("bench-retention")
        ids = []
        for n in range(runs):
            run = await psych_runtime.dispatch(store, version, f"hello {n}", scope=SCOPE)
            claimed = await store.claim(worker, datetime.now(UTC) + timedelta(hours=1), 30.0)
            assert claimed is not None
            await store.release(claimed.run_id, worker, RunState.SETTLED)
            ids.append(run.run_id)
        assert isinstance(store, RunDeletion)
        started = time.perf_counter()
        deleted = await store.delete_runs(ids[:10], tenant=SCOPE.tenant)
        elapsed = (time.perf_counter() - started) * 1000
        assert len(deleted) == 10
        return elapsed
    finally:
        await store.close()
        await cleanup()


def _emit(metric: str, store: str, **values: object) -> None:
    print(json.dumps({"metric": metric, "store": store, **values}), flush=True)


async def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", default="1000,10000", help="table sizes, comma-separated")
    parser.add_argument("--runs", type=int, default=200, help="settled Runs in the store")
    parser.add_argument("--store", action="append", choices=DURABLE_KINDS)
    args = parser.parse_args(argv)
    for kind in args.store or DURABLE_KINDS:
        for facts in (int(size) for size in args.facts.split(",")):
            samples = [await _erase_once(kind, facts) for _ in range(SAMPLES)]
            _emit(
                "erase_five_facts_ms",
                kind,
                facts_in_table=facts + 5,
                median_ms=round(statistics.median(samples), 1),
            )
        samples = [await _delete_runs_once(kind, args.runs) for _ in range(SAMPLES)]
        _emit(
            "delete_ten_settled_runs_ms",
            kind,
            runs_in_store=args.runs,
            median_ms=round(statistics.median(samples), 1),
        )


if __name__ == "__main__":
    asyncio.run(main())
