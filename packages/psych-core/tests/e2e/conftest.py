"""Shared helpers for end-to-end tests: a Runtime, fast Workers, and waiting."""

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from psych_runtime import Runtime, Scope, Store, ToolRegistry, Worker
from psych_runtime.models import ModelClient, PriceResolver
from psych_runtime.records import Record
from psych_runtime.testing import worker_in_background

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
    runtime = Runtime(store, model, registry, retry_base_seconds=0.01, prices=prices)
    async with worker_in_background(Worker(store, runtime, **{**FAST, **options})) as worker:
        yield worker


def types(log: list[Record]) -> list[str]:
    return [r.type for r in log]
