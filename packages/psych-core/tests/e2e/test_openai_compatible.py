"""The OpenAI-compatible client end to end: real sockets, real SSE, real Runs.

A scripted server (tests/support/openai_server.py) listens on 127.0.0.1; the client
reaches it through HttpTransport and its egress policy; each case runs a Run through a
Worker and reads the log (and, where it says something extra, the report).
"""

import asyncio
import json
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import pytest

import psych_runtime
from psych_runtime import AgentSpec
from psych_runtime import CostPolicy
from psych_runtime import EgressPolicy
from psych_runtime import HttpTransport
from psych_runtime import InMemoryStore
from psych_runtime import ModelRef
from psych_runtime import OpenAICompatibleClient
from psych_runtime import TerminalState
from psych_runtime import ToolOutcome
from psych_runtime.core.messages import UserMessage
from psych_runtime.model.port import ModelRequest
from psych_runtime.model.port import StreamDone
from psych_runtime.model.port import StreamEvent
from psych_runtime.model.port import StreamIncomplete
from psych_runtime.model.port import TextDelta
from psych_runtime.models import PriceResolver
from psych_runtime.models import StaticPriceTable
from psych_runtime.records import CostSource
from psych_runtime.records import Record
from psych_runtime.records import Usage

from ..support.openai_server import OpenAIServer
from ..support.openai_server import call_fragment
from ..support.openai_server import chunk
from ..support.openai_server import error
from ..support.openai_server import serve_openai
from ..support.openai_server import sse
from ..support.openai_server import text_reply
from .conftest import ACME
from .conftest import code_spec
from .conftest import price
from .conftest import run_once
from .conftest import types

LOCAL = EgressPolicy(allow_hosts=frozenset({"127.0.0.1"}))
PRICES = StaticPriceTable({"gpt-test": price("2", "8", "0.5", "2")})


async def lookup(order_id: str) -> dict[str, str]:
    """Look up an order."""
    return {"order_id": order_id, "status": "shipped"}


@pytest.fixture
async def server() -> AsyncIterator[OpenAIServer]:
    async with serve_openai(models=("gpt-test", "gpt-other")) as running:
        yield running


@pytest.fixture
async def transport() -> AsyncIterator[HttpTransport]:
    async with HttpTransport(policy=LOCAL) as seam:
        yield seam


def client_for(server: OpenAIServer, transport: HttpTransport) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(
        base_url=server.base_url, transport=transport, scope=ACME, api_key="sk-test"
    )


def spec(*tools: str, **limits: Any) -> AgentSpec:
    return code_spec(*tools, instructions="Help the customer.", model="gpt-test", **limits)


async def run(
    client: OpenAICompatibleClient,
    agent: AgentSpec,
    *,
    prices: PriceResolver | None = None,
    cost_policy: CostPolicy = "prefer_provider",
    message: str = "Where is A1?",
) -> tuple[InMemoryStore, list[Record]]:
    store, _, log = await run_once(
        agent,
        client,
        lookup,
        message=message,
        prices=prices,
        runtime_options={"cost_policy": cost_policy},
    )
    return store, log


def only(log: list[Record], kind: str) -> Any:
    [record] = [r for r in log if r.type == kind]
    return record


def of_type(log: list[Record], kind: str) -> list[Any]:
    return [r for r in log if r.type == kind]


async def test_a_streamed_answer_completes_the_run_with_usage_and_cost(
    server: OpenAIServer, transport: HttpTransport
) -> None:
    usage = {
        "prompt_tokens": 1500,
        "completion_tokens": 200,
        "prompt_tokens_details": {"cached_tokens": 1000},
        "completion_tokens_details": {"reasoning_tokens": 50},
    }
    server.script(text_reply("A1 has shipped.", usage=usage))
    store, log = await run(client_for(server, transport), spec(), prices=PRICES)

    assert types(log) == [
        "run_admitted", "attempt_started", "turn_started", "model_call_started",
        "model_call_finished", "run_settled",
    ]  # fmt: skip
    settled = log[-1]
    assert settled.state is TerminalState.COMPLETED
    assert settled.output == {"text": "A1 has shipped."}
    finished = only(log, "model_call_finished")
    assert finished.text == "A1 has shipped."
    assert finished.finish_reason == "stop"
    assert finished.usage_reported
    assert finished.usage == Usage(input=500, output=200, cache_read=1000, reasoning=50)
    # 500 x 2/M + 200 x 8/M + 1000 x 0.5/M = 0.001 + 0.0016 + 0.0005
    assert finished.cost.amount == Decimal("0.0031")
    assert finished.cost.source is CostSource.COMPUTED
    assert finished.timings.time_to_first_token_seconds is not None

    [request] = server.completions
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body["model"] == "gpt-test"
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}
    assert request.body["messages"][0]["role"] == "system"
    assert "Help the customer." in request.body["messages"][0]["content"]
    assert request.body["messages"][-1] == {"role": "user", "content": "Where is A1?"}

    view = await psych_runtime.report(store, settled.run_id, scope=ACME)
    assert view.totals.usage.cache_read == 1000
    assert view.totals.cost is not None and view.totals.cost.amount == Decimal("0.0031")


