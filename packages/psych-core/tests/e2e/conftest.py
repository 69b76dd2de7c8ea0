"""Shared helpers for end-to-end tests: a Runtime, fast Workers, and waiting."""

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from psych_runtime import RunId, Runtime, Scope, Store, ToolRegistry, Worker
from psych_runtime.models import ModelClient, PriceResolver
from psych_runtime.records import Record

ACME = Scope(tenant="acme")

FAST = {
    "lease_seconds": 0.6,
    "heartbeat_seconds": 0.15,
    "poll_interval": 0.05,
    "supervisor_interval": 0.05,
    "grace_seconds": 0.3,
}


def registry_of(*tools: Callable[..., Any], idempotent: tuple[str, ...] = ()) -> ToolRegistry:
    registry = ToolRegistry()
    for tool in tools:
        registry.register(tool, idempotent=tool.__name__ in idempotent)
    return registry


@asynccontextmanager
async def running_worker(
    store: Store,
    model: ModelClient,
    registry: ToolRegistry,
    *,
    prices: PriceResolver | None = None,
    **options: Any,
) -> AsyncIterator[Worker]:
    settings = {**FAST, **options}
    runtime = Runtime(store, model, registry, retry_base_seconds=0.01, prices=prices)
    worker = Worker(store, runtime, **settings)
    task = asyncio.create_task(worker.run())
    try:
        yield worker
    finally:
        if not worker._killed:
            worker.request_stop()
        await asyncio.gather(task, return_exceptions=True)


async def settled_log(store: Store, run_id: RunId, timeout: float = 10.0) -> list[Record]:
    """Wait until the Run's last record is run_settled and return the whole log."""
    async with asyncio.timeout(timeout):
        while True:
            log = await store.read(run_id)
            if log and log[-1].type == "run_settled":
                return log
            await asyncio.sleep(0.01)


def types(log: list[Record]) -> list[str]:
    return [r.type for r in log]
