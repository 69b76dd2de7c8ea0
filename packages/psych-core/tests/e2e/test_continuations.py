"""A continuation's model sees the conversation it continues, and next_run messages."""

import asyncio

import psych_runtime
from psych_runtime.models import AssistantMessage
from psych_runtime.models import ToolResultMessage
from psych_runtime.models import UserMessage
from psych_runtime.records import QueueKind
from psych_runtime.testing import FakeModel

from .conftest import ACME


def _chat(max_history_records: int = 300) -> psych_runtime.AgentSpec:
    return psych_runtime.AgentSpec(
        name="chat",
        model="fake-standard",
        tools=("lookup",),
        limits=psych_runtime.Limits(max_history_records=max_history_records),
    )


async def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"{order_id} shipped"


def _shown(message: object) -> tuple[str, str]:
    if isinstance(message, UserMessage):
        return ("user", message.content)
    if isinstance(message, AssistantMessage):
        return ("assistant", message.content or ",".join(c.name for c in message.tool_calls))
    if isinstance(message, ToolResultMessage):
        return ("tool", message.content)
    return ("system", "")


def _seen(model: FakeModel, request: int) -> list[tuple[str, str]]:
    """What the model was shown in its ``request``-th request, past its system prompt."""
    return [_shown(m) for m in model.requests[request].messages if _shown(m)[0] != "system"]


async def test_the_model_of_a_continuation_sees_the_earlier_conversation_first() -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[("lookup", {"order_id": "A1"})])
        .turn(text="A1 has shipped.")
        .turn(text="You asked about A1.")
    )
    async with psych_runtime.session(model, tools=[lookup], scope=ACME) as s:
        first = await s.ask(_chat(), "where is A1?")
        await s.ask(_chat(), "what did I ask?", continues=first.run_id)
    assert _seen(model, 2) == [
        ("user", "where is A1?"),
        ("assistant", "lookup"),
        ("tool", "A1 shipped"),
        ("assistant", "A1 has shipped."),
        ("user", "what did I ask?"),
    ]


async def test_next_run_messages_are_carried_into_the_continuation_in_order() -> None:
    gate = asyncio.Event()

    async def hold(order_id: str) -> str:
        """Wait until released."""
        await gate.wait()
        return "held"

    model = (
        FakeModel()
        .turn(tool_calls=[("hold", {"order_id": "A1"})])
        .turn(text="Noted.")
        .turn(text="Both received.")
    )
    spec = _chat().model_copy(update={"tools": (psych_runtime.CodeTool(name="hold"),)})
    async with psych_runtime.session(model, tools=[hold], scope=ACME) as s:
        first = await s.dispatch(spec, "hello")
        # Sent while the first Run works: kept for the Run that continues it.
        await s.send(first.run_id, "first for later", queue=QueueKind.NEXT_RUN)
        await s.send(first.run_id, "second for later", queue=QueueKind.NEXT_RUN)
        gate.set()
        await s.wait(first.run_id, timeout=10)
        second = await s.ask(spec, "go on", continues=first.run_id)
        thread = await s.thread(second.run_id)
    assert _seen(model, 2) == [
        ("user", "hello"),
        ("assistant", "hold"),
        ("tool", "held"),
        ("assistant", "Noted."),
        ("user", "first for later"),
        ("user", "second for later"),
        ("user", "go on"),
    ]
    assert [(m.role, m.content) for m in thread.messages] == [
        ("user", "hello"),
        ("assistant", ""),
        ("tool", "held"),
        ("assistant", "Noted."),
        ("user", "first for later"),
        ("user", "second for later"),
        ("user", "go on"),
        ("assistant", "Both received."),
    ]


async def test_history_is_bounded_and_older_runs_replay_whole_or_not_at_all() -> None:
    model = FakeModel()
    for n in range(4):
        model.turn(text=f"answer {n}")
    async with psych_runtime.session(model, tools=[lookup], scope=ACME) as s:
        one = await s.ask(_chat(), "q0")
        two = await s.ask(_chat(), "q1", continues=one.run_id)
        # A budget smaller than two Runs: only the immediate predecessor, whole.
        size = len(await s.read_log(two.run_id))
        await s.ask(_chat(max_history_records=size + 1), "q2", continues=two.run_id)
        await s.ask(_chat(max_history_records=0), "q3", continues=two.run_id)
    third = _seen(model, 2)
    assert third == [("user", "q1"), ("assistant", "answer 1"), ("user", "q2")]
    fourth = _seen(model, 3)
    assert fourth == [("user", "q3")]
