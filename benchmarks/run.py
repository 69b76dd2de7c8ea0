"""Runtime benchmarks. Prints one JSON object per line.

Run with ``hatch run bench`` (every store whose backend is reachable) or
``hatch run bench --store memory --quick`` (``python -m benchmarks.run`` underneath).
The workload is the one in PERFORMANCE.md: an agent with one async code tool
``lookup(order_id)`` returning a small dict, and a scripted model that makes K
sequential tool calls (different arguments each turn) and then answers.

Every figure is a median over repeated samples. Engine overhead is reported against a
baseline measured in the same process: the same model script and tool calls driven by
a bare loop with no runtime, no store and no log, so what remains is what the runtime
itself costs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from pydantic import JsonValue

import psych_runtime
from benchmarks.stores import STORE_FACTORIES
from benchmarks.stores import StoreFactory
from psych_runtime import RunId
from psych_runtime import Store
from psych_runtime import read_log as read_records
from psych_runtime.models import ModelRequest
from psych_runtime.models import ToolCallDelta
from psych_runtime.testing import FakeModel
from tests.support.worker_process import spawn_worker

SCOPE = psych_runtime.Scope(tenant="bench")


async def lookup(order_id: str) -> dict[str, str]:
    """Look up an order."""
    return {"order_id": order_id, "status": "shipped", "carrier": "ups"}


def spec() -> psych_runtime.AgentSpec:
    return psych_runtime.AgentSpec(
        name="bench",
        instructions="Answer questions about orders.",
        model=psych_runtime.ModelRef(model="fake-standard"),
        tools=(psych_runtime.CodeTool(name="lookup"),),
        limits=psych_runtime.Limits(max_turns=64, max_steps=128),
    )


class ScriptModel:
    """Answers any Run with K tool calls then a final text, by counting tool results."""

    def __init__(self, k: int) -> None:
        self.k = k

    async def known_models(self) -> frozenset[str]:
        return frozenset()

    def stream(self, request: ModelRequest) -> Any:
        done = sum(1 for m in request.messages if m.role == "tool")
        script = FakeModel()
        if done < self.k:
            script.turn(tool_calls=[("lookup", {"order_id": f"O{done}"})])
        else:
            script.turn(text=f"All {self.k} orders have shipped.")
        return script.stream(request)


def emit(metric: str, store: str, **values: Any) -> None:
    print(json.dumps({"metric": metric, "store": store, **values}), flush=True)


def median_ms(samples: Sequence[float]) -> float:
    return round(statistics.median(samples) * 1000, 4)


@dataclass
class Counters:
    appends: int = 0
    reads: int = 0
    claims: int = 0
    empty_claims: int = 0
    bytes_appended: int = 0
    claimed_at: dict[str, float] = field(default_factory=dict)


class CountingStore:
    """Delegates to a store, counting round trips and bytes (and when claims land)."""

    def __init__(self, inner: Store, counters: Counters, *, notifier: bool = True) -> None:
        self._inner = inner
        self._counters = counters
        self._notify = notifier
        self.measure_bytes = False
        """Serialising records to count bytes costs time, so it is off while timing."""

    @property
    def notifier(self) -> Any:
        return self._inner.notifier if self._notify else None

    async def append(self, run_id: Any, expected_seq: int, records: Any, **kw: Any) -> None:
        from psych_runtime.records import record_to_json

        self._counters.appends += 1
        if self.measure_bytes:
            self._counters.bytes_appended += sum(len(record_to_json(r)) for r in records)
        await self._inner.append(run_id, expected_seq, records, **kw)

    async def read(self, run_id: Any, **kw: Any) -> Any:
        self._counters.reads += 1
        return await self._inner.read(run_id, **kw)

    async def claim(self, worker_id: Any, now: Any, lease_seconds: float) -> Any:
        header = await self._inner.claim(worker_id, now, lease_seconds)
        if header is not None:
            self._counters.claims += 1
            self._counters.claimed_at[header.run_id] = time.perf_counter()
        else:
            self._counters.empty_claims += 1
        return header

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


async def bare_loop(k: int) -> None:
    """The baseline: the same model script and tool calls, with no runtime at all."""
    model = ScriptModel(k)
    messages: list[Any] = []
    from psych_runtime.models import ToolResultMessage
    from psych_runtime.models import UserMessage

    messages.append(UserMessage(content="status?"))
    while True:
        request = ModelRequest(model="fake-standard", messages=tuple(messages))
        fragments: dict[int, str] = {}
        async for event in model.stream(request):
            if isinstance(event, ToolCallDelta):
                fragments[event.index] = fragments.get(event.index, "") + event.arguments
        if not fragments:
            return
        for index in sorted(fragments):
            result = await lookup(**json.loads(fragments[index]))
            messages.append(ToolResultMessage(tool_call_id="c", content=json.dumps(result)))


async def timed(fn: Callable[[], Awaitable[Any]], n: int) -> list[float]:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - start)
    return samples


async def wait_settled(store: Any, run_id: RunId, timeout: float = 60.0) -> None:
    notifier = store.notifier
    async with asyncio.timeout(timeout):
        while True:
            generation = notifier.generation(run_id) if notifier is not None else 0
            head = await store.head(run_id)
            last = await store.read(run_id, after=head - 1) if head else []
            if last and last[-1].type == "run_settled":
                return
            if notifier is not None:
                await notifier.wait(run_id, generation, 0.05)
            else:
                await asyncio.sleep(0.002)


async def bench_turns(name: str, factory: StoreFactory, quick: bool) -> None:
    n = 15 if quick else 60
    for k in (1, 10):
        baseline = await timed(functools.partial(bare_loop, k), n)
        async with factory() as store:
            counters = Counters()
            counting = CountingStore(store, counters)
            version = await psych_runtime.publish(counting, spec())
            async with psych_runtime.session(ScriptModel(k), tools=[lookup], store=counting) as s:

                async def one(
                    s: psych_runtime.Session = s, version: psych_runtime.Version = version
                ) -> RunId:
                    dispatched = await s.dispatch(version, "status?")
                    await s.wait(dispatched.run_id)
                    return dispatched.run_id

                await one()  # warm up caches and connections
                counters.appends = counters.reads = counters.bytes_appended = 0
                counters.claims = counters.empty_claims = 0
                stored_before = await factory.stored_bytes()
                samples = await timed(one, n)
                stored_after = await factory.stored_bytes()
                runs = n
                counting.measure_bytes = True
                last = await one()
                counting.measure_bytes = False
                log = await read_records(counting, last)
        per_run = median_ms(samples)
        base = median_ms(baseline)
        emit(
            "run_latency",
            name,
            k=k,
            median_ms=per_run,
            baseline_ms=base,
            overhead_ms=round(per_run - base, 4),
            # A tool turn is one model call that asks for a tool plus that tool's
            # execution; a Run of K tool turns also makes one final answering call.
            overhead_per_tool_turn_ms=round((per_run - base) / k, 4),
            overhead_per_model_call_ms=round((per_run - base) / (k + 1), 4),
            samples=n,
        )
        emit(
            "round_trips_per_run",
            name,
            k=k,
            appends=round(counters.appends / (runs + 1), 2),
            reads=round(counters.reads / (runs + 1), 2),
            claims=round((counters.claims + counters.empty_claims) / (runs + 1), 2),
            empty_claims=round(counters.empty_claims / (runs + 1), 2),
            records=len(log),
        )
        emit(
            "bytes_per_run",
            name,
            k=k,
            record_json_bytes=counters.bytes_appended,
            stored_bytes=None
            if stored_before is None or stored_after is None
            else round((stored_after - stored_before) / n),
        )


async def bench_ask(name: str, factory: StoreFactory, quick: bool) -> None:
    n = 20 if quick else 100
    async with (
        factory() as store,
        psych_runtime.session(ScriptModel(1), tools=[lookup], store=store) as s,
    ):
        await s.ask(spec(), "warm up")
        samples = await timed(lambda: s.ask(spec(), "where is O0?"), n)
    emit("session_ask_latency", name, k=1, median_ms=median_ms(samples), samples=n)


async def bench_dispatch_to_claim(name: str, factory: StoreFactory, quick: bool) -> None:
    n = 10 if quick else 40
    for notify in (True, False):
        async with factory() as store:
            counters = Counters()
            counting = CountingStore(store, counters, notifier=notify)
            version = await psych_runtime.publish(counting, spec(), scope=SCOPE)
            worker = psych_runtime.Worker(
                counting, psych_runtime.Runtime(counting, ScriptModel(0), _registry())
            )
            task = asyncio.create_task(worker.run())
            await asyncio.sleep(0.05)
            samples = []
            for _ in range(n):
                await asyncio.sleep(0.02)  # let the Worker go idle
                start = time.perf_counter()
                dispatched = await psych_runtime.dispatch(counting, version, "hi", scope=SCOPE)
                await wait_settled(counting, dispatched.run_id)
                samples.append(counters.claimed_at[dispatched.run_id] - start)
            worker.request_stop()
            await task
        emit(
            "dispatch_to_claim",
            name,
            notifier=notify and store.notifier is not None,
            median_ms=median_ms(samples),
            samples=n,
        )


async def bench_workflows(name: str, factory: StoreFactory, quick: bool) -> None:
    """Workflows: 100 sequential tool steps, and a foreach of 100 items 8 at a time.

    Per-step overhead is the Run's time minus the same tool calls made in a plain
    loop, divided by the steps; writes per step count the store's appends.
    """
    from psych_runtime.spec import ForeachStep
    from psych_runtime.spec import ToolStep
    from psych_runtime.spec import ValuePath
    from psych_runtime.spec import WorkflowSpec

    steps = 100
    n = 2 if quick else 5
    shapes = {
        "sequential": WorkflowSpec(
            name="seq",
            tools=(psych_runtime.CodeTool(name="lookup"),),
            steps=tuple(
                ToolStep(name=f"s{i}", tool="lookup", arguments={"order_id": f"O{i}"})
                for i in range(steps)
            ),
            limits=psych_runtime.Limits(max_steps=1000),
        ),
        "foreach_c8": WorkflowSpec(
            name="fan",
            tools=(psych_runtime.CodeTool(name="lookup"),),
            steps=(
                ForeachStep(
                    name="each",
                    items=ValuePath(path="input.ids"),
                    concurrency=8,
                    body=ToolStep(
                        name="one",
                        tool="lookup",
                        arguments_from={"order_id": ValuePath(path="item")},
                    ),
                ),
            ),
            limits=psych_runtime.Limits(max_steps=1000),
        ),
    }
    ids: list[JsonValue] = [f"O{i}" for i in range(steps)]

    async def bare() -> None:
        for i in range(steps):
            await lookup(f"O{i}")

    baseline = median_ms(await timed(bare, n))
    for shape, workflow in shapes.items():
        async with factory() as store:
            counters = Counters()
            counting = CountingStore(store, counters)
            async with psych_runtime.session(
                ScriptModel(0), tools=[lookup], store=counting, scope=SCOPE
            ) as s:

                async def one(
                    s: psych_runtime.Session = s,
                    workflow: WorkflowSpec = workflow,
                    counting: CountingStore = counting,
                ) -> None:
                    run = await s.dispatch(workflow, input={"ids": ids})
                    await wait_settled(counting, run.run_id)

                await one()  # warm up
                counters.appends = counters.reads = 0
                samples = await timed(one, n)
        per_run = median_ms(samples)
        emit(
            "workflow_steps",
            name,
            shape=shape,
            steps=steps,
            median_ms=per_run,
            baseline_ms=baseline,
            overhead_per_step_ms=round((per_run - baseline) / steps, 4),
            appends_per_step=round(counters.appends / (n * steps), 3),
            samples=n,
        )


async def bench_resume(name: str, factory: StoreFactory, quick: bool) -> None:
    """From ``resume()`` returning control to the next record of the woken Run.

    Each Run suspends on an approval of its one tool call; the clock starts just
    before ``resume()`` and stops when the record after ``resumed`` (the new Attempt's
    ``attempt_started``) can be read: the store's wake-up plus a Worker's claim.
    """
    n = 10 if quick else 40
    settings = psych_runtime.RuntimeSettings(
        approvals=psych_runtime.ApprovalRules(always=frozenset({"lookup"}))
    )
    async with (
        factory() as store,
        psych_runtime.session(
            ScriptModel(1), tools=[lookup], store=store, scope=SCOPE, runtime=settings
        ) as s,
    ):
        samples = []
        for _ in range(n + 1):
            run = await s.dispatch(spec(), "where is O0?")
            await s.wait(run.run_id, timeout=30)
            head = await store.head(run.run_id)
            start = time.perf_counter()
            await s.resume(run.run_id, approved=True)
            stream = psych_runtime.stream(
                store, run.run_id, after=head + 1, scope=SCOPE, poll_seconds=0.001
            )
            async with contextlib.aclosing(stream) as records:
                async for _ in records:
                    samples.append(time.perf_counter() - start)
                    break
            await s.wait(run.run_id, timeout=30)
    emit("resume_to_next_record", name, median_ms=median_ms(samples[1:]), samples=n)


class _StreamingModel:
    """A model whose answer takes a minute to stream: what an interrupt cuts short."""

    async def known_models(self) -> frozenset[str]:
        return frozenset()

    def stream(self, request: ModelRequest) -> Any:
        script = FakeModel().turn(text=" ".join(["word"] * 120), chunk_delay_seconds=0.5)
        return script.stream(request)


async def _wait_for_record(store: Store, run_id: RunId, kind: str) -> None:
    async with asyncio.timeout(30):
        while not any(r.type == kind for r in await store.read(run_id)):
            await asyncio.sleep(0.002)


async def _settled_after(store: Store, run_id: RunId, start: float) -> float:
    """Seconds from ``start`` until the Run's ``run_settled`` can be read."""
    async with asyncio.timeout(30):
        while True:
            head = await store.head(run_id)
            last = await store.read(run_id, after=head - 1)
            if last and last[-1].type == "run_settled":
                return time.perf_counter() - start
            await asyncio.sleep(0.001)


