"""Crash injection: kill an Attempt at a chosen record, then watch a second Worker recover.

``crash_and_recover`` runs a Run on one Worker until a chosen record is about to be
written, kills that Attempt as a process death would (nothing released, nothing
written, the lease left to expire), then lets a second Worker reclaim the Run and
finish it. It returns the log as the crash left it and the log as recovery finished
it, so a test can assert on exactly what recovery did, with no network and no real
process kill.
"""

import asyncio
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

from psych_runtime.core.ids import RunId
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import Record
from psych_runtime.core.scope import Scope
from psych_runtime.core.version import Version
from psych_runtime.model.port import ModelClient
from psych_runtime.runtime.admission import dispatch
from psych_runtime.runtime.attempt import AttemptKilled
from psych_runtime.runtime.reads import read_log as read_records
from psych_runtime.runtime.runtime import Runtime
from psych_runtime.runtime.worker import Worker
from psych_runtime.store.port import Store
from psych_runtime.testing.forwarding import ForwardingStore
from psych_runtime.tools.registry import ToolRegistry


class CrashingStore(ForwardingStore):
    """A Store wrapper that kills the writer just before a chosen record is written.

    Args:
        inner: the real store; everything else is passed through unchanged.
        before: the record ``type`` to die in front of.
        occurrence: which occurrence of that type (1 = the first one written).
    """

    def __init__(self, inner: Store, *, before: str, occurrence: int = 1) -> None:
        super().__init__(inner)
        self.before = before
        self.occurrence = occurrence
        self.crashed = asyncio.Event()
        self._seen = 0

    async def before_append(self, run_id: RunId, records: Sequence[Record]) -> None:
        """Die instead of writing a batch that holds the chosen record."""
        if not self.crashed.is_set():
            for record in records:
                if record.type == self.before:
                    self._seen += 1
                    if self._seen == self.occurrence:
                        self.crashed.set()
                        raise AttemptKilled(f"simulated crash before {self.before}")

    async def close(self) -> None:
        """Leave the inner store open: it belongs to the caller."""


@dataclass(frozen=True)
class CrashRecovery:
    """What ``crash_and_recover`` observed.

    Attributes:
        run_id: the Run.
        crashed_log: the log as the killed Attempt left it.
        final_log: the log after the second Worker finished the Run.
    """

    run_id: RunId
    crashed_log: list[Record]
    final_log: list[Record]

    @property
    def recovered_records(self) -> list[Record]:
        """The records the recovering Worker wrote."""
        return self.final_log[len(self.crashed_log) :]


async def _until_settled(store: Store, run_id: RunId, timeout: float) -> None:
    async with asyncio.timeout(timeout):
        while True:
            log = await store.read(run_id, after=max(await store.head(run_id) - 1, 0))
            if log and log[-1].type == "run_settled":
                return
            await asyncio.sleep(0.01)


async def crash_and_recover(
    store: Store,
    model: ModelClient,
    registry: ToolRegistry,
    version: Version,
    message: str | None = None,
    *,
    input: JsonObject | None = None,
    scope: Scope,
    crash_before: str = "tool_call_finished",
    occurrence: int = 1,
    lease_seconds: float = 0.3,
    timeout: float = 30.0,
    runtime_for: Callable[[Store], Runtime] | None = None,
) -> CrashRecovery:
    """Run a Run until ``crash_before`` is about to be written, kill it, recover it.

    The first Worker writes through a ``CrashingStore`` and is killed the moment the
    chosen record would be appended; the Run's lease then expires on its own, and a
    second Worker on the real store reclaims it and runs it to settlement.

    ``runtime_for`` builds each Worker's ``Runtime`` over the store it is given (the
    crashing wrapper, then the real store); pass it when the Run needs more than a
    model and a registry (``prices``, ``blob``, ``http``, ``secrets``...), so it sees
    the same configuration before and after the crash.

    Raises:
        TimeoutError: the crash point was never reached, or recovery did not settle
            the Run, within ``timeout`` seconds.
    """
    await store.put_version(version, tenant=scope.tenant)
    dispatched = await dispatch(store, version, message, input=input, scope=scope)
    run_id = dispatched.run_id
    crashing = CrashingStore(store, before=crash_before, occurrence=occurrence)

    def worker(on: Store) -> Worker:
        return Worker(
            on,
            runtime_for(on) if runtime_for is not None else Runtime(on, model, registry),
            lease_seconds=lease_seconds,
            heartbeat_seconds=lease_seconds / 3,
            poll_interval=lease_seconds / 3,
            supervisor_interval=lease_seconds,
        )

    first = worker(crashing)
    first_task = asyncio.create_task(first.run())
    try:
        async with asyncio.timeout(timeout):
            await crashing.crashed.wait()
    finally:
        await first.kill()
        first_task.cancel()
        await asyncio.gather(first_task, return_exceptions=True)
    crashed_log = await read_records(store, run_id)
    second = worker(store)
    second_task = asyncio.create_task(second.run())
    try:
        await _until_settled(store, run_id, timeout)
    finally:
        second.request_stop()
        await second_task
    final_log = await read_records(store, run_id)
    return CrashRecovery(run_id=run_id, crashed_log=crashed_log, final_log=final_log)
