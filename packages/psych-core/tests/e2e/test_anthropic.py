"""A Run on AnthropicClient end to end: real sockets, the Messages event stream, real prices.

The scripted server (tests/support/anthropic_server.py) replays the documented wire
format on 127.0.0.1; the client reaches it through HttpTransport with the endpoint
allowed by the egress policy, and the Run is priced from the bundled price table.
"""

import json
from collections.abc import AsyncIterator
from decimal import Decimal

import pytest

import psych_runtime
from psych_runtime import AgentSpec
from psych_runtime import EgressPolicy
from psych_runtime import HttpTransport
from psych_runtime import ModelRef
from psych_runtime import RuntimeSettings
from psych_runtime.models import DEFAULT_PRICES
from psych_runtime.models import AnthropicClient
from psych_runtime.records import ModelCallFinished
from psych_runtime.records import Usage

from ..support.anthropic_server import AnthropicServer
from ..support.anthropic_server import error
from ..support.anthropic_server import message_stream
from ..support.anthropic_server import serve_anthropic
from ..support.anthropic_server import start_usage
from ..support.anthropic_server import text_block
from ..support.anthropic_server import tool_block
from .conftest import ACME

MODEL = "claude-haiku-4-5"


async def lookup(order_id: str) -> dict[str, str]:
    """Look up an order."""
    return {"order_id": order_id, "status": "shipped"}


@pytest.fixture
async def server() -> AsyncIterator[AnthropicServer]:
    async with serve_anthropic(models=(MODEL,)) as running:
        yield running


@pytest.fixture
async def transport(server: AnthropicServer) -> AsyncIterator[HttpTransport]:
    async with HttpTransport(policy=EgressPolicy().allowing(server.base_url)) as seam:
        yield seam


def courier() -> AgentSpec:
    return AgentSpec(
        name="courier",
        instructions="Answer questions about orders.",
        model=ModelRef(MODEL),
        tools=("lookup",),
    )


async def test_a_tool_using_run_is_recorded_and_priced_from_the_table(
    server: AnthropicServer, transport: HttpTransport
) -> None:
    first_usage = start_usage(20, five_minutes=1000, one_hour=2000)
    second_usage = start_usage(15, cache_read=3000, five_minutes=200)
    server.script(
        message_stream(
            [
                text_block(0, "Checking."),
                tool_block(1, "toolu_1", "lookup", '{"order_id":', ' "A1"}'),
            ],
            stop_reason="tool_use",
            usage=first_usage,
            final_usage={"output_tokens": 30},
        ),
        message_stream(
            [text_block(0, "A1 has ", "shipped.")],
            usage=second_usage,
            final_usage={"output_tokens": 10},
        ),
    )
    client = AnthropicClient(base_url=server.base_url, transport=transport, scope=ACME)
    settings = RuntimeSettings(prices=DEFAULT_PRICES)
    async with psych_runtime.session(client, tools=[lookup], scope=ACME, runtime=settings) as s:
        answer = await s.ask(courier(), "Where is A1?")
        log = await s.read_log(answer.run_id)
        report = await s.report(answer.run_id)

    assert answer.text == "A1 has shipped."
    first, second = [r for r in log if isinstance(r, ModelCallFinished)]
    assert first.finish_reason == "tool_calls"
    assert first.tool_calls == ("toolu_1",)
    assert first.usage == Usage(input=20, output=30, cache_write=3000, cache_write_1h=2000)
    assert second.usage == Usage(input=15, output=10, cache_read=3000, cache_write=200)
    # claude-haiku-4-5 per million: input 1.00, output 5.00, cache read 0.10,
    # five-minute write 1.25, one-hour write 2.00.
    assert first.cost is not None and second.cost is not None
    # 20 x 1 + 30 x 5 + 1000 x 1.25 + 2000 x 2 = 5420 millionths
    assert first.cost.amount == Decimal("0.00542")
    assert second.cost.amount == Decimal("0.000615")
    assert report.totals.usage_source == "provider"
    assert report.totals.cost is not None
    assert report.totals.cost.amount == Decimal("0.006035")

    call = next(r for r in log if r.type == "tool_call_started")
    assert call.arguments == {"order_id": "A1"}
    # The second request carries the call and its result back in the Messages shape.
    follow_up = server.messages[1].body["messages"]
    assert [turn["role"] for turn in follow_up] == ["user", "assistant", "user"]
    assert follow_up[1]["content"] == [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"order_id": "A1"}},
    ]
    [result] = follow_up[2]["content"]
    assert result["type"] == "tool_result"
    assert result["tool_use_id"] == "toolu_1"
    assert json.loads(result["content"])["status"] == "shipped"
    assert "Answer questions about orders." in server.messages[0].body["system"][0]["text"]


async def test_an_overloaded_server_is_waited_out(
    server: AnthropicServer, transport: HttpTransport
) -> None:
    server.script(
        error(529, headers={"retry-after": "0"}),
        message_stream([text_block(0, "Fine now.")]),
    )
    client = AnthropicClient(base_url=server.base_url, transport=transport, scope=ACME)
    async with psych_runtime.session(client, tools=[lookup], scope=ACME) as s:
        answer = await s.ask(courier(), "Where is A1?")
    assert answer.text == "Fine now."
    assert len(server.messages) == 2
