"""Large streamed answers through OpenAICompatibleClient, cut as finely as a network may.

A huge single event is decoded off the event loop and a long line arriving in small
pieces is parsed in linear time; these cases pin down that the results are exact.
"""

import json
from collections.abc import AsyncIterator

import httpx

from psych_runtime.core.messages import UserMessage
from psych_runtime.core.scope import Scope
from psych_runtime.egress.policy import EgressPolicy
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.model.openai_compat import OpenAICompatibleClient
from psych_runtime.model.port import ModelRequest
from psych_runtime.runtime.model_call import MAX_TOOL_ARGUMENT_CHARS
from psych_runtime.runtime.model_call import call_model

REQUEST = ModelRequest(model="gpt-test", messages=(UserMessage(content="hi"),))


def _call_chunk(arguments: str, *, first: bool) -> bytes:
    call: dict[str, object] = {"index": 0, "function": {"arguments": arguments}}
    if first:
        call.update(id="call_big", type="function")
        call["function"] = {"name": "store", "arguments": arguments}
    choice = {"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}
    return b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n"


async def _cut(body: bytes, size: int) -> AsyncIterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


async def _answer(body: bytes, piece: int) -> tuple[str, str | None]:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, content=_cut(body, piece), headers={"content-type": "text/event-stream"}
        )

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        transport = HttpTransport(policy=EgressPolicy(deny_private=False), client=http)
        client = OpenAICompatibleClient(
            base_url="https://models.example/v1", transport=transport, scope=Scope(tenant="t")
        )
        answer = await call_model(client, REQUEST)
    (call,) = answer.calls
    return call.arguments, call.refusal


def _finish() -> bytes:
    choice = {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
    return b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\ndata: [DONE]\n\n"


async def test_one_huge_event_cut_into_small_network_pieces_is_read_exactly() -> None:
    # One event of some 1.4 MB (decoded in a worker thread), arriving 61 bytes at a
    # time, cutting UTF-8 characters and escapes anywhere.
    arguments = json.dumps({"text": "\u00e9\u4e2d" * 120_000}, ensure_ascii=False)
    assert len(arguments) < MAX_TOOL_ARGUMENT_CHARS
    body = _call_chunk(arguments, first=True) + _finish()
    assert await _answer(body, 61) == (arguments, None)


async def test_many_tiny_events_in_large_network_pieces_are_read_exactly() -> None:
    arguments = json.dumps({"text": "abc" * 20_000})
    pieces = [arguments[i : i + 4] for i in range(0, len(arguments), 4)]
    body = b"".join(_call_chunk(p, first=i == 0) for i, p in enumerate(pieces)) + _finish()
    assert await _answer(body, 65_536) == (arguments, None)
