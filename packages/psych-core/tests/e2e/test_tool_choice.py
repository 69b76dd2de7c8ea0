"""``ModelRef.tool_choice`` from the Spec to the request, and onto each provider's wire."""

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

import psych_runtime
from psych_runtime import AgentSpec
from psych_runtime import EgressPolicy
from psych_runtime import HttpTransport
from psych_runtime import ModelRef
from psych_runtime import OpenAICompatibleClient
from psych_runtime.models import AnthropicClient
from psych_runtime.models import ModelClient
from psych_runtime.spec import NamedToolChoice
from psych_runtime.spec import ToolChoice
from psych_runtime.testing import FakeModel

from ..support.anthropic_server import message_stream
from ..support.anthropic_server import serve_anthropic
from ..support.anthropic_server import text_block
from ..support.anthropic_server import tool_block
from ..support.openai_server import OpenAIServer
from ..support.openai_server import call_fragment
from ..support.openai_server import chunk
from ..support.openai_server import serve_openai
from ..support.openai_server import sse
from ..support.openai_server import text_reply
from .conftest import ACME

LOCAL = EgressPolicy(allow_hosts=frozenset({"127.0.0.1"}))


async def lookup(order_id: str) -> dict[str, str]:
    """Look up an order."""
    return {"order_id": order_id, "status": "shipped"}


def courier(tool_choice: ToolChoice | str | None) -> AgentSpec:
    return AgentSpec(
        name="courier",
        instructions="Answer questions about orders.",
        model=ModelRef("gpt-test", tool_choice=tool_choice),
        tools=("lookup",),
    )


async def ask(model: ModelClient, spec: AgentSpec) -> psych_runtime.AnswerView:
    async with psych_runtime.session(model, tools=[lookup], scope=ACME) as s:
        return await s.ask(spec, "Where is A1?")


@pytest.mark.parametrize(
    ("written", "sent"),
    [
        ("required", ["required", "auto"]),
        ("none", ["none", "none"]),
        ("auto", ["auto", "auto"]),
        ("lookup", [NamedToolChoice(name="lookup"), "auto"]),
        (None, [None, None]),
    ],
)
async def test_the_choice_reaches_the_requests_of_the_run(
    written: str | None, sent: list[ToolChoice | None]
) -> None:
    model = (
        FakeModel().turn(tool_calls=[("lookup", {"order_id": "A1"})]).turn(text="A1 has shipped.")
    )
    answer = await ask(model, courier(written))
    assert answer.text == "A1 has shipped."
    # A forcing choice holds until the model has called a tool, then lets it answer.
    assert [request.tool_choice for request in model.requests] == sent
    assert [d.name for d in model.requests[0].tools] == ["lookup"]


async def test_a_forced_choice_applies_again_to_a_steer() -> None:
    gate = asyncio.Event()

    async def slow_lookup(order_id: str) -> dict[str, str]:
        """Look up an order, slowly."""
        await gate.wait()
        return {"order_id": order_id, "status": "shipped"}

    model = (
        FakeModel()
        .turn(tool_calls=[("slow_lookup", {"order_id": "A1"})])
        .turn(tool_calls=[("slow_lookup", {"order_id": "B2"})])
        .turn(text="Both have shipped.")
    )
    spec = AgentSpec(
        name="courier",
        model=ModelRef("gpt-test", tool_choice="required"),
        tools=("slow_lookup",),
    )
    async with psych_runtime.session(model, tools=[slow_lookup], scope=ACME) as s:
        run = await s.dispatch(await s.publish(spec), "Where is A1?")
        while not model.requests:
            await asyncio.sleep(0.01)
        await s.send(run.run_id, "And B2?")
        gate.set()
        await s.wait(run.run_id)
    sent = [request.tool_choice for request in model.requests]
    assert sent == ["required", "required", "auto"], sent


@pytest.fixture
async def server() -> AsyncIterator[OpenAIServer]:
    async with serve_openai(models=("gpt-test",)) as running:
        yield running


@pytest.fixture
async def transport() -> AsyncIterator[HttpTransport]:
    async with HttpTransport(policy=LOCAL) as seam:
        yield seam


@pytest.mark.parametrize(
    ("written", "on_the_wire"),
    [
        ("required", "required"),
        ("none", "none"),
        ("lookup", {"type": "function", "function": {"name": "lookup"}}),
    ],
)
async def test_the_choice_is_sent_on_the_openai_wire(
    server: OpenAIServer, transport: HttpTransport, written: str, on_the_wire: Any
) -> None:
    after = {"required": "auto", "lookup": "auto", "none": "none"}
    server.script(
        sse(
            chunk(tool_calls=[call_fragment(0, id="c1", name="lookup", arguments='{"order_id":')]),
            chunk(tool_calls=[call_fragment(0, arguments='"A1"}')]),
            chunk(finish="tool_calls"),
        ),
        text_reply("A1 has shipped."),
    )
    client = OpenAICompatibleClient(base_url=server.base_url, transport=transport, scope=ACME)
    answer = await ask(client, courier(written))
    assert answer.text == "A1 has shipped."
    assert [r.body["tool_choice"] for r in server.completions] == [on_the_wire, after[written]]


async def test_no_choice_sends_no_field(server: OpenAIServer, transport: HttpTransport) -> None:
    server.script(text_reply("Nothing to look up."))
    client = OpenAICompatibleClient(base_url=server.base_url, transport=transport, scope=ACME)
    await ask(client, courier(None))
    [request] = server.completions
    assert "tool_choice" not in request.body
    assert "tools" in request.body


@pytest.mark.parametrize(
    ("written", "on_the_wire"),
    [
        ("auto", {"type": "auto"}),
        ("required", {"type": "any"}),
        ("none", {"type": "none"}),
        ("lookup", {"type": "tool", "name": "lookup"}),
    ],
)
async def test_the_choice_is_sent_on_the_anthropic_wire(written: str, on_the_wire: Any) -> None:
    async with serve_anthropic(models=("gpt-test",)) as anthropic:
        anthropic.script(
            message_stream(
                [tool_block(0, "toolu_1", "lookup", '{"order_id": "A1"}')], stop_reason="tool_use"
            ),
            message_stream([text_block(0, "A1 has shipped.")]),
        )
        async with HttpTransport(policy=EgressPolicy().allowing(anthropic.base_url)) as seam:
            client = AnthropicClient(base_url=anthropic.base_url, transport=seam, scope=ACME)
            answer = await ask(client, courier(written))
    assert answer.text == "A1 has shipped."
    assert [r.body["tool_choice"] for r in anthropic.messages] == [
        on_the_wire,
        {"type": "auto"} if written in ("required", "lookup") else on_the_wire,
    ]
