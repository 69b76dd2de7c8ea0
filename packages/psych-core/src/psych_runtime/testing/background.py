"""``worker_in_background``: a Worker that runs for the length of an ``async with`` block."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from psych_runtime.runtime.worker import Worker


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


__all__ = ["worker_in_background"]