async def bench_interrupt(name: str, factory: StoreFactory, quick: bool) -> None:
    """From ``interrupt()`` to the Run settled ``aborted``: a hanging tool, a long stream.

    Measured with the Worker in this process (the interrupt reaches the Attempt at once)
    and, on durable stores, in another process, where the Attempt learns of it from
    its store (the notifier's wake-up where it hears other processes, else a poll of
    the log's head every ``poll_interval``, 50 ms in the worker process).
    """
    n = 5 if quick else 15

    async def hang(order_id: str) -> str:
        """Never return."""
        await asyncio.Event().wait()
        return order_id

    hanging_spec = psych_runtime.AgentSpec(name="pay", model="fake-standard", tools=("hang",))

    def hanging_model() -> Any:
        return FakeModel().turn(tool_calls=[("hang", {"order_id": "A"})])

    cases: tuple[tuple[str, Callable[[], Any], psych_runtime.AgentSpec, str], ...] = (
        ("tool", hanging_model, hanging_spec, "tool_call_started"),
        ("stream", _StreamingModel, spec(), "model_call_started"),
    )
    for case, make_model, agent, started in cases:
        async with factory() as store:
            samples = []
            for _ in range(n):
                async with psych_runtime.session(
                    make_model(), tools=[hang, lookup], store=store, scope=SCOPE
                ) as s:
                    run = await s.dispatch(agent, "go")
                    await _wait_for_record(store, run.run_id, started)
                    start = time.perf_counter()
                    await s.interrupt(run.run_id)
                    samples.append(await _settled_after(store, run.run_id, start))
        emit(
            f"interrupt_to_settled_{case}",
            name,
            process="same",
            median_ms=median_ms(samples),
            samples=n,
        )
    if name == "memory":
        return
    remote = (
        ("tool", {"PSYCH_E2E_HANG": "1"}, "tool_call_started"),
        ("stream", {"PSYCH_E2E_TURNS": "0", "PSYCH_E2E_SLOW_ANSWER": "1"}, "model_call_started"),
    )
    for case, env, started in remote:
        with tempfile.TemporaryDirectory() as folder:
            async with factory() as store:
                version = await psych_runtime.publish(store, _pay_spec(), scope=SCOPE)
                worker = spawn_worker(factory.url, Path(folder), env={**NO_MARKERS, **env})
                try:
                    samples = []
                    for _ in range(n):
                        run = await psych_runtime.dispatch(store, version, "go", scope=SCOPE)
                        await _wait_for_record(store, run.run_id, started)
                        start = time.perf_counter()
                        await psych_runtime.interrupt(store, run.run_id, scope=SCOPE)
                        samples.append(await _settled_after(store, run.run_id, start))
                finally:
                    _stop([worker])
        emit(
            f"interrupt_to_settled_{case}",
            name,
            process="other",
            median_ms=median_ms(samples),
            samples=n,
        )


