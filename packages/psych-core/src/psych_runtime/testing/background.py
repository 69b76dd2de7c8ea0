"""``worker_in_background``: a Worker that runs for the length of an ``async with`` block."""

import asyncio
from collections.abc import AsyncIterator
from collections.abc import Mapping
from contextlib import asynccontextmanager
from types import MappingProxyType

from psych_runtime.runtime.worker import Worker

FAST_WORKER: Mapping[str, float] = MappingProxyType(
    {
        "lease_seconds": 0.6,
        "heartbeat_seconds": 0.15,
        "poll_interval": 0.05,
        "supervisor_interval": 0.05,
        "grace_seconds": 0.3,
    }
)
"""Worker settings for tests (``Worker(store, runtime, **FAST_WORKER)``).

The lease is short enough that a Run a killed Worker held is reclaimed well within a
second, yet four heartbeats long, so a busy test machine does not lose a live lease.
"""


@asynccontextmanager
async def worker_in_background(worker: Worker) -> AsyncIterator[Worker]:
    """Run ``worker`` as a task while the block runs, then stop it and wait for it.

    A Worker the block killed (``Worker.kill``, a simulated crash) is only waited for:
    asking it to stop would run the shutdown a killed process never gets. Whatever the
    Worker's task raised is swallowed, so a test's own failure is the one reported.
    """
    task = asyncio.create_task(worker.run())
    try:
        yield worker
    finally:
        if not worker._killed:
            worker.request_stop()
        await asyncio.gather(task, return_exceptions=True)


__all__ = ["FAST_WORKER", "worker_in_background"]
