"""Workflows on every store: the step kinds together, and Workers killed mid-workflow.

Side effects are counted by the marker files the worker process's ``charge`` tool
writes, one per real execution, so "not re-executed" is checked, not assumed.
"""

import subprocess
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import psych_runtime
from psych_runtime.spec import AgentStep
from psych_runtime.spec import BranchCase
from psych_runtime.spec import BranchStep
from psych_runtime.spec import Condition
from psych_runtime.spec import ForeachStep
from psych_runtime.spec import LiteralValue
from psych_runtime.spec import LoopStep
from psych_runtime.spec import MapStep
from psych_runtime.spec import ParallelStep
from psych_runtime.spec import RetryPolicy
from psych_runtime.spec import SetStateStep
from psych_runtime.spec import SleepStep
from psych_runtime.spec import ToolStep
from psych_runtime.spec import ValuePath
from psych_runtime.spec import WaitStep
from psych_runtime.spec import WorkflowSpec
from psych_runtime.spec import WorkflowStepRef
from psych_runtime.testing import FakeModel
from tests.support.processes import kill
from tests.support.processes import wait_for
from tests.support.worker_process import spawn_worker

from .conftest import DURABLE
from .conftest import EVERY

ACME = psych_runtime.Scope(tenant="acme")
UrlFor = Callable[[str], Awaitable[str]]


def p(path: str) -> ValuePath:
    return ValuePath(path=path)


class Counter:
    def __init__(self) -> None:
        self.calls: list[int] = []
        self.failures_left = 1

    def registry(self) -> psych_runtime.ToolRegistry:
        registry = psych_runtime.ToolRegistry()

        async def square(n: int) -> int:
            """Square a number."""
            self.calls.append(n)
            return n * n

        async def flaky() -> str:
            """Fail once."""
            if self.failures_left:
                self.failures_left -= 1
                raise ConnectionError("try again")
            return "ok"

        registry.register(square)
        registry.register(flaky)
        return registry


@pytest.mark.parametrize("kind", EVERY)
async def test_every_step_kind_together(kind: str, store_url_for: UrlFor) -> None:
    url = await store_url_for(kind)
    counter = Counter()
    agent = psych_runtime.AgentSpec(name="summarise", model="fake-standard")
    inner = WorkflowSpec(name="inner", steps=(MapStep(name="echo", output={"got": p("input.n")}),))
    spec = WorkflowSpec(
        name="tour",
        steps=(
            ForeachStep(
                name="squares",
                items=p("input.numbers"),
                concurrency=3,
                body=ToolStep(name="sq", tool="square", arguments_from={"n": p("item")}),
            ),
            SetStateStep(name="count", values={"n": p("steps.squares.output.count")}),
            BranchStep(
                name="size",
                cases=(
                    BranchCase(
                        name="many",
                        when=Condition(path="state.n", op="gte", value=3),
                        step=MapStep(name="many_msg", output={"v": LiteralValue(value="many")}),
                    ),
                ),
            ),
            ParallelStep(
                name="both",
                branches=(
                    ToolStep(name="retried", tool="flaky", retry=RetryPolicy(max_attempts=2)),
                    WorkflowStepRef(name="sub", spec=inner, input={"n": p("state.n")}),
                ),
            ),
            LoopStep(
                name="twice",
                body=MapStep(name="tick", output={"i": p("iteration")}),
                until=Condition(path="iteration", op="gte", value=1),
            ),
            SleepStep(name="nap", seconds=0.2),
            WaitStep(name="go", event="go"),
            AgentStep(name="words", spec=agent, input={"message": LiteralValue(value="sum up")}),
        ),
        output={
            "squares": p("steps.squares.output.items"),
            "size": p("steps.size.output.chosen"),
            "sub": p("steps.both.output.sub"),
            "loops": p("steps.twice.output.iterations"),
            "words": p("steps.words.output.text"),
        },
    )
    async with psych_runtime.session(
        FakeModel().turn(text="Three squares."),
        registry=counter.registry(),
        store=url,
        scope=ACME,
        worker=psych_runtime.WorkerSettings(poll_interval=0.05),
    ) as s:
        run = await s.dispatch(spec, input={"numbers": [1, 2, 3]})

        async def waiting() -> bool:
            status = await s.status(run.run_id)
            return status.pending_wait is not None and status.pending_wait.event == "go"

        await wait_for(waiting, 30)
        await s.resume(run.run_id, payload={"ok": True})

        async def settled() -> bool:
            return (await s.status(run.run_id)).terminal_state is not None

        await wait_for(settled, 30)
        state = await s.state(run.run_id)
    assert state.failure is None, state.failure
    assert state.output == {
        "squares": [{"result": 1}, {"result": 4}, {"result": 9}],
        "size": "many",
        "sub": {"echo": {"got": 3}},
        "loops": 2,
        "words": "Three squares.",
    }
    assert sorted(counter.calls) == [1, 2, 3]