def _registry() -> psych_runtime.ToolRegistry:
    registry = psych_runtime.ToolRegistry()
    registry.register(lookup)
    return registry


async def bench_drain(name: str, factory: StoreFactory, quick: bool) -> None:
    runs = 30 if quick else 100
    for workers in (1, 2):
        async with factory() as store:
            version = await psych_runtime.publish(store, spec(), scope=SCOPE)
            ids = [
                (await psych_runtime.dispatch(store, version, f"q{i}", scope=SCOPE)).run_id
                for i in range(runs)
            ]
            start = time.perf_counter()
            pool = [
                psych_runtime.Worker(
                    store,
                    psych_runtime.Runtime(store, ScriptModel(3), _registry()),
                    concurrency=8,
                    poll_interval=0.05,
                )
                for _ in range(workers)
            ]
            tasks = [asyncio.create_task(w.run()) for w in pool]
            for run_id in ids:
                await wait_settled(store, run_id)
            elapsed = time.perf_counter() - start
            for w in pool:
                w.request_stop()
            await asyncio.gather(*tasks)
        emit(
            "drain",
            name,
            runs=runs,
            k=3,
            workers=workers,
            processes=1,
            seconds=round(elapsed, 4),
        )


NO_MARKERS = {"PSYCH_E2E_MARKERS": "0"}
"""For throughput: the workload's tool does no IO (the kill benchmark needs the markers)."""


