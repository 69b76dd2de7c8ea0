"""A queue drained while Worker processes are killed at random, on every durable store.

Two Worker processes drain a batch of three-call Runs while a killer SIGKILLs one of
them every few hundred milliseconds and starts a replacement. Whatever the moment of
each kill, afterwards every Run must have settled completed, every log must fold, and
no non-idempotent call may have run twice: a call interrupted by a kill is closed
``unknown`` by the next Attempt, never executed again. The tool writes one marker file
per execution (``call.<run>.<call>.<pid>``), so double execution is seen directly.
"""

import asyncio
import random
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path

import pytest

import psych_runtime
from psych_runtime.records import ToolCallFinished
from psych_runtime.records import ToolCallStarted
from tests.support.worker_process import spawn_worker

from .conftest import DURABLE

SCOPE = psych_runtime.Scope(tenant="storm")
UrlFor = Callable[[str], Awaitable[str]]

# DynamoDB runs against moto, which answers far more slowly than the SQL servers.
RUNS = {"dynamodb": 12}
DEFAULT_RUNS = 30
KILLS = 6


STORM = {
    "PSYCH_E2E_TURNS": "3",
    "PSYCH_E2E_TOOL_SECONDS": "0.25",
    "PSYCH_E2E_CONCURRENCY": "4",
    # Kills count as attempts; the limit must not be what ends a Run here.
    "PSYCH_E2E_MAX_ATTEMPTS": "100",
}


def _spawn(url: str, markers: Path) -> subprocess.Popen[str]:
    return spawn_worker(url, markers, "work", 1.0, env=STORM)


def _executions(markers: Path) -> Counter[tuple[str, str]]:
    counts: Counter[tuple[str, str]] = Counter()
    for marker in markers.glob("call.*"):
        _, run_id, call_id, _pid = marker.name.split(".")
        counts[run_id, call_id] += 1
    return counts


def _inside_a_call(markers: Path, workers: list[subprocess.Popen[str]]) -> list[int]:
    """The indexes of the live Workers that have started a call and not returned from it."""
    live = {process.pid: index for index, process in enumerate(workers)}
    inside = set()
    for marker in markers.glob("call.*"):
        pid = int(marker.name.rsplit(".", 1)[1])
        if pid in live and not (markers / ("done." + marker.name[len("call.") :])).exists():
            inside.add(live[pid])
    return sorted(inside)


async def _settled(store: psych_runtime.Store, run_id: psych_runtime.RunId) -> bool:
    return (await psych_runtime.state(store, run_id, scope=SCOPE)).settled


@pytest.mark.parametrize("kind", DURABLE)
async def test_random_kills_during_a_drain_lose_nothing_and_repeat_no_call(
    kind: str, store_url_for: UrlFor, tmp_path: Path
) -> None:
    chooser = random.Random(f"storm-{kind}")
    url = await store_url_for(kind)
    store = await psych_runtime.open_store(url)
    spec = psych_runtime.AgentSpec(
        name="pay",
        model=psych_runtime.ModelRef(model="fake-standard"),
        tools=(psych_runtime.CodeTool(name="charge"),),
        limits=psych_runtime.Limits(max_turns=16),
    )
    version = await psych_runtime.publish(store, spec, scope=SCOPE)
    ids = [
        (await psych_runtime.dispatch(store, version, f"order {i}", scope=SCOPE)).run_id
        for i in range(RUNS.get(kind, DEFAULT_RUNS))
    ]
    workers = [_spawn(url, tmp_path) for _ in range(2)]
    pending = list(ids)

    async def still_pending() -> list[psych_runtime.RunId]:
        return [run_id for run_id in pending if not await _settled(store, run_id)]

    try:
        async with asyncio.timeout(240):
            kills = 0
            looked = time.monotonic()
            while kills < KILLS and pending:
                await asyncio.sleep(chooser.uniform(0.0, 0.02))
                # Only a Worker still inside a call is killed, and nothing runs between
                # the look and the kill, so every kill lands in the middle of work: the
                # call's finish cannot be in the log yet.
                busy = _inside_a_call(tmp_path, workers)
                if busy:
                    victim = workers.pop(chooser.choice(busy))
                    victim.send_signal(signal.SIGKILL)
                    victim.communicate()
                    kills += 1
                    workers.append(await asyncio.to_thread(_spawn, url, tmp_path))
                if time.monotonic() - looked > 0.2:
                    pending = await still_pending()
                    looked = time.monotonic()
            while pending:
                await asyncio.sleep(0.05)
                pending = await still_pending()
    finally:
        for process in workers:
            process.kill()
            process.communicate()

    executions = _executions(tmp_path)
    reclaimed = 0
    unknown = 0
    for run_id in ids:
        log = await store.read(run_id)
        state = psych_runtime.records.reduce(log)  # raises CorruptLog on a broken log
        assert state.settled
        assert log[-1].state is psych_runtime.TerminalState.COMPLETED  # type: ignore[union-attr]
        started = {r.call_id for r in log if isinstance(r, ToolCallStarted)}
        finished = {r.call_id: r.outcome for r in log if isinstance(r, ToolCallFinished)}
        assert started == set(finished), run_id
        for call_id in started:
            count = executions[run_id, call_id]
            assert count <= 1, f"{run_id} {call_id} ran {count} times"
            if finished[call_id] is psych_runtime.ToolOutcome.OK:
                assert count == 1, f"{run_id} {call_id} reported ok without running"
            else:
                assert finished[call_id] is psych_runtime.ToolOutcome.UNKNOWN
                unknown += 1
        ran_here = {call for (run, call) in executions if run == run_id}
        assert ran_here <= started, f"{run_id}: a call ran that its log never started"
        reclaimed += sum(1 for r in log if r.type == "attempt_started") > 1
    await store.close()
    # The kills landed mid-call: some Runs were reclaimed and some calls closed unknown.
    assert reclaimed > 0
    assert unknown > 0
