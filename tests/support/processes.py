"""Small helpers the cross-process tests share: polling a condition, killing a process."""

import asyncio
import signal
import subprocess
from collections.abc import Awaitable
from collections.abc import Callable


async def wait_for(predicate: Callable[[], Awaitable[bool]], timeout: float) -> None:
    """Poll ``predicate`` every 20 ms until it holds; ``TimeoutError`` after ``timeout``."""
    async with asyncio.timeout(timeout):
        while not await predicate():
            await asyncio.sleep(0.02)


def kill(process: subprocess.Popen[str] | None) -> None:
    """SIGKILL ``process`` if it still runs, and reap it."""
    if process is None:
        return
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    process.communicate()