def _spawn_worker(
    url: str, markers: Path, *, hang: bool, turns: int, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    settings = {
        "PSYCH_E2E_HANG": "1" if hang else "0",
        "PSYCH_E2E_TURNS": str(turns),
        "PSYCH_E2E_CONCURRENCY": "8",
        **(env or {}),
    }
    return spawn_worker(url, markers, "work", 2.0, env=settings)


def _stop(processes: Sequence[subprocess.Popen[str]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.communicate()


def _pay_spec() -> psych_runtime.AgentSpec:
    return psych_runtime.AgentSpec(
        name="pay",
        model=psych_runtime.ModelRef(model="fake-standard"),
        tools=(psych_runtime.CodeTool(name="charge"),),
        limits=psych_runtime.Limits(max_turns=16),
    )


async def _all_settled(store: Store, ids: Sequence[RunId], timeout: float) -> None:
    """Wait until every Run has settled, looking at one unsettled Run at a time.

    Runs are claimed roughly in dispatch order, so checking them in order costs about
    one query per poll instead of one per pending Run, which would compete with the
    Workers being measured for the database and the CPU. Unlike ``wait_settled`` it
    never trusts this process's notifier: other processes settle these Runs.
    """
    async with asyncio.timeout(timeout):
        for run_id in ids:
            while True:
                head = await store.head(run_id)
                last = await store.read(run_id, after=head - 1)
                if last and last[-1].type == "run_settled":
                    break
                await asyncio.sleep(0.005)


async def bench_processes(name: str, factory: StoreFactory, quick: bool) -> None:
    """Two Worker processes draining a queue, and recovery from a SIGKILL."""
    if name == "memory":
        return
    with tempfile.TemporaryDirectory() as folder:
        markers = Path(folder)
        async with factory() as store:
            version = await psych_runtime.publish(store, _pay_spec(), scope=SCOPE)
            workers = [
                _spawn_worker(factory.url, markers, hang=False, turns=3, env=NO_MARKERS)
                for _ in range(2)
            ]
            try:
                # A first burst warms both Worker processes (connections, prepared
                # statements) the way a long-lived fleet already is; it is not reported.
                for burst, runs in enumerate((20, 60) if quick else (20, 100, 200)):
                    # The clock runs from the first dispatch, issued together as a burst
                    # of request handlers would, to the last Run's settlement.
                    start = time.perf_counter()
                    admitted = await asyncio.gather(
                        *(
                            psych_runtime.dispatch(store, version, f"b{burst}-{i}", scope=SCOPE)
                            for i in range(runs)
                        )
                    )
                    await _all_settled(store, [a.run_id for a in admitted], 300)
                    elapsed = time.perf_counter() - start
                    if burst:
                        emit(
                            "drain",
                            name,
                            runs=runs,
                            k=3,
                            workers=2,
                            processes=2,
                            seconds=round(elapsed, 4),
                        )
            finally:
                _stop(workers)

        # Only PostgreSQL notices a dead process's session; elsewhere a killed Worker's
        # Run waits out its lease, so those stores run with a 2 s lease, not the
        # default 30 s (which would only measure the default).
        defaults = name == "postgres"
        samples = []
        for _ in range(3 if quick else 12):
            samples.append(await _sigkill_once(factory, markers, defaults=defaults))
        samples.sort()
        emit(
            "sigkill_to_settled",
            name,
            timing="worker defaults" if defaults else "lease 2 s, poll 0.05 s",
            median_ms=median_ms(samples),
            p90_ms=round(samples[max(0, -(-len(samples) * 9 // 10) - 1)] * 1000, 4),
            max_ms=round(samples[-1] * 1000, 4),
            samples=len(samples),
        )


async def _sigkill_once(factory: StoreFactory, markers: Path, *, defaults: bool) -> float:
    """Kill a Worker process mid-tool-call; time until an idle survivor settles the Run.

    With ``defaults`` both processes run with the Worker's default timings (lease,
    heartbeat, poll), so the figure is what a deployment gets without tuning. The
    survivor starts after the victim holds the Run and is given a second to go idle,
    as a spare Worker would be.
    """
    timing = {"PSYCH_E2E_DEFAULT_TIMING": "1" if defaults else "0"}
    async with factory() as store:
        version = await psych_runtime.publish(store, _pay_spec(), scope=SCOPE)
        victim = _spawn_worker(factory.url, markers, hang=True, turns=1, env=timing)
        survivor = None
        try:
            run = await psych_runtime.dispatch(store, version, "pay", scope=SCOPE)
            async with asyncio.timeout(60):
                while not any(markers.glob(f"started.{victim.pid}")):
                    await asyncio.sleep(0.01)
            survivor = _spawn_worker(factory.url, markers, hang=False, turns=1, env=timing)
            await asyncio.sleep(1.0)
            victim.kill()
            killed = time.perf_counter()
            await _all_settled(store, [run.run_id], 60)
            return time.perf_counter() - killed
        finally:
            _stop([p for p in (victim, survivor) if p is not None])


FIVE_MB = 5 * 1024 * 1024


async def export_big() -> str:
    """Return a 5 MiB text result."""
    return "0123456789abcdef" * (FIVE_MB // 16)


async def bench_large_result(name: str, factory: StoreFactory, quick: bool) -> None:
    """What a 5 MiB tool result costs a Run: offloaded to a file blob store, then read."""
    n = 3 if quick else 8
    spec_big = psych_runtime.AgentSpec(
        name="big",
        model=psych_runtime.ModelRef(model="fake-standard"),
        tools=(psych_runtime.CodeTool(name="export_big"),),
    )

    class BigModel:
        async def known_models(self) -> frozenset[str]:
            return frozenset()

        def stream(self, request: ModelRequest) -> Any:
            done = any(m.role == "tool" for m in request.messages)
            script = FakeModel()
            if done:
                script.turn(text="done")
            else:
                script.turn(tool_calls=[("export_big", {})])
            return script.stream(request)

    with tempfile.TemporaryDirectory() as folder:
        blob = psych_runtime.adapters.FileBlobStore(Path(folder))
        async with (
            factory() as store,
            psych_runtime.session(
                BigModel(),
                tools=[export_big],
                store=store,
                runtime=psych_runtime.RuntimeSettings(blob=blob),
            ) as s,
        ):
            version = await s.publish(spec_big)

            async def one() -> RunId:
                dispatched = await s.dispatch(version, "export")
                await s.wait(dispatched.run_id)
                return dispatched.run_id

            last = await one()
            samples = await timed(one, n)
            log = await read_records(store, last)
            finished = next(r for r in log if r.type == "tool_call_finished")
            assert finished.result_blob_key is not None
            key = psych_runtime.adapters.BlobKey.parse(finished.result_blob_key)
            reads = []
            for _ in range(n):
                start = time.perf_counter()
                data = await blob.get(key)
                reads.append(time.perf_counter() - start)
            assert len(data) == FIVE_MB
    emit(
        "large_result",
        name,
        bytes=FIVE_MB,
        blob="file",
        run_median_ms=median_ms(samples),
        read_back_median_ms=median_ms(reads),
        samples=n,
    )


def bench_import(quick: bool) -> None:
    """Import cost: the bare package (names load lazily) and what the first program touches."""
    n = 5 if quick else 15
    workloads = {
        "import_time": "import psych_runtime",
        "import_time_first_program": (
            "import psych_runtime; psych_runtime.AgentSpec; psych_runtime.session; "
            "import psych_runtime.testing"
        ),
    }
    for row, statement in workloads.items():
        code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
        samples = []
        for _ in range(n):
            out = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
            samples.append(float(out))
        emit(row, "-", median_ms=median_ms(samples), samples=n)


BENCHMARKS = (
    "turns",
    "ask",
    "claim",
    "resume",
    "interrupt",
    "workflows",
    "drain",
    "processes",
    "large",
    "import",
    "sandbox",
    "mcp",
)
"""Every benchmark ``--only`` may name; all of them run by default."""


async def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", action="append", help="store names (default: every one)")
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument(
        "--only",
        action="append",
        choices=BENCHMARKS,
        help="benchmarks to run (default: all)",
    )
    args = parser.parse_args(argv)
    only = set(args.only or BENCHMARKS)
    names = args.store or list(STORE_FACTORIES)
    os.environ.setdefault("PSYCH_DISABLE_PLUGIN_AUTOLOAD", "0")
    if "import" in only:
        bench_import(args.quick)
    if "sandbox" in only:
        from benchmarks.sandbox import bench_sandbox

        await bench_sandbox(args.quick)
    if "mcp" in only:
        from benchmarks.mcp import bench_mcp

        await bench_mcp(args.quick)
    for name in names:
        factory = STORE_FACTORIES[name]
        if not await factory.available():
            emit("skipped", name, reason=factory.unavailable_reason)
            continue
        if "turns" in only:
            await bench_turns(name, factory, args.quick)
        if "ask" in only:
            await bench_ask(name, factory, args.quick)
        if "claim" in only:
            await bench_dispatch_to_claim(name, factory, args.quick)
        if "resume" in only:
            await bench_resume(name, factory, args.quick)
        if "interrupt" in only:
            await bench_interrupt(name, factory, args.quick)
        if "workflows" in only:
            await bench_workflows(name, factory, args.quick)
        if "drain" in only:
            await bench_drain(name, factory, args.quick)
        if "processes" in only:
            await bench_processes(name, factory, args.quick)
        if "large" in only:
            await bench_large_result(name, factory, args.quick)


if __name__ == "__main__":
    asyncio.run(main())
