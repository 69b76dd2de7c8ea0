"""The same scenarios on every store adapter, through the public API only."""

import asyncio
import signal
import subprocess
import time
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest

import psych_runtime
from psych_runtime.testing import FakeModel
from tests.support.worker_process import spawn_worker

from .conftest import DURABLE
from .conftest import EVERY

ACME = psych_runtime.Scope(tenant="acme")
UrlFor = Callable[[str], Awaitable[str]]


async def lookup(order_id: str) -> dict[str, str]:
    """Look up an order."""
    return {"order_id": order_id, "state": "packed"}


def _spec() -> psych_runtime.AgentSpec:
    return psych_runtime.AgentSpec(
        name="ops",
        instructions="Check orders.",
        model=psych_runtime.ModelRef(model="fake-standard"),
        tools=(psych_runtime.CodeTool(name="lookup"),),
    )


_VOLATILE = {
    "trace_context",  # a fresh trace per Run, minted at admission
    "run_id",
    "at",
    "attempt_id",
    "worker_id",
    "deadline_at",
    "timings",
    "duration_seconds",
}


def _normalised(log: list[psych_runtime.records.Record]) -> list[dict[str, object]]:
    out = []
    for record in log:
        data = record.model_dump(mode="json")
        for key in _VOLATILE:
            data.pop(key, None)
        out.append(data)
    return out


async def _run_on(url: str) -> list[psych_runtime.records.Record]:
    store = await psych_runtime.open_store(url)
    model = (
        FakeModel()
        .turn(text="Checking.", tool_calls=[("lookup", {"order_id": "A1"})])
        .turn(tool_calls=[("lookup", {"order_id": "B2"}), ("missing", {})])
        .turn(text="Both are packed.")
    )
    try:
        async with psych_runtime.session(model, tools=[lookup], store=store, scope=ACME) as s:
            reply = await s.ask(_spec(), "status of A1 and B2?", timeout=30)
            return await psych_runtime.read_log(s.store, reply.run_id, scope=ACME)
    finally:
        await store.close()


async def test_the_same_spec_produces_the_same_log_on_every_store(store_url_for: UrlFor) -> None:
    logs = {kind: await _run_on(await store_url_for(kind)) for kind in EVERY}
    reference = _normalised(logs["memory"])
    assert reference[-1]["type"] == "run_settled"
    assert reference[-1]["state"] == "completed"
    for kind in DURABLE:
        assert _normalised(logs[kind]) == reference, kind


def _spawn(
    url: str, markers: Path, mode: str, number: float, *, hang: bool = False
) -> subprocess.Popen[str]:
    return spawn_worker(
        url,
        markers,
        mode,
        number,
        env={"PSYCH_E2E_HANG": "1" if hang else "0"},
        keep_stdin=True,
        capture_stderr=True,
    )


async def _wait_for(predicate: Callable[[], Awaitable[bool]], timeout: float) -> None:
    async with asyncio.timeout(timeout):
        while not await predicate():
            await asyncio.sleep(0.02)


@pytest.mark.parametrize("kind", DURABLE)
async def test_a_sigkilled_worker_process_is_recovered_by_another(
    kind: str, store_url_for: UrlFor, tmp_path: Path
) -> None:
    url = await store_url_for(kind)
    store = await psych_runtime.open_store(url)
    spec = psych_runtime.AgentSpec(
        name="pay",
        model=psych_runtime.ModelRef(model="fake-standard"),
        tools=(psych_runtime.CodeTool(name="charge"),),
    )
    version = await psych_runtime.publish(store, spec, scope=ACME)
    run = await psych_runtime.dispatch(store, version, "charge A1", scope=ACME)
    # A lease long enough that a slow first heartbeat on a loaded machine never lets it
    # lapse while the Worker lives: the only reclaim here must be the one the kill causes.
    first = _spawn(url, tmp_path, "work", 5.0, hang=True)
    second = None
    try:
        await _wait_for(lambda: _started(tmp_path, 1), 30)
        first.send_signal(signal.SIGKILL)
        first.communicate()
        killed_at = time.monotonic()
        second = _spawn(url, tmp_path, "work", 2.0)

        async def settled() -> bool:
            log = await psych_runtime.read_log(store, run.run_id)
            return log[-1].type == "run_settled"

        await _wait_for(settled, 30)
        recovered_after = time.monotonic() - killed_at
    finally:
        for process in (first, second):
            if process is None:
                continue
            if process.poll() is None:
                process.kill()
            process.communicate()
    log = await psych_runtime.read_log(store, run.run_id)
    await store.close()
    attempts = [r for r in log if r.type == "attempt_started"]
    assert [(a.attempt_number, a.reclaimed_expired_lease) for a in attempts] == [
        (1, False),
        (2, True),
    ]
    closed = [r for r in log if r.type == "tool_call_finished"]
    assert len(closed) == 1 and closed[0].outcome is psych_runtime.ToolOutcome.UNKNOWN
    assert closed[0].failure is not None and closed[0].failure.kind == "orphaned"
    assert log[-1].state is psych_runtime.TerminalState.COMPLETED
    assert len(list(tmp_path.glob("started.*"))) == 1  # the charge never ran twice
    print(f"{kind}: SIGKILL to settled in {recovered_after:.2f}s")


def _read_until_done(stream: IO[str]) -> list[str]:
    lines = []
    for line in stream:
        if line.strip() == "done":
            return lines
        lines.append(line.strip())
    raise AssertionError("a claimer exited before saying done")


async def _started(markers: Path, count: int) -> bool:
    return len(list(markers.glob("started.*"))) >= count


@pytest.mark.parametrize("kind", DURABLE)
async def test_two_processes_claiming_never_both_win_a_run(
    kind: str, store_url_for: UrlFor, tmp_path: Path
) -> None:
    url = await store_url_for(kind)
    store = await psych_runtime.open_store(url)
    version = await psych_runtime.publish(store, _spec(), scope=ACME)
    ids = {
        (await psych_runtime.dispatch(store, version, f"q{i}", scope=ACME)).run_id
        for i in range(80)
    }
    await store.close()
    racers = [_spawn(url, tmp_path, "claim", 1.0) for _ in range(2)]
    claimed: list[list[str]] = []
    for racer in racers:
        assert racer.stdout is not None
        lines = await asyncio.to_thread(_read_until_done, racer.stdout)
        claimed.append([line.split()[1] for line in lines if line.startswith("claimed")])
    for racer in racers:
        _, err = racer.communicate("stop\n", timeout=60)
        assert racer.returncode == 0, err
    first, second = (set(c) for c in claimed)
    assert len(claimed[0]) == len(first) and len(claimed[1]) == len(second)
    assert first.isdisjoint(second), f"{len(first & second)} runs claimed by both"
    assert first | second == ids