async def test_tool_calls_streamed_in_interleaved_fragments(
    server: OpenAIServer, transport: HttpTransport
) -> None:
    server.script(
        sse(
            chunk("Checking both."),
            chunk(tool_calls=[call_fragment(0, id="call_a", name="lookup", arguments='{"ord')]),
            chunk(tool_calls=[call_fragment(1, id="call_b", name="lookup", arguments="")]),
            chunk(tool_calls=[call_fragment(1, arguments='{"order_id": "B2"}')]),
            chunk(tool_calls=[call_fragment(0, arguments='er_id": ')]),
            chunk(tool_calls=[call_fragment(0, arguments='"A1"}')]),
            chunk(finish="tool_calls"),
        ),
        text_reply("A1 and B2 have shipped."),
    )
    _, log = await run(client_for(server, transport), spec("lookup"))

    assert log[-1].state is TerminalState.COMPLETED
    assert log[-1].output == {"text": "A1 and B2 have shipped."}
    first = of_type(log, "model_call_finished")[0]
    assert first.finish_reason == "tool_calls"
    assert first.tool_calls == ("call_a", "call_b")
    started = of_type(log, "tool_call_started")
    assert [(s.call_id, s.arguments) for s in started] == [
        ("call_a", {"order_id": "A1"}),
        ("call_b", {"order_id": "B2"}),
    ]
    results = of_type(log, "tool_call_finished")
    assert [r.outcome for r in results] == [ToolOutcome.OK, ToolOutcome.OK]
    assert [r.result["order_id"] for r in results] == ["A1", "B2"]

    offered = server.completions[0].body["tools"]
    assert [t["function"]["name"] for t in offered] == ["lookup"]
    assert offered[0]["function"]["parameters"]["properties"]["order_id"]["type"] == "string"
    # The second request carries the calls and their results back in wire form.
    follow_up = server.completions[1].body["messages"]
    assistant = next(m for m in follow_up if m["role"] == "assistant")
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_a", "call_b"]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"order_id": "A1"}
    tool_messages = [m for m in follow_up if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_a", "call_b"]
    assert json.loads(tool_messages[1]["content"])["order_id"] == "B2"


async def test_reasoning_is_streamed_but_only_the_text_is_the_answer(
    server: OpenAIServer, transport: HttpTransport
) -> None:
    server.script(
        sse(
            chunk(reasoning="The user wants "),
            chunk(reasoning="a status.", reasoning_field="reasoning"),
            chunk("Shipped."),
            chunk(finish="stop"),
        )
    )
    _, log = await run(client_for(server, transport), spec())
    assert only(log, "model_call_finished").text == "Shipped."
    assert log[-1].output == {"text": "Shipped."}


async def test_no_usage_from_the_endpoint_is_recorded_as_unreported(
    server: OpenAIServer, transport: HttpTransport
) -> None:
    server.script(text_reply("Done."))
    store, log = await run(client_for(server, transport), spec(), prices=PRICES)
    finished = only(log, "model_call_finished")
    assert finished.usage_reported is False
    assert finished.usage == Usage()
    assert finished.cost is None
    view = await psych_runtime.report(store, log[-1].run_id, scope=ACME)
    assert view.totals.unreported_usage_calls == 1
    assert view.totals.cost is None


async def test_a_provider_reported_cost_is_preferred(
    server: OpenAIServer, transport: HttpTransport
) -> None:
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "cost": 0.0042}
    server.script(text_reply("Done.", usage=usage), text_reply("Again.", usage=usage))
    client = client_for(server, transport)
    _, log = await run(client, spec(), prices=PRICES)
    cost = only(log, "model_call_finished").cost
    assert (cost.amount, cost.source) == (Decimal("0.0042"), CostSource.PROVIDER)
    _, computed = await run(client, spec(), prices=PRICES, cost_policy="computed")
    cost = only(computed, "model_call_finished").cost
    # 10 x 2/M + 5 x 8/M
    assert (cost.amount, cost.source) == (Decimal("0.00006"), CostSource.COMPUTED)


