"""The Worker process: it claims Runs from the store and executes them.

Start as many as the load needs, on any machine that reaches the store::

    python worker.py

It stops on SIGINT or SIGTERM, handing back any Run it holds so another Worker can
finish it.
"""

import asyncio
import signal

import psych_runtime
from psych_runtime.models import ModelClient

from agent import STORE_URL, build_model, registry


def build_worker(store: psych_runtime.Store, model: ModelClient) -> psych_runtime.Worker:
    """A Worker that executes this project's agent on ``store`` with ``model``."""
    runtime = psych_runtime.Runtime(store, model, registry)
    return psych_runtime.Worker(store, runtime, concurrency=4, poll_interval=0.2)


async def main() -> None:
    """Run a Worker until the process is asked to stop."""
    store = await psych_runtime.open_store(STORE_URL, migrate=True)
    worker = build_worker(store, build_model())
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, worker.request_stop)
    print("worker ready", flush=True)
    try:
        await worker.run()
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main())
