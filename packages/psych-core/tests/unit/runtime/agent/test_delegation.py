"""``delegation.run_subagent_tool``: ``delegate`` runs a roster child inline to its end."""

from typing import Any

from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.messages import SystemMessage
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import RunAdmitted
from psych_runtime.core.records import SubagentFinished
from psych_runtime.core.records import SubagentSpawned
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolCallStarted
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.spec import Limits
from psych_runtime.core.spec import SubagentRef
from psych_runtime.core.spec import SuspensionPolicy
from psych_runtime.core.spec.agent import AgentSpec
from psych_runtime.runtime.agent.delegation import SUSPENDED_CHILD_MESSAGE
from psych_runtime.runtime.agent.delegation import run_subagent_tool
from psych_runtime.runtime.journal import Journal
from psych_runtime.store.port import RunState
from psych_runtime.testing import FakeModel
from psych_runtime.testing import LogBuilder
from psych_runtime.tools.subagents import CHECK_SUBAGENT
from psych_runtime.tools.subagents import DELEGATE

from .conftest import Attempt
from .conftest import agent
from .conftest import asked
from .conftest import open_attempt
from .conftest import started
from .conftest import tool_turn

C1 = ToolCallId("c1")
TASK: JsonObject = {"agent": "researcher", "task": "Find out when order A1 shipped."}


def _parent(child: AgentSpec | None = None, **spec: Any) -> AgentSpec:
    ref = SubagentRef(
        name="researcher",
        description="Looks things up about orders and reports back.",
        spec=child if child is not None else agent(instructions="Research orders."),
    )
    return agent(subagents=(ref,), **spec)


async def _delegating(
    model: FakeModel, spec: AgentSpec | None = None, log: LogBuilder | None = None
) -> Attempt:
    log = tool_turn(log if log is not None else started(), "c1")
    log.tool_started("c1", tool=DELEGATE, arguments=TASK)
    return await open_attempt(log, spec=spec if spec is not None else _parent(), model=model)


async def test_a_delegated_child_runs_to_its_end_and_its_answer_comes_back() -> None:
    model = FakeModel().turn(text="A1 shipped on Monday.")
    attempt = await _delegating(model)
    executed = await run_subagent_tool(attempt.ctx, C1, DELEGATE, TASK)
    assert executed.outcome is ToolOutcome.OK and isinstance(executed.result, dict)
    raw_id = executed.result["run_id"]
    assert isinstance(raw_id, str)
    child_id = RunId(raw_id)
    text = "A1 shipped on Monday."
    assert executed.result == {"run_id": child_id, "state": "completed", "text": text}
    (spawned,) = attempt.new(SubagentSpawned)
    assert (spawned.child_run_id, spawned.name, spawned.call_id) == (child_id, "researcher", "c1")
    assert not spawned.background and spawned.delegation_depth == 1
    (finished,) = attempt.new(SubagentFinished)
    assert finished.state is TerminalState.COMPLETED
    assert not attempt.state.children[child_id].alive
    # The child's own log and header: run inline in this Attempt, then settled.
    header = await attempt.store.get_run(child_id)
    assert header is not None and header.state is RunState.SETTLED
    assert header.parent_run_id == attempt.journal.run_id
    admitted = (await attempt.store.read(child_id))[0]
    assert isinstance(admitted, RunAdmitted) and admitted.input == {"message": TASK["task"]}
    prompt = model.last_request.messages[0]
    assert isinstance(prompt, SystemMessage) and prompt.content.startswith("Research orders.")


async def test_the_spawn_is_durable_before_the_child_runs() -> None:
    model = FakeModel().turn(text="done")
    attempt = await _delegating(model)
    written: list[str] = []
    real_nested = attempt.ctx.run_nested

    async def nested(ctx: Any, journal: Journal, spec: AgentSpec) -> None:
        written.extend(r.type for r in await attempt.durable())
        await real_nested(ctx, journal, spec)

    attempt.ctx.run_nested = nested
    await run_subagent_tool(attempt.ctx, C1, DELEGATE, TASK)
    assert written == ["subagent_spawned"]


