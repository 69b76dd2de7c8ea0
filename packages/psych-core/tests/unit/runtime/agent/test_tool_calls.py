"""``tool_calls.run_calls``: the calls of one answer, in order, and what cuts a turn short."""

from typing import Any

import psych_runtime
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import Suspended
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.spec import Limits
from psych_runtime.core.spec import SuspensionPolicy
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.gate import WAITING_MESSAGE
from psych_runtime.runtime.agent.tool_calls import run_calls
from psych_runtime.testing import LogBuilder
from psych_runtime.tools.approval import ApprovalRules
from psych_runtime.tools.ask_question import ASK_QUESTION
from psych_runtime.tools.registry import ToolRegistry

from .conftest import Attempt
from .conftest import Orders
from .conftest import agent
from .conftest import answer
from .conftest import asked
from .conftest import open_attempt
from .conftest import started
from .conftest import tool_turn

SPEC = agent(tools=("lookup", "refund"))
A1: JsonObject = {"order_id": "A1"}
B2: JsonObject = {"order_id": "B2"}


async def _turn(
    orders: Orders, log: LogBuilder | None = None, spec: AgentSpec = SPEC, **deps: Any
) -> Attempt:
    """Turn 1 is open for ``orders``' tools, with nothing run yet."""
    log = tool_turn(log if log is not None else started())
    return await open_attempt(log, spec=spec, registry=orders.registry, **deps)


async def test_each_call_runs_in_order_and_the_loop_takes_another_turn() -> None:
    orders = Orders()
    attempt = await _turn(orders)
    reply = answer(attempt, ("lookup", A1), ("refund", B2))
    assert await run_calls(attempt.ctx, reply) is Next.CONTINUE
    assert orders.calls == [("lookup", "A1"), ("refund", "B2")]
    assert attempt.types() == ["tool_call_started", "tool_call_finished"] * 2
    assert attempt.finish("c2").result == "B2: refunded"
    # Each start was written before its call ran; the last finish is only staged.
    durable = [r.type for r in await attempt.durable()]
    assert durable == ["tool_call_started", "tool_call_finished", "tool_call_started"]


async def test_a_calls_start_is_durable_before_the_tool_runs() -> None:
    registry = ToolRegistry()
    seen: list[list[str]] = []
    holder: list[Attempt] = []

    async def audit(order_id: str) -> str:
        """Read the Run's log from inside the call."""
        log = await holder[0].store.read(holder[0].journal.run_id)
        seen.append([r.type for r in log[holder[0].seen :]])
        return "ok"

    registry.register(audit)
    attempt = await open_attempt(
        tool_turn(started()), spec=agent(tools=("audit",)), registry=registry
    )
    holder.append(attempt)
    await run_calls(attempt.ctx, answer(attempt, ("audit", A1)))
    assert seen == [["tool_call_started"]]


async def test_calls_past_the_per_turn_cap_are_recorded_and_not_run() -> None:
    orders = Orders()
    attempt = await _turn(
        orders, spec=agent(tools=("lookup",), limits=Limits(max_tool_calls_per_turn=2))
    )
    reply = answer(attempt, ("lookup", A1), ("lookup", B2), ("lookup", {"order_id": "C3"}))
    assert await run_calls(attempt.ctx, reply) is Next.CONTINUE
    assert orders.calls == [("lookup", "A1"), ("lookup", "B2")]
    failure = attempt.failure("c3")
    assert (failure.kind, failure.message) == (
        "not_executed",
        "only 2 tool calls are allowed per turn; this one was not run",
    )


async def test_a_refused_call_does_not_stop_the_calls_after_it() -> None:
    orders = Orders()
    attempt = await _turn(orders)
    reply = answer(attempt, ("shred", A1), ("lookup", "{oops"), ("lookup", A1))
    assert await run_calls(attempt.ctx, reply) is Next.CONTINUE
    assert attempt.failure("c1").kind == "unknown_tool"
    assert attempt.failure("c2").kind == "malformed_arguments"
    assert orders.calls == [("lookup", "A1")]


async def test_a_repeat_past_the_hard_stop_ends_the_turn() -> None:
    orders = Orders()
    log = started()
    for n in range(3):
        tool_turn(log, f"r{n}").tool_started(f"r{n}", tool="lookup", arguments=A1)
        log.tool_finished(f"r{n}", result="A1: shipped")
    limits = Limits(repeat_call_threshold=2, repeat_call_hard_stop=3)
    attempt = await _turn(orders, log, spec=agent(tools=("lookup", "refund"), limits=limits))
    reply = answer(attempt, ("lookup", A1), ("refund", B2))
    assert await run_calls(attempt.ctx, reply) is Next.CONTINUE
    assert attempt.failure("c1").kind == "repeated_call"
    assert attempt.failure("c2").kind == "not_executed"
    assert orders.calls == []