async def test_a_rate_limit_is_retried_after_the_time_the_server_asked_for(
    server: OpenAIServer, transport: HttpTransport
) -> None:
    server.script(
        error(429, {"error": {"message": "Rate limit reached"}}, headers={"Retry-After": "1"}),
        text_reply("Made it."),
    )
    store, log = await run(client_for(server, transport), spec())

    assert types(log) == [
        "run_admitted", "attempt_started",
        "turn_started", "model_call_started", "model_call_failed",
        "turn_started", "model_call_started", "model_call_finished",
        "run_settled",
    ]  # fmt: skip
    failed = only(log, "model_call_failed")
    assert failed.will_retry is True
    assert failed.failure.kind == "http_429"
    assert failed.failure.transient is True
    assert "Rate limit reached" in failed.failure.message
    retry = of_type(log, "turn_started")[1]
    # The Runtime's own backoff here is 0.01 s; only Retry-After explains a 1 s wait.
    assert (retry.at - failed.at).total_seconds() >= 0.9
    assert log[-1].state is TerminalState.COMPLETED
    assert log[-1].output == {"text": "Made it."}

    view = await psych_runtime.report(store, log[-1].run_id, scope=ACME)
    assert [c.will_retry for c in view.model_calls] == [True, False]
    assert view.model_calls[0].failure is not None
    assert view.model_calls[0].failure.kind == "http_429"
    assert view.totals.failed_model_calls == 1
    assert view.totals.model_calls == 1


async def test_a_server_error_is_retried(server: OpenAIServer, transport: HttpTransport) -> None:
    server.script(error(500), error(503, "upstream down"), text_reply("Recovered."))
    _, log = await run(client_for(server, transport), spec())
    failures = of_type(log, "model_call_failed")
    assert [(f.failure.kind, f.will_retry) for f in failures] == [
        ("http_500", True),
        ("http_503", True),
    ]
    assert log[-1].state is TerminalState.COMPLETED


async def test_a_server_error_past_the_retry_budget_fails_the_run(
    server: OpenAIServer, transport: HttpTransport
) -> None:
    server.script(error(500), text_reply("never sent"))
    _, log = await run(client_for(server, transport), spec(transient_retry_budget=0))
    failed = only(log, "model_call_failed")
    assert failed.will_retry is False
    assert log[-1].state is TerminalState.FAILED
    assert log[-1].failure.kind == "http_500"
    assert log[-1].failure.transient is True
    assert len(server.completions) == 1


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (error(401, {"error": {"message": "Incorrect API key"}}), "http_401"),
        (error(404, {"error": {"message": "model not found"}}), "http_404"),
        (
            error(
                400,
                {
                    "error": {
                        "message": "maximum context length is 8192",
                        "code": "context_length_exceeded",
                    }
                },
            ),
            "context_overflow",
        ),
    ],
)
async def test_permanent_refusals_fail_the_run_without_retrying(
    server: OpenAIServer, transport: HttpTransport, reply: Any, kind: str
) -> None:
    server.script(reply, text_reply("never sent"))
    _, log = await run(client_for(server, transport), spec())
    failed = only(log, "model_call_failed")
    assert (failed.failure.kind, failed.will_retry, failed.failure.transient) == (
        kind,
        False,
        False,
    )
    assert log[-1].state is TerminalState.FAILED
    assert log[-1].failure.kind == kind
    assert len(server.completions) == 1


async def test_a_stalled_stream_hits_the_idle_timeout_and_is_retried(
    server: OpenAIServer, transport: HttpTransport
) -> None:
    server.script(
        sse(chunk("Let me "), 5.0, chunk("never"), chunk(finish="stop")), text_reply("Back.")
    )
    loop = asyncio.get_running_loop()
    began = loop.time()
    _, log = await run(client_for(server, transport), spec(stream_idle_seconds=0.3))
    assert loop.time() - began < 4.0
    failed = only(log, "model_call_failed")
    assert failed.failure.kind == "idle_timeout"
    assert failed.will_retry is True
    assert log[-1].state is TerminalState.COMPLETED
    assert log[-1].output == {"text": "Back."}


async def test_a_stream_cut_mid_event_is_retried(
    server: OpenAIServer, transport: HttpTransport
) -> None:
    server.script(
        sse(
            chunk("Half "),
            'data: {"choices": [{"index": 0, "delta": {"content": "an',
            done=False,
            cut=True,
        ),
        text_reply("Whole answer."),
    )
    _, log = await run(client_for(server, transport), spec())
    failed = only(log, "model_call_failed")
    assert failed.failure.kind == "stream_incomplete"
    assert failed.failure.transient is True
    assert failed.will_retry is True
    assert log[-1].output == {"text": "Whole answer."}
    # The half-received first answer never reaches the log.
    assert [f.text for f in of_type(log, "model_call_finished")] == ["Whole answer."]


