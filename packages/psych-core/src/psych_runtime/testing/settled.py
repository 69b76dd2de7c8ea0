"""``settled_log``: wait for a Run to end and read its log, for tests that drive Workers."""

import asyncio

from psych_runtime.core.ids import RunId
from psych_runtime.core.records import Record
from psych_runtime.store.port import Store


async def settled_log(store: Store, run_id: RunId, timeout: float = 10.0) -> list[Record]:
    """The Run's whole log, read once its last record is ``run_settled``.

    Polls the store every hundredth of a second rather than waiting on its notifier,
    so it works the same over every store, notifier or not.

    Raises:
        TimeoutError: the Run has not settled within ``timeout`` seconds.
    """
    async with asyncio.timeout(timeout):
        while True:
            log = await store.read(run_id)
            if log and log[-1].type == "run_settled":
                return log
            await asyncio.sleep(0.01)


__all__ = ["settled_log"]