async def _question_then_lookup(orders: Orders, question: JsonObject) -> tuple[Attempt, Next]:
    """A turn that asks ``question``, then looks A1 up, on an agent that may ask."""
    spec = agent(tools=("lookup",), suspension=SuspensionPolicy(may_ask_questions=True))
    attempt = await _turn(orders, spec=spec)
    reply = answer(attempt, (ASK_QUESTION, question), ("lookup", A1))
    return attempt, await run_calls(attempt.ctx, reply)


async def test_a_question_suspends_the_run_and_the_calls_after_it_wait() -> None:
    orders = Orders()
    attempt, after = await _question_then_lookup(orders, asked())
    assert after is Next.STOP
    assert attempt.state.suspended and attempt.state.suspend_reason is SuspendReason.QUESTION
    assert attempt.failure("c2").kind == "not_executed"
    assert orders.calls == []


async def test_a_malformed_question_is_refused_and_the_next_call_runs() -> None:
    orders = Orders()
    attempt, after = await _question_then_lookup(orders, {"questions": "which?"})
    assert after is Next.CONTINUE
    assert attempt.failure("c1").kind == "invalid_arguments"
    assert orders.calls == [("lookup", "A1")]


async def test_a_call_that_needs_a_person_suspends_the_run_before_it_runs() -> None:
    orders = Orders()
    attempt = await _turn(orders, approvals=ApprovalRules(selectors=("refund",)))
    reply = answer(attempt, ("lookup", A1), ("refund", B2), ("lookup", B2))
    assert await run_calls(attempt.ctx, reply) is Next.STOP
    assert orders.calls == [("lookup", "A1")]
    assert "c2" in attempt.state.open_tool_calls  # started, waiting for the decision
    (suspended,) = attempt.new(Suspended)
    assert suspended.reason is SuspendReason.APPROVAL and suspended.pending_call_id == "c2"
    failure = attempt.failure("c3")
    assert (failure.kind, failure.message) == ("not_executed", WAITING_MESSAGE)
    assert [r.type for r in await attempt.durable()] == attempt.types()


async def test_a_call_the_policy_denies_is_refused_and_the_next_one_runs() -> None:
    class NoRefunds:
        def allow_tool(self, scope: object, tool: str, arguments: object) -> psych_runtime.Decision:
            if tool == "refund":
                return psych_runtime.Decision.deny("not today")
            return psych_runtime.Decision.allow()

    orders = Orders()
    attempt = await _turn(orders, policy=NoRefunds())
    reply = answer(attempt, ("refund", A1), ("lookup", B2))
    assert await run_calls(attempt.ctx, reply) is Next.CONTINUE
    assert attempt.failure("c1").kind == "access_denied"
    assert orders.calls == [("lookup", "B2")]


async def test_an_abort_in_the_log_before_a_call_runs_closes_it_and_the_rest() -> None:
    orders = Orders()
    attempt = await _turn(orders, started().abort())
    reply = answer(attempt, ("lookup", A1), ("refund", B2))
    assert await run_calls(attempt.ctx, reply) is Next.CONTINUE
    assert orders.calls == []
    for call_id in ("c1", "c2"):
        failure = attempt.failure(call_id)
        assert (failure.kind, failure.message) == ("not_executed", "the run was asked to stop")


async def test_an_abort_landing_while_a_call_runs_closes_the_calls_after_it() -> None:
    orders = Orders()
    holder: list[Attempt] = []

    async def interrupting(order_id: str) -> str:
        """Look an order up, while someone interrupts the Run."""
        await psych_runtime.interrupt(holder[0].store, holder[0].journal.run_id)
        return f"{order_id}: shipped"

    orders.registry.register(interrupting)
    spec = agent(tools=("interrupting", "refund"))
    attempt = await _turn(orders, spec=spec, approvals=ApprovalRules(selectors=("refund",)))
    holder.append(attempt)
    reply = answer(attempt, ("interrupting", A1), ("refund", B2), ("shred", B2))
    assert await run_calls(attempt.ctx, reply) is Next.CONTINUE
    assert attempt.finish("c1").outcome is ToolOutcome.OK
    # Seen as soon as the call is over: nothing after it is checked, judged or put
    # to a person.
    for call_id in ("c2", "c3"):
        failure = attempt.failure(call_id)
        assert (failure.kind, failure.message) == ("not_executed", "the run was asked to stop")
    assert attempt.state.aborted and not attempt.state.suspended