async def test_malformed_json_in_a_chunk_is_retried(
    server: OpenAIServer, transport: HttpTransport
) -> None:
    server.script(
        sse(chunk("Fine so far"), 'data: {"choices": [oops]}\n\n', chunk(finish="stop")),
        text_reply("Clean."),
    )
    _, log = await run(client_for(server, transport), spec())
    failed = only(log, "model_call_failed")
    assert failed.failure.kind == "malformed_chunk"
    assert failed.will_retry is True
    assert log[-1].output == {"text": "Clean."}


async def test_an_endpoint_the_policy_refuses_fails_the_run_without_a_connection(
    server: OpenAIServer,
) -> None:
    server.script(text_reply("never sent"))
    async with HttpTransport(policy=EgressPolicy()) as strict:
        _, log = await run(client_for(server, strict), spec())
    failed = only(log, "model_call_failed")
    assert failed.failure.kind == "egress_denied"
    assert failed.will_retry is False
    assert "127.0.0.1" in failed.failure.message
    assert "deny_private" in failed.failure.message
    assert log[-1].state is TerminalState.FAILED
    assert log[-1].failure.kind == "egress_denied"
    assert server.connections == 0


async def collect(client: OpenAICompatibleClient, request: ModelRequest) -> list[StreamEvent]:
    return [event async for event in client.stream(request)]


async def test_a_connection_closed_mid_body_without_chunking(
    server: OpenAIServer, transport: HttpTransport
) -> None:
    # Close-delimited body: the end of the connection is a normal end of the body, so
    # only the parser can tell the answer was cut off.
    server.script(sse(chunk("Half"), 'data: {"choices": [', done=False, chunked=False))
    request = ModelRequest(model="gpt-test", messages=(UserMessage(content="hi"),))
    with pytest.raises(StreamIncomplete, match="middle of an event"):
        await collect(client_for(server, transport), request)


async def test_known_models_over_the_wire(server: OpenAIServer, transport: HttpTransport) -> None:
    client = client_for(server, transport)
    assert await client.known_models() == frozenset({"gpt-test", "gpt-other"})
    await client.known_models()
    assert [r.path for r in server.requests] == ["/v1/models"]


async def test_the_client_streams_deltas_as_they_arrive(
    server: OpenAIServer, transport: HttpTransport
) -> None:
    server.script(sse(chunk("first"), 0.3, chunk("second"), chunk(finish="stop")))
    request = ModelRequest(model="gpt-test", messages=(UserMessage(content="hi"),))
    loop = asyncio.get_running_loop()
    arrivals: list[tuple[str, float]] = []
    async for event in client_for(server, transport).stream(request):
        if isinstance(event, TextDelta):
            arrivals.append((event.text, loop.time()))
        else:
            assert isinstance(event, StreamDone)
    assert [text for text, _ in arrivals] == ["first", "second"]
    # The first delta was handed over before the server paused, not after the body ended.
    assert arrivals[1][1] - arrivals[0][1] >= 0.25


async def test_a_server_error_fails_over_to_the_next_model_in_the_specs_order(
    server: OpenAIServer, transport: HttpTransport
) -> None:
    server.script(error(500), error(502), text_reply("Answered by the second fallback."))
    agent = AgentSpec(
        name="support",
        model=ModelRef(model="gpt-test", fallbacks=("gpt-other", "gpt-third")),
    )
    _, log = await run(client_for(server, transport), agent)
    asked = [r.body["model"] for r in server.completions]
    assert asked == ["gpt-test", "gpt-other", "gpt-third"]
    started = [r.model for r in of_type(log, "model_call_started")]
    assert started == ["gpt-test", "gpt-other", "gpt-third"]
    failures = of_type(log, "model_call_failed")
    assert [(f.model, f.failure.kind, f.will_retry) for f in failures] == [
        ("gpt-test", "http_500", True),
        ("gpt-other", "http_502", True),
    ]
    assert only(log, "model_call_finished").model == "gpt-third"
    assert log[-1].state is TerminalState.COMPLETED
    # The next turn of a later conversation starts at the primary again: no routing.
    server.script(text_reply("Primary is back."))
    _, again = await run(client_for(server, transport), agent)
    assert only(again, "model_call_started").model == "gpt-test"