def _spawn(url: str, markers: Path, hang_on: str | None = None) -> subprocess.Popen[str]:
    env = {"PSYCH_E2E_HANG": "0"}
    if hang_on is not None:
        env["PSYCH_E2E_HANG_ON"] = hang_on
    # A lease long enough that a slow backend under load never loses it mid-scenario.
    return spawn_worker(url, markers, "work", 3.0, env=env, keep_stdin=True, capture_stderr=True)


def _charges(markers: Path) -> list[str]:
    return sorted(path.read_text() for path in markers.glob("call.*"))


def _charge(name: str, order: str, **fields: Any) -> ToolStep:
    return ToolStep(name=name, tool="charge", arguments={"order_id": order}, **fields)


SCENARIOS = {
    # Killed inside a tool step: the step before it is read back, the killed one is
    # in doubt (not idempotent) and reported, and the workflow carries on past it.
    "tool-step": (
        (
            _charge("first", "S1"),
            _charge("second", "S2", on_failure="continue"),
            MapStep(name="after", output={"second": p("steps.second.status")}),
        ),
        "S2",
        ["S1", "S2"],
    ),
    # Killed inside a parallel branch: each branch's charge ran once at most.
    "parallel-branch": (
        (
            _charge("first", "S1"),
            ParallelStep(
                name="fan",
                on_branch_failure="wait_all",
                branches=(
                    _charge("left", "P1", on_failure="continue"),
                    _charge("right", "P2", on_failure="continue"),
                ),
            ),
        ),
        "P1",
        # P2 runs once, or not at all when the kill came between its step's start
        # and its call (then it is in doubt, and reported rather than run).
        ["P1", "P2?", "S1"],
    ),
    # Killed inside a nested agent step's tool call: the agent's Run is continued from
    # its own log, its call in doubt is reported to its model, and it answers.
    "agent-step": (
        (
            _charge("first", "S1"),
            AgentStep(
                name="agent",
                spec=psych_runtime.AgentSpec(
                    name="payer", model="fake-standard", tools=("charge",)
                ),
                input={"message": LiteralValue(value="charge it")},
            ),
        ),
        "A0",
        ["A0", "S1"],
    ),
}


@pytest.mark.parametrize("kind", DURABLE)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
async def test_a_worker_killed_mid_workflow_never_repeats_a_completed_step(
    kind: str, scenario: str, store_url_for: UrlFor, tmp_path: Path
) -> None:
    steps, hang_on, expected = SCENARIOS[scenario]
    url = await store_url_for(kind)
    store = await psych_runtime.open_store(url)
    spec = WorkflowSpec(name="pay", steps=steps, tools=("charge",))
    version = await psych_runtime.publish(store, spec, scope=ACME)
    run = await psych_runtime.dispatch(store, version, input={}, scope=ACME)
    processes: list[subprocess.Popen[str]] = []
    try:
        processes.append(_spawn(url, tmp_path, hang_on=hang_on))

        async def hanging_or_over() -> bool:
            if hang_on in _charges(tmp_path):
                return True
            status = await psych_runtime.status(store, run.run_id, scope=ACME)
            return status.terminal_state is not None

        await wait_for(hanging_or_over, 60)
        over = await psych_runtime.status(store, run.run_id, scope=ACME)
        assert over.terminal_state is None, "the run ended before the hanging call"
        kill(processes[0])
        processes.append(_spawn(url, tmp_path))

        async def settled() -> bool:
            status = await psych_runtime.status(store, run.run_id, scope=ACME)
            return status.terminal_state is not None

        await wait_for(settled, 60)
        state = await psych_runtime.state(store, run.run_id, scope=ACME)
    finally:
        for process in processes:
            kill(process)
        await store.close()
    charges = _charges(tmp_path)
    assert len(charges) == len(set(charges)), charges  # no side effect twice
    assert set(charges) >= {c for c in expected if not c.endswith("?")}
    assert set(charges) <= {c.rstrip("?") for c in expected}
    assert state.terminal_state is psych_runtime.TerminalState.COMPLETED, state.failure
    first = [s for s in state.step_starts if s.name == "first"]
    assert [s.attempt_number for s in first] == [1]  # read back, never started again
