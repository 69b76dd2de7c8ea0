"""Workflows end to end on a real Worker: every step kind, every option, memoisation."""

import asyncio
import contextlib
import time
from typing import Any

import pytest

import psych_runtime
from psych_runtime.records import StepCompleted
from psych_runtime.records import StepStarted
from psych_runtime.records import Suspended
from psych_runtime.records import SuspendReason
from psych_runtime.spec import AgentStep
from psych_runtime.spec import BranchCase
from psych_runtime.spec import BranchStep
from psych_runtime.spec import Condition
from psych_runtime.spec import ForeachStep
from psych_runtime.spec import HumanStep
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

from .conftest import ACME
from .conftest import session_on


def p(path: str) -> ValuePath:
    return ValuePath(path=path)


def lit(value: Any) -> LiteralValue:
    return LiteralValue(value=value)


class Tools:
    """Tools that count what they really did, so memoisation is checked, not assumed."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.failures_left = 0
        self.running = 0
        self.most_at_once = 0
        # How many ``double`` calls a test expects to overlap. Until that many have run at
        # once, each call waits (up to a few seconds) for the others, so whether they
        # overlap depends on the engine and not on how fast the store answers.
        self.overlap = 1

    def registry(self) -> psych_runtime.ToolRegistry:
        registry = psych_runtime.ToolRegistry()

        async def fetch(order_id: str) -> dict[str, Any]:
            """Fetch an order."""
            self.calls.append(("fetch", order_id))
            return {"id": order_id, "lines": ["a", "b", "c"], "total": 30}

        async def double(n: int) -> int:
            """Double a number, slowly enough to overlap with others."""
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(5):
                    while self.most_at_once < self.overlap:
                        await asyncio.sleep(0.005)
            await asyncio.sleep(0.05)
            self.running -= 1
            self.calls.append(("double", n))
            return n * 2

        async def flaky() -> str:
            """Fail while failures are left."""
            self.calls.append(("flaky", None))
            if self.failures_left > 0:
                self.failures_left -= 1
                raise ConnectionError("upstream down")
            return "ok"

        async def hang() -> str:
            """Never finish in time."""
            await asyncio.sleep(30)
            return "late"

        async def refund(order_id: str) -> str:
            """Refund an order."""
            self.calls.append(("refund", order_id))
            return "refunded"

        registry.register(fetch)
        registry.register(double)
        registry.register(flaky)
        registry.register(hang)
        registry.register(refund, annotations=["destructive"])
        return registry


def flow(*steps: Any, **fields: Any) -> WorkflowSpec:
    return WorkflowSpec(name="flow", steps=steps, **fields)


@pytest.fixture
def tools() -> Tools:
    return Tools()


def _session(
    tools: Tools, store: psych_runtime.Store, model: FakeModel | None = None, **runtime: Any
) -> Any:
    return session_on(store, model or FakeModel(), tools.registry(), **runtime)


async def _finish(s: psych_runtime.Session, spec: WorkflowSpec, **data: Any) -> Any:
    run = await s.dispatch(spec, input=data)
    await _settled(s, run.run_id)
    return run.run_id


async def _settled(s: psych_runtime.Session, run_id: psych_runtime.RunId) -> None:
    async with asyncio.timeout(15):
        while (await s.status(run_id)).terminal_state is None:
            await asyncio.sleep(0.02)


async def _waiting(s: psych_runtime.Session, run_id: psych_runtime.RunId) -> None:
    async with asyncio.timeout(15):
        while (await s.status(run_id)).lifecycle != "waiting":
            await asyncio.sleep(0.02)


async def test_steps_read_input_earlier_steps_and_state(tools: Tools, store: Any) -> None:
    spec = flow(
        ToolStep(name="fetch", tool="fetch", arguments_from={"order_id": p("input.order")}),
        SetStateStep(name="remember", values={"seen": p("steps.fetch.output.id")}),
        MapStep(
            name="summary",
            output={"n": p("steps.fetch.output.lines[2]"), "seen": p("state.seen")},
        ),
        output={"summary": p("steps.summary.output"), "fixed": lit(1)},
        initial_state={"seen": None, "other": 5},
    )
    async with _session(tools, store) as s:
        run_id = await _finish(s, spec, order="A1")
        state = await s.state(run_id)
    assert state.terminal_state is psych_runtime.TerminalState.COMPLETED
    assert state.output == {"summary": {"n": "c", "seen": "A1"}, "fixed": 1}
    assert tools.calls == [("fetch", "A1")]


async def test_without_an_output_mapping_each_top_level_step_is_collected(
    tools: Tools, store: Any
) -> None:
    spec = flow(MapStep(name="a", output={"x": lit(1)}), MapStep(name="b", output={"y": lit(2)}))
    async with _session(tools, store) as s:
        state = await s.state(await _finish(s, spec))
    assert state.output == {"a": {"x": 1}, "b": {"y": 2}}


async def test_a_false_when_skips_and_later_steps_can_see_it(tools: Tools, store: Any) -> None:
    spec = flow(
        ToolStep(
            name="maybe",
            tool="fetch",
            arguments={"order_id": "X"},
            when=Condition(path="input.go", op="eq", value=True),
        ),
        MapStep(name="after", output={"skipped": p("steps.maybe.skipped")}),
    )
    async with _session(tools, store) as s:
        state = await s.state(await _finish(s, spec, go=False))
    assert state.output == {"maybe": None, "after": {"skipped": True}}
    assert tools.calls == []


async def test_branches_first_all_and_otherwise(tools: Tools, store: Any) -> None:
    def branch(mode: str) -> BranchStep:
        return BranchStep(
            name="route",
            mode=mode,  # type: ignore[arg-type]
            cases=(
                BranchCase(
                    name="big",
                    when=Condition(path="input.total", op="gte", value=100),
                    step=MapStep(name="big_path", output={"v": lit("big")}),
                ),
                BranchCase(
                    name="any",
                    when=Condition(path="input.total", op="gte", value=0),
                    step=MapStep(name="any_path", output={"v": lit("any")}),
                ),
            ),
            otherwise=MapStep(name="none_path", output={"v": lit("none")}),
        )

    async with _session(tools, store) as s:
        first = await s.state(await _finish(s, flow(branch("first")), total=500))
        every = await s.state(await _finish(s, flow(branch("all")), total=500))
        neither = await s.state(await _finish(s, flow(branch("first")), total=-1))
    assert first.output == {"route": {"big": {"v": "big"}, "chosen": "big"}}
    assert every.output == {
        "route": {"big": {"v": "big"}, "any": {"v": "any"}, "chosen": ["big", "any"]}
    }
    assert neither.output == {"route": {"otherwise": {"v": "none"}, "chosen": "otherwise"}}


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_foreach_runs_the_body_per_item_really_concurrently(
    tools: Tools, store: Any, concurrency: int
) -> None:
    spec = flow(
        ForeachStep(
            name="each",
            items=p("input.numbers"),
            concurrency=concurrency,
            body=ToolStep(name="twice", tool="double", arguments_from={"n": p("item")}),
        )
    )
    tools.overlap = concurrency
    async with _session(tools, store) as s:
        state = await s.state(await _finish(s, spec, numbers=[1, 2, 3, 4, 5, 6, 7, 8]))
    items = state.output["each"]["items"]  # type: ignore[index]
    assert [item["result"] for item in items] == [2, 4, 6, 8, 10, 12, 14, 16]
    assert state.output["each"]["count"] == 8  # type: ignore[index]
    assert tools.most_at_once == concurrency
    # Every item has a stable id of its own.
    starts = [r for r in await s_read(store, state.run_id) if isinstance(r, StepStarted)]
    assert len({r.step_id for r in starts if r.name == "twice"}) == 8


async def s_read(store: Any, run_id: Any) -> list[Any]:
    return await psych_runtime.read_log(store, run_id)


async def test_loops_until_while_and_exhaustion(tools: Tools, store: Any) -> None:
    counter = SetStateStep(name="bump", values={"i": p("iteration")})
    until = flow(
        LoopStep(
            name="loop",
            body=counter,
            until=Condition(path="state.i", op="gte", value=2),
        )
    )
    while_ = flow(
        LoopStep(
            name="loop",
            body=MapStep(name="seen", output={"i": p("iteration")}),
            while_=Condition(path="iteration", op="lt", value=3),
        )
    )
    endless = flow(
        LoopStep(
            name="loop",
            body=MapStep(name="spin", output={"i": p("iteration")}),
            until=Condition(path="input.never", op="exists"),
            max_iterations=4,
        )
    )
    async with _session(tools, store) as s:
        done_until = await s.state(await _finish(s, until))
        done_while = await s.state(await _finish(s, while_))
        exhausted = await s.state(await _finish(s, endless))
    assert done_until.output == {"loop": {"iterations": 3, "last": {"i": 2}}}
    assert done_while.output == {"loop": {"iterations": 3, "last": {"i": 2}}}
    assert exhausted.terminal_state is psych_runtime.TerminalState.FAILED
    assert exhausted.failure is not None and exhausted.failure.kind == "loop_exhausted"


@pytest.mark.parametrize("mode", ["fail_fast", "wait_all"])
async def test_parallel_branches_and_their_failure_modes(
    tools: Tools, store: Any, mode: str
) -> None:
    ok = flow(
        ParallelStep(
            name="both",
            branches=(
                ToolStep(name="one", tool="double", arguments={"n": 1}),
                ToolStep(name="two", tool="double", arguments={"n": 2}),
            ),
        )
    )
    failing = flow(
        ParallelStep(
            name="both",
            on_branch_failure=mode,  # type: ignore[arg-type]
            branches=(
                ToolStep(name="bad", tool="flaky"),
                ToolStep(name="good", tool="double", arguments={"n": 3}),
            ),
        )
    )
    tools.overlap = 2
    async with _session(tools, store) as s:
        together = await s.state(await _finish(s, ok))
        tools.failures_left = 1
        failed = await s.state(await _finish(s, failing))
    assert together.output == {"both": {"one": {"result": 2}, "two": {"result": 4}}}
    assert tools.most_at_once == 2
    assert failed.terminal_state is psych_runtime.TerminalState.FAILED
    assert failed.failure is not None and failed.failure.kind == "ConnectionError"
    if mode == "wait_all":
        assert ("double", 3) in tools.calls  # the other branch was let finish


async def test_retries_at_once_and_after_a_backoff_parked_as_a_timer(
    tools: Tools, store: Any
) -> None:
    at_once = flow(ToolStep(name="try", tool="flaky", retry=RetryPolicy(max_attempts=3)))
    backoff = flow(
        ToolStep(
            name="try",
            tool="flaky",
            retry=RetryPolicy(max_attempts=2, backoff_seconds=0.4),
        )
    )
    async with _session(tools, store) as s:
        tools.failures_left = 2
        first = await s.state(await _finish(s, at_once))
        tools.failures_left = 1
        run = await s.dispatch(backoff, input={})
        await _settled(s, run.run_id)
        second = await s.state(run.run_id)
        log = await s.read_log(run.run_id)
    assert first.output == {"try": {"result": "ok"}}
    assert second.output == {"try": {"result": "ok"}}
    timers = [r for r in log if isinstance(r, Suspended)]
    assert [t.reason for t in timers] == [SuspendReason.TIMER]
    # The backoff was waited out parked: the Attempt ended, and another one started
    # only once the retry was due (no Worker slept through it holding the lease).
    retry_at = next(r for r in log if isinstance(r, StepCompleted) and r.will_retry).retry_at
    attempts = [r for r in log if r.type == "attempt_started"]
    assert len(attempts) == 2 and retry_at is not None and attempts[1].at >= retry_at
    step_attempts = [r.attempt_number for r in log if isinstance(r, StepStarted)]
    assert step_attempts == [1, 2]


async def test_continue_on_failure_schema_violation_and_timeout(tools: Tools, store: Any) -> None:
    spec = flow(
        ToolStep(name="bad", tool="flaky", on_failure="continue"),
        MapStep(
            name="after",
            output={"status": p("steps.bad.status"), "kind": p("steps.bad.failure.kind")},
        ),
        ToolStep(
            name="typed",
            tool="fetch",
            arguments={"order_id": "A"},
            output_schema={
                "type": "object",
                "required": ["missing"],
                "properties": {"missing": {}},
            },
            on_failure="continue",
        ),
        ToolStep(name="slow", tool="hang", timeout_seconds=0.2),
    )
    async with _session(tools, store) as s:
        tools.failures_left = 1
        state = await s.state(await _finish(s, spec))
    assert state.terminal_state is psych_runtime.TerminalState.FAILED
    assert state.failure is not None and state.failure.kind == "step_timeout"
    steps = {r.name: r for r in state.steps.values()}
    assert steps["after"].output == {"status": "failed", "kind": "ConnectionError"}
    assert steps["typed"].failure is not None
    assert steps["typed"].failure.kind == "schema_violation"


async def test_a_bad_input_fails_before_any_step(tools: Tools, store: Any) -> None:
    spec = flow(
        ToolStep(name="fetch", tool="fetch", arguments_from={"order_id": p("input.order")}),
        input_schema={
            "type": "object",
            "required": ["order"],
            "properties": {"order": {"type": "string"}},
        },
    )
    async with _session(tools, store) as s:
        state = await s.state(await _finish(s, spec, order=5))
    assert state.failure is not None and state.failure.kind == "input_invalid"
    assert state.steps == {} and tools.calls == []


async def test_ends_workflow_stops_early(tools: Tools, store: Any) -> None:
    spec = flow(
        MapStep(name="first", output={"v": lit(1)}, ends_workflow=True),
        ToolStep(name="never", tool="fetch", arguments={"order_id": "X"}),
    )
    async with _session(tools, store) as s:
        state = await s.state(await _finish(s, spec))
    assert state.terminal_state is psych_runtime.TerminalState.COMPLETED
    assert state.output == {"first": {"v": 1}}
    assert tools.calls == []


async def test_sleep_parks_a_timer_and_wakes(tools: Tools, store: Any) -> None:
    spec = flow(SleepStep(name="nap", seconds=0.4), MapStep(name="after", output={"v": lit(1)}))
    async with _session(tools, store) as s:
        started = time.monotonic()
        run = await s.dispatch(spec, input={})
        await _settled(s, run.run_id)
        elapsed = time.monotonic() - started
        log = await s.read_log(run.run_id)
    assert elapsed >= 0.4
    assert [r.reason for r in log if isinstance(r, Suspended)] == [SuspendReason.TIMER]


def _paid_then_after(properties: dict[str, Any]) -> WorkflowSpec:
    """Wait for a payment whose payload has these properties, amount required; map it."""
    return flow(
        WaitStep(
            name="paid",
            event="payment.settled",
            payload_schema={"type": "object", "required": ["amount"], "properties": properties},
        ),
        MapStep(name="after", output={"amount": p("steps.paid.output.amount")}),
    )


async def test_wait_for_an_event_checks_its_payload(tools: Tools, store: Any) -> None:
    spec = _paid_then_after({"amount": {"type": "integer"}})
    async with _session(tools, store) as s:
        run = await s.dispatch(spec, input={})
        await _waiting(s, run.run_id)
        status = await s.status(run.run_id)
        assert status.pending_wait is not None and status.pending_wait.event == "payment.settled"
        with pytest.raises(psych_runtime.InvalidResume):
            await s.resume(run.run_id, payload={"amount": "lots"})
        await s.resume(run.run_id, payload={"amount": 30}, by="psp-webhook")
        await _settled(s, run.run_id)
        state = await s.state(run.run_id)
    assert state.output["after"] == {"amount": 30}  # type: ignore[index]


async def test_a_wait_steps_bounds_are_enforced_not_only_its_types(
    tools: Tools, store: Any
) -> None:
    spec = _paid_then_after(
        {
            "amount": {"type": "integer", "minimum": 0},
            "lines": {"type": "array", "maxItems": 20},
        }
    )
    async with _session(tools, store) as s:
        run = await s.dispatch(spec, input={})
        await _waiting(s, run.run_id)
        for bad in ({"amount": -1}, {"amount": 1, "lines": list(range(21))}):
            with pytest.raises(psych_runtime.InvalidResume):
                await s.resume(run.run_id, payload=bad)
            assert (await s.status(run.run_id)).suspend_reason is not None
        await s.resume(run.run_id, payload={"amount": 0, "lines": list(range(20))})
        await _settled(s, run.run_id)
        state = await s.state(run.run_id)
    assert state.output["after"] == {"amount": 0}  # type: ignore[index]


async def test_an_input_past_its_max_items_fails_before_any_step(tools: Tools, store: Any) -> None:
    spec = flow(
        ToolStep(name="fetch", tool="fetch", arguments={"order_id": "A1"}),
        input_schema={"type": "object", "properties": {"lines": {"maxItems": 20}}},
    )
    async with _session(tools, store) as s:
        state = await s.state(await _finish(s, spec, lines=list(range(21))))
    assert state.failure is not None and state.failure.kind == "input_invalid"
    assert "lines" in state.failure.message and tools.calls == []


@pytest.mark.parametrize(
    "field",
    [
        {"input_schema": {"type": "obj"}},
        {"input_schema": {"properties": {"n": {"minimum": "zero"}}}},
        {"input_schema": {"$ref": "https://schemas.example.com/input.json"}},
    ],
)
async def test_publish_refuses_a_schema_the_validator_cannot_use(
    field: dict[str, Any], store: Any
) -> None:
    spec = flow(MapStep(name="m", output={"v": lit(1)}), **field)
    with pytest.raises(psych_runtime.SpecValidationError) as refused:
        await psych_runtime.publish(store, spec, scope=ACME)
    assert "input_schema" in str(refused.value)


async def test_publish_refuses_a_bad_step_output_or_payload_schema(store: Any) -> None:
    bad = {"type": "object", "required": "amount"}
    for step in (
        MapStep(name="m", output={"v": lit(1)}, output_schema=bad),
        WaitStep(name="w", event="e", payload_schema=bad),
    ):
        with pytest.raises(psych_runtime.SpecValidationError) as refused:
            await psych_runtime.publish(store, flow(step), scope=ACME)
        assert "schema" in str(refused.value)


async def test_a_human_step_asks_and_its_answer_is_the_output(tools: Tools, store: Any) -> None:
    spec = flow(
        HumanStep(name="ok", prompt="Ship order A1?", questions=("Which carrier?",)),
        MapStep(name="after", output={"carrier": p("steps.ok.output.carrier")}),
    )
    async with _session(tools, store) as s:
        run = await s.dispatch(spec, input={})
        await _waiting(s, run.run_id)
        pending = (await s.status(run.run_id)).pending_question
        assert pending is not None and "Ship order A1?" in pending.summary
        assert [q.question for q in pending.questions] == ["Which carrier?"]
        await s.resume(run.run_id, payload={"carrier": "ups"}, by="ops")
        await _settled(s, run.run_id)
        state = await s.state(run.run_id)
    assert state.output["after"] == {"carrier": "ups"}  # type: ignore[index]


async def test_a_nested_workflow_has_its_own_namespace(tools: Tools, store: Any) -> None:
    inner = WorkflowSpec(
        name="inner",
        steps=(MapStep(name="same", output={"x": p("input.x")}),),
        output={"got": p("steps.same.output.x")},
    )
    spec = flow(
        MapStep(name="same", output={"x": lit("outer")}),
        WorkflowStepRef(name="sub", spec=inner, input={"x": p("steps.same.output.x")}),
    )
    async with _session(tools, store) as s:
        state = await s.state(await _finish(s, spec))
    assert state.output == {"same": {"x": "outer"}, "sub": {"got": "outer"}}


async def test_agent_steps_run_the_loop_as_a_nested_run(tools: Tools, store: Any) -> None:
    agent = psych_runtime.AgentSpec(name="writer", model="fake-standard", tools=("fetch",))
    model = (
        FakeModel()
        .turn(tool_calls=[("fetch", {"order_id": "A9"})])
        .turn(text="A9 has three lines.")
        .raises_permanent(403)
    )
    spec = flow(AgentStep(name="describe", spec=agent, input={"message": p("input.ask")}))
    failing = flow(AgentStep(name="describe", spec=agent, input={"message": lit("again")}))
    async with _session(tools, store, model) as s:
        state = await s.state(await _finish(s, spec, ask="Describe A9"))
        failed = await s.state(await _finish(s, failing))
        child = state.steps[next(iter(state.steps))].child_run_id
        assert child is not None
        child_report = await s.report(child)
    assert state.output == {"describe": {"text": "A9 has three lines."}}
    assert child_report.terminal_state is psych_runtime.TerminalState.COMPLETED
    assert tools.calls == [("fetch", "A9")]
    # A failed agent step records the agent's own failure kind.
    assert failed.failure is not None and failed.failure.kind != "agent_failed"
    assert failed.failure.kind == next(iter(failed.steps.values())).failure.kind  # type: ignore[union-attr]


async def test_tool_steps_go_through_approvals(tools: Tools, store: Any) -> None:
    spec = flow(ToolStep(name="pay_back", tool="refund", arguments={"order_id": "A1"}))
    rules = psych_runtime.ApprovalRules(selectors=("@destructive",))
    async with _session(tools, store, approvals=rules) as s:
        approved = await s.dispatch(spec, input={})
        await _waiting(s, approved.run_id)
        assert tools.calls == []
        pending = (await s.status(approved.run_id)).pending_approval
        assert pending is not None and pending.step_id is not None
        await s.resume(approved.run_id, approved=True, by="alice")
        await _settled(s, approved.run_id)
        denied = await s.dispatch(spec, input={})
        await _waiting(s, denied.run_id)
        await s.resume(denied.run_id, approved=False, by="bob")
        await _settled(s, denied.run_id)
        refused = await s.state(denied.run_id)
    assert tools.calls == [("refund", "A1")]
    assert refused.failure is not None and refused.failure.kind == "denied"


@pytest.mark.parametrize("idempotent", [False, True], ids=["in-doubt", "idempotent"])
async def test_a_completed_step_is_never_run_again_after_a_crash(
    tools: Tools, store: Any, idempotent: bool
) -> None:
    from psych_runtime.testing import crash_and_recover

    spec = flow(
        ToolStep(name="fetch", tool="fetch", arguments={"order_id": "A1"}),
        ToolStep(name="twice", tool="double", arguments={"n": 21}),
        MapStep(name="done", output={"v": p("steps.twice.output.result")}),
        tools=("fetch", "double"),
    )
    registry = tools.registry()
    if idempotent:
        registry = psych_runtime.ToolRegistry()
        for name in ("fetch", "double"):
            tool = tools.registry().get(name)
            assert tool is not None
            registry.register(tool.function, idempotent=name == "double")
    published = await psych_runtime.publish(store, spec, scope=ACME)
    # Killed just before the second tool's completion is written: the first step's
    # completion is durable (it went out with the second step's start).
    recovery = await crash_and_recover(
        store,
        FakeModel(),
        registry,
        published,
        input={},
        scope=ACME,
        crash_before="step_completed",
        occurrence=2,
    )
    state = psych_runtime.records.reduce(recovery.final_log)
    assert tools.calls.count(("fetch", "A1")) == 1  # read back, never run again
    if idempotent:
        assert state.output == {
            "fetch": {"id": "A1", "lines": ["a", "b", "c"], "total": 30},
            "twice": {"result": 42},
            "done": {"v": 42},
        }
        assert tools.calls.count(("double", 21)) == 2  # safe to repeat, so repeated
    else:
        assert state.failure is not None and state.failure.kind == "orphaned"
        assert tools.calls.count(("double", 21)) == 1  # in doubt: reported, not rerun


async def test_status_shows_step_progress_and_stream_carries_step_records(
    tools: Tools, store: Any
) -> None:
    spec = flow(
        MapStep(name="one", output={"v": lit(1)}),
        ToolStep(
            name="maybe", tool="fetch", arguments={"order_id": "X"}, when=Condition(path="input.no")
        ),
        WaitStep(name="gate", event="go"),
        MapStep(name="after", output={"v": lit(2)}),
    )
    async with _session(tools, store) as s:
        run = await s.dispatch(spec, input={})
        await _waiting(s, run.run_id)
        waiting = await s.status(run.run_id)
        await s.resume(run.run_id, payload={})
        await _settled(s, run.run_id)
        done = await s.status(run.run_id)
        report = await s.report(run.run_id)
        streamed = [r.type async for r in s.stream(run.run_id)]
    assert [(step.name, step.completed, step.skipped) for step in report.steps] == [
        ("one", True, False),
        ("maybe", True, True),
        ("gate", True, False),
        ("after", True, False),
    ]
    assert (waiting.steps_completed, waiting.steps_skipped, waiting.steps_running) == (
        1,
        1,
        ("gate",),
    )
    assert (done.steps_completed, done.steps_skipped, done.steps_running) == (3, 1, ())
    assert streamed.count("step_started") == 4 and streamed.count("step_completed") == 4


async def test_a_replay_reuses_steps_before_its_start_and_runs_the_rest(
    tools: Tools, store: Any
) -> None:
    spec = flow(
        ToolStep(name="fetch", tool="fetch", arguments={"order_id": "A1"}),
        ToolStep(name="twice", tool="double", arguments_from={"n": p("steps.fetch.output.total")}),
        MapStep(name="done", output={"v": p("steps.twice.output.result")}),
    )
    async with _session(tools, store) as s:
        first = await _finish(s, spec)
        replay = await s.dispatch(spec, input={}, replay_of=first, replay_from="twice")
        await _settled(s, replay.run_id)
        state = await s.state(replay.run_id)
        with pytest.raises(psych_runtime.InvalidDispatch):
            await s.dispatch(spec, input={}, replay_of=first, replay_from="nope")
        with pytest.raises(psych_runtime.InvalidDispatch):
            await s.dispatch(spec, input={}, breakpoints=("nope",))
    assert state.output == {
        "fetch": {"id": "A1", "lines": ["a", "b", "c"], "total": 30},
        "twice": {"result": 60},
        "done": {"v": 60},
    }
    # fetch ran once (for the first Run); twice ran for both.
    assert tools.calls.count(("fetch", "A1")) == 1
    assert tools.calls.count(("double", 30)) == 2
    reused = [r for r in state.step_starts if r.replayed_from is not None]
    assert [r.name for r in reused] == ["fetch"]


async def test_breakpoints_suspend_before_a_step_and_step_mode_stops_at_each(
    tools: Tools, store: Any
) -> None:
    spec = flow(
        MapStep(name="a", output={"v": lit(1)}),
        MapStep(name="b", output={"v": lit(2)}),
        MapStep(name="c", output={"v": lit(3)}),
    )
    async with _session(tools, store) as s:
        run = await s.dispatch(spec, input={}, breakpoints=("b",))
        await _waiting(s, run.run_id)
        status = await s.status(run.run_id)
        assert status.suspend_reason is SuspendReason.BREAKPOINT
        assert status.steps_completed == 1  # stopped before b started
        await s.resume(run.run_id, payload={"step_mode": True})
        await _waiting(s, run.run_id)  # stepping: stops again before c
        assert (await s.status(run.run_id)).steps_completed == 2
        await s.resume(run.run_id, payload={"step_mode": False})
        await _settled(s, run.run_id)
        state = await s.state(run.run_id)
    assert state.output == {"a": {"v": 1}, "b": {"v": 2}, "c": {"v": 3}}