async def test_a_retried_delegate_finds_the_child_it_started_and_does_not_run_it_twice() -> None:
    model = FakeModel().turn(text="A1 shipped on Monday.")
    attempt = await _delegating(model)
    first = await run_subagent_tool(attempt.ctx, C1, DELEGATE, TASK)
    again = await run_subagent_tool(attempt.ctx, C1, DELEGATE, TASK)
    assert again.result == first.result
    assert len(attempt.new(SubagentSpawned)) == 1 and len(attempt.new(SubagentFinished)) == 1
    assert len(model.requests) == 1


async def test_a_retry_is_not_refused_by_a_cap_the_first_try_passed() -> None:
    # Since the first try, another call of the turn started a child, using up the
    # turn's fan-out; the retry carries on with the child it already has.
    model = FakeModel().turn(text="A1 shipped on Monday.")
    attempt = await _delegating(model, _parent(limits=Limits(max_fanout_per_turn=1)))
    first = await run_subagent_tool(attempt.ctx, C1, DELEGATE, TASK)
    journal = attempt.journal
    journal.stage(ToolCallStarted, call_id="c2", tool=DELEGATE, arguments=TASK, turn=1)
    journal.stage(
        SubagentSpawned,
        child_run_id="run_other",
        name="other",
        call_id="c2",
        child_version_hash="sha256:other",
    )
    again = await run_subagent_tool(attempt.ctx, C1, DELEGATE, TASK)
    assert again.outcome is ToolOutcome.OK and again.result == first.result
    fresh = await run_subagent_tool(attempt.ctx, ToolCallId("c3"), DELEGATE, TASK)
    assert fresh.failure is not None and fresh.failure.kind == "fanout_exceeded"


async def test_a_child_that_stops_to_wait_for_a_person_is_ended_failed() -> None:
    child = agent(suspension=SuspensionPolicy(may_ask_questions=True))
    model = FakeModel().turn(tool_calls=[("ask_question", asked())])
    attempt = await _delegating(model, _parent(child))
    executed = await run_subagent_tool(attempt.ctx, C1, DELEGATE, TASK)
    assert executed.outcome is ToolOutcome.OK  # the call worked; the child did not
    assert isinstance(executed.result, dict)
    assert executed.result["state"] == "failed"
    assert executed.result["error"] == SUSPENDED_CHILD_MESSAGE
    (finished,) = attempt.new(SubagentFinished)
    assert finished.failure is not None and finished.failure.kind == "child_suspended"


async def test_a_child_that_fails_reports_why() -> None:
    attempt = await _delegating(FakeModel().raises_permanent(400, message="bad request"))
    executed = await run_subagent_tool(attempt.ctx, C1, DELEGATE, TASK)
    assert isinstance(executed.result, dict)
    assert executed.result["state"] == "failed" and executed.result["error"] == "bad request"


async def test_a_delegation_past_the_depth_cap_is_refused_before_any_child_exists() -> None:
    log = LogBuilder().admitted(delegation_depth=2).attempt()
    model = FakeModel()
    attempt = await _delegating(model, _parent(limits=Limits(max_delegation_depth=2)), log)
    executed = await run_subagent_tool(attempt.ctx, C1, DELEGATE, TASK)
    assert executed.outcome is ToolOutcome.ERROR and executed.failure is not None
    assert executed.failure.kind == "delegation_depth"
    assert attempt.new() == [] and model.requests == ()


async def test_a_delegation_naming_no_roster_entry_is_refused_as_invalid() -> None:
    attempt = await _delegating(FakeModel())
    wanted: JsonObject = {"agent": "stranger", "task": "Anything."}
    executed = await run_subagent_tool(attempt.ctx, C1, DELEGATE, wanted)
    assert executed.failure is not None and executed.failure.kind == "invalid_arguments"
    assert "agent: one of researcher" in executed.failure.message


async def test_a_refusal_of_any_subagent_built_in_is_an_ordinary_failed_call() -> None:
    attempt = await _delegating(FakeModel())
    executed = await run_subagent_tool(attempt.ctx, C1, CHECK_SUBAGENT, {"name": "nobody"})
    assert executed.outcome is ToolOutcome.ERROR and executed.failure is not None
    assert executed.failure.kind == "unknown_subagent"
