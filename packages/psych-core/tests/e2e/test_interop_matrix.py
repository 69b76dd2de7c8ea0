"""OpenAICompatibleClient against the stream shapes of the servers people run it with.

Each ``Server`` below replays, from a local HTTP server on 127.0.0.1, the chunk shapes
one server documents for a streamed chat completion: OpenAI's API, llama.cpp's
``llama-server``, llama-cpp-python's server, vLLM, Ollama's ``/v1`` endpoint and the
LiteLLM proxy. They differ where clients trip: how tool-call fragments are cut (the
whole call at once, the name before any arguments, arguments a few characters at a
time), whether the call id is repeated on every chunk, whether the legacy
``function_call`` travels beside ``tool_calls``, where usage goes (its own chunk, the
finishing chunk, or nowhere) and whether ``[DONE]`` closes the stream.

Every shape must come out as the same answer, and a Spec's output limit must hold on
each: the replay reads the limit only from the fields that server reads, so a client
that sent it under a name the server ignores would get the whole answer back.

The transcripts are written here from the servers' documentation; they are fixtures
of this project, not recordings.
"""

import json
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

import pytest

import psych_runtime
from psych_runtime import AgentSpec
from psych_runtime import EgressPolicy
from psych_runtime import HttpTransport
from psych_runtime import ModelRef
from psych_runtime import OpenAICompatibleClient
from psych_runtime.core.messages import UserMessage
from psych_runtime.model.port import ModelRequest
from psych_runtime.records import ModelCallFinished
from psych_runtime.records import Usage
from psych_runtime.runtime.model_call import ModelAnswer
from psych_runtime.runtime.model_call import call_model

from ..support.openai_server import OpenAIServer
from ..support.openai_server import Received
from ..support.openai_server import Reply
from ..support.openai_server import error
from ..support.tools import LOOKUP
from .conftest import ACME

CALLS = (("lookup", {"order_id": "A1"}), ("lookup", {"order_id": "B2"}))
LONG_ANSWER = " ".join(f"word{n}" for n in range(1, 41))
PROMPT_TOKENS = 50
CACHED_TOKENS = 32
WRITTEN_TOKENS = 8
COMPLETION_TOKENS = 20
CREATED = 1764800000

Chunk = dict[str, Any]


def envelope(id: str, model: str, **extra: Any) -> Chunk:
    """The fields around ``choices`` in a server's chunks: its own id, model and extras."""
    return {
        "id": id,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        **extra,
    }


def token_counts(**extra: Any) -> Chunk:
    """The usage object's token counts, with the fields a server adds to them."""
    return {
        "prompt_tokens": PROMPT_TOKENS,
        "completion_tokens": COMPLETION_TOKENS,
        "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
        **extra,
    }


@dataclass(frozen=True)
class Server:
    """How one server shapes a stream, and what it reads from a request.

    Attributes:
        name: the server.
        model: the model id it serves here.
        limit_fields: the request fields it takes the output limit from.
        envelope: the fields around ``choices`` in each chunk.
        calls: writes the chunks of a two-call answer.
        text_pieces: how it cuts "Checking." into deltas.
        usage_with_finish: usage rides on the finishing chunk instead of its own.
        usage: the usage object it reports.
        refuses: request fields it answers 400 to.
        honours_usage: whether it sends usage when ``stream_options`` asks.
        done: whether it ends the stream with ``data: [DONE]``.
        finish_with_calls: the finish reason it gives an answer that calls tools.
    """

    name: str
    model: str
    limit_fields: tuple[str, ...]
    envelope: Chunk
    calls: Callable[[], list[Chunk]]
    text_pieces: tuple[str, ...]
    usage_with_finish: bool
    usage: Chunk
    refuses: tuple[str, ...] = ()
    honours_usage: bool = True
    done: bool = True
    finish_with_calls: str = "tool_calls"

    def chunk(self, delta: Chunk, finish: str | None = None, **choice: Any) -> Chunk:
        return {
            **self.envelope,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, **choice}],
        }

    def stream(self, body: Chunk, deltas: list[Chunk], finish: str) -> Reply:
        """The reply: the deltas, the finish, usage as this server places it, [DONE]."""
        events = [self.chunk(delta) for delta in deltas]
        asked = bool(body.get("stream_options", {}).get("include_usage"))
        with_usage = self.honours_usage and asked
        final = self.chunk({}, finish)
        if with_usage and self.usage_with_finish:
            final["usage"] = self.usage
        events.append(final)
        if with_usage and not self.usage_with_finish:
            events.append({**self.envelope, "choices": [], "usage": self.usage})
        parts: list[bytes | float] = [b"data: " + json.dumps(e).encode() + b"\n\n" for e in events]
        if self.done:
            parts.append(b"data: [DONE]\n\n")
        return Reply(headers={"Content-Type": "text/event-stream"}, parts=parts)

    def expected_usage(self) -> Usage:
        details = self.usage.get("prompt_tokens_details") or {}
        read = details.get("cached_tokens", 0)
        written = self.usage.get("cache_creation_input_tokens", 0)
        return Usage(
            input=self.usage["prompt_tokens"] - read - written,
            output=self.usage["completion_tokens"],
            cache_read=read,
            cache_write=written,
        )


def arguments(order_id: str) -> str:
    return json.dumps({"order_id": order_id})


# --- OpenAI ----------------------------------------------------------------------------
# The id, type and name come once, on a call's first fragment, with empty arguments;
# the arguments follow a few characters at a time. With include_usage every chunk
# carries "usage": null and the usage comes last in a chunk with no choices.


def openai_calls() -> list[Chunk]:
    deltas: list[Chunk] = [{"role": "assistant", "content": None, "refusal": None}]
    for index, (order, call_id) in enumerate((("A1", "call_Qx1"), ("B2", "call_Qx2"))):
        deltas.append(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "lookup", "arguments": ""},
                    }
                ]
            }
        )
        text = arguments(order)
        for start in range(0, len(text), 4):
            piece = text[start : start + 4]
            deltas.append({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    return deltas


OPENAI = Server(
    name="openai",
    model="o4-mini",
    limit_fields=("max_completion_tokens",),
    refuses=("max_tokens",),
    envelope=envelope(
        "chatcmpl-Ab12", "o4-mini-2025-04-16", system_fingerprint="fp_7a1b", usage=None
    ),
    calls=openai_calls,
    text_pieces=("Check", "ing", "."),
    usage_with_finish=False,
    usage=token_counts(
        prompt_tokens_details={"cached_tokens": CACHED_TOKENS, "audio_tokens": 0},
        completion_tokens_details={"reasoning_tokens": 0, "audio_tokens": 0},
    ),
)


# --- llama.cpp's llama-server -----------------------------------------------------------
# Tool calls as OpenAI cuts them, but the first fragment already carries some of the
# arguments; the finishing chunk carries timings and, when asked, the usage.


def llama_server_calls() -> list[Chunk]:
    deltas: list[Chunk] = []
    for index, order in enumerate(("A1", "B2")):
        text = arguments(order)
        deltas.append(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": f"ls{index}XyZ",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": text[:7]},
                    }
                ]
            }
        )
        deltas.append({"tool_calls": [{"index": index, "function": {"arguments": text[7:]}}]})
    return deltas


LLAMA_SERVER = Server(
    name="llama-server",
    model="gemma-3-270m",
    limit_fields=("max_tokens", "n_predict"),
    envelope=envelope("chatcmpl-ls9", "gemma-3-270m", system_fingerprint="b6000-abc123"),
    calls=llama_server_calls,
    text_pieces=("Checking", "."),
    usage_with_finish=True,
    usage=token_counts(),
)


# --- llama-cpp-python's server ------------------------------------------------------------
# Each call arrives whole in one chunk, described twice: in "tool_calls" and again in
# the legacy "function_call". It reads only max_tokens and sends no usage on a stream.


def llama_cpp_python_calls() -> list[Chunk]:
    deltas: list[Chunk] = [{"role": "assistant"}]
    for index, order in enumerate(("A1", "B2")):
        function = {"name": "lookup", "arguments": arguments(order)}
        deltas.append(
            {
                "role": None,
                "content": None,
                "function_call": function,
                "tool_calls": [
                    {
                        "index": index,
                        "id": f"call__{index}_lookup_cmpl-lcp",
                        "type": "function",
                        "function": function,
                    }
                ],
            }
        )
    return deltas


LLAMA_CPP_PYTHON = Server(
    name="llama-cpp-python",
    model="gemma-3-270m",
    limit_fields=("max_tokens",),
    honours_usage=False,
    envelope=envelope("chatcmpl-lcp", "gemma-3-270m"),
    calls=llama_cpp_python_calls,
    text_pieces=("Che", "cking", "."),
    usage_with_finish=True,
    usage={},
)


# --- vLLM -----------------------------------------------------------------------------------
# A call's first fragment names it without any "arguments" key; content may be null.


def vllm_calls() -> list[Chunk]:
    deltas: list[Chunk] = [{"role": "assistant", "content": ""}]
    for index, order in enumerate(("A1", "B2")):
        deltas.append(
            {
                "tool_calls": [
                    {
                        "id": f"chatcmpl-tool-{index}f3e",
                        "type": "function",
                        "index": index,
                        "function": {"name": "lookup"},
                    }
                ]
            }
        )
        for piece in ('{"order_id": "', order, '"}'):
            deltas.append(
                {
                    "content": None,
                    "tool_calls": [{"index": index, "function": {"arguments": piece}}],
                }
            )
    return deltas


VLLM = Server(
    name="vllm",
    model="Qwen/Qwen2.5-7B-Instruct",
    limit_fields=("max_tokens", "max_completion_tokens"),
    envelope=envelope("chatcmpl-vl1", "Qwen/Qwen2.5-7B-Instruct"),
    calls=vllm_calls,
    text_pieces=("Checking", "."),
    usage_with_finish=False,
    usage=token_counts(prompt_tokens_details=None),
)


# --- Ollama's /v1 ------------------------------------------------------------------------------
# Every call of the answer in one chunk, each complete, each at index 0; the answer
# that calls tools finishes with "stop".


def ollama_calls() -> list[Chunk]:
    return [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": f"call_{order.lower()}9k",
                    "index": 0,
                    "type": "function",
                    "function": {"name": "lookup", "arguments": arguments(order)},
                }
                for order in ("A1", "B2")
            ],
        }
    ]


OLLAMA = Server(
    name="ollama",
    model="llama3.2",
    limit_fields=("max_tokens",),
    envelope=envelope("chatcmpl-517", "llama3.2", system_fingerprint="fp_ollama"),
    calls=ollama_calls,
    text_pieces=("Checking.",),
    usage_with_finish=False,
    usage=token_counts(),
    finish_with_calls="stop",
)


# --- LiteLLM proxy -----------------------------------------------------------------------------
# Every fragment repeats the call's id, its type and its name, next to a null legacy
# "function_call"; usage (with the cache fields it passes through) rides on the last
# chunk.


def litellm_calls() -> list[Chunk]:
    deltas: list[Chunk] = []
    for index, order in enumerate(("A1", "B2")):
        text = arguments(order)
        for piece in ("", text[:5], text[5:11], text[11:]):
            deltas.append(
                {
                    "content": None,
                    "role": "assistant",
                    "function_call": None,
                    "tool_calls": [
                        {
                            "id": f"toolu_0{index}LT",
                            "function": {"arguments": piece, "name": "lookup"},
                            "type": "function",
                            "index": index,
                        }
                    ],
                }
            )
    return deltas


LITELLM = Server(
    name="litellm",
    model="claude-sonnet-4-5",
    limit_fields=("max_tokens", "max_completion_tokens"),
    envelope=envelope("chatcmpl-lt7", "claude-sonnet-4-5", system_fingerprint=None),
    calls=litellm_calls,
    text_pieces=("Chec", "king."),
    usage_with_finish=True,
    usage=token_counts(
        prompt_tokens_details={"cached_tokens": CACHED_TOKENS},
        cache_read_input_tokens=CACHED_TOKENS,
        cache_creation_input_tokens=WRITTEN_TOKENS,
    ),
)

SERVERS = (OPENAI, LLAMA_SERVER, LLAMA_CPP_PYTHON, VLLM, OLLAMA, LITELLM)


def variants() -> Iterator[Any]:
    """Each server as documented, then without usage and without [DONE]."""
    for server in SERVERS:
        yield pytest.param(server, id=server.name)
        if server.honours_usage:
            quiet = replace(server, honours_usage=False)
            yield pytest.param(quiet, id=f"{server.name}-no-usage")
        yield pytest.param(replace(server, done=False), id=f"{server.name}-no-done")


class ReplayServer(OpenAIServer):
    """Answers each completion the way ``server`` would, reading what it reads."""

    def __init__(self, server: Server, answer: Callable[[Server, Chunk], Reply]) -> None:
        super().__init__([server.model])
        self.server = server
        self.answer = answer

    def respond(self, request: Received) -> Reply:
        body = request.body
        refused = [f for f in self.server.refuses if f in body]
        if refused:
            message = f"Unsupported parameter: '{refused[0]}' is not supported with this model."
            if refused[0] == "max_tokens":
                message += " Use 'max_completion_tokens' instead."
            return error(400, {"error": {"message": message, "type": "invalid_request_error"}})
        return self.answer(self.server, body)

    async def _respond(self, request: Received, writer: Any) -> None:
        if request.method == "POST" and request.path.endswith("/chat/completions"):
            await self._write(self.respond(request), writer)
        else:
            await super()._respond(request, writer)


def two_calls(server: Server, body: Chunk) -> Reply:
    deltas = [{"content": piece} for piece in server.text_pieces] + server.calls()
    return server.stream(body, deltas, server.finish_with_calls)


def long_text(server: Server, body: Chunk) -> Reply:
    """The long answer, cut at the limit when the request carries it where it is read."""
    words = LONG_ANSWER.split(" ")
    limits = [body[f] for f in server.limit_fields if isinstance(body.get(f), int)]
    finish = "stop"
    if limits and min(limits) < len(words):
        words, finish = words[: min(limits)], "length"
    pieces = [word + " " for word in words[:-1]] + words[-1:]
    return server.stream(body, [{"content": piece} for piece in pieces], finish)


@pytest.fixture
async def transport() -> AsyncIterator[HttpTransport]:
    async with HttpTransport(policy=EgressPolicy(allow_hosts=frozenset({"127.0.0.1"}))) as seam:
        yield seam


@asynccontextmanager
async def replaying(
    server: Server, answer: Callable[[Server, Chunk], Reply], transport: HttpTransport
) -> AsyncIterator[tuple[ReplayServer, OpenAICompatibleClient]]:
    """The replay of ``server`` answering with ``answer``, and a client of it."""
    replay = ReplayServer(server, answer)
    await replay.start()
    try:
        yield (
            replay,
            OpenAICompatibleClient(base_url=replay.base_url, transport=transport, scope=ACME),
        )
    finally:
        await replay.close()


def normalised(answer: ModelAnswer) -> tuple[Any, ...]:
    """The parts of an answer every server must agree on (ids are each server's own)."""
    calls = tuple((call.name, json.loads(call.arguments)) for call in answer.calls)
    return answer.text, calls, answer.finish_reason


@pytest.mark.parametrize("server", list(variants()))
async def test_every_server_shape_gives_the_same_answer(
    server: Server, transport: HttpTransport
) -> None:
    async with replaying(server, two_calls, transport) as (replay, client):
        request = ModelRequest(
            model=server.model,
            messages=(UserMessage(content="Where are A1 and B2?"),),
            tools=(LOOKUP,),
        )
        answer = await call_model(client, request)

    assert normalised(answer) == ("Checking.", CALLS, "tool_calls")
    ids = [call.id for call in answer.calls]
    assert all(ids) and len(set(ids)) == 2
    assert answer.usage == (server.expected_usage() if server.honours_usage else None)
    [sent] = replay.completions
    assert sent.body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("server", list(variants()))
async def test_the_output_limit_holds_on_every_server(
    server: Server, transport: HttpTransport
) -> None:
    spec = AgentSpec(
        name="writer",
        instructions="Write at length.",
        model=ModelRef(server.model, max_output_tokens=5),
    )
    async with (
        replaying(server, long_text, transport) as (replay, client),
        psych_runtime.session(client, scope=ACME) as s,
    ):
        answer = await s.ask(spec, "Count to forty.")
        log = await s.read_log(answer.run_id)
        report = await s.report(answer.run_id)

    assert answer.text == "word1 word2 word3 word4 word5"
    [call] = [r for r in log if isinstance(r, ModelCallFinished)]
    assert call.finish_reason == "length"
    sent = [r.body for r in replay.completions]
    assert any(f in sent[-1] for f in server.limit_fields)
    # Usage a server did not send is reported as unknown, not as zero tokens.
    [row] = report.model_calls
    if server.honours_usage:
        assert row.usage == server.expected_usage()
        assert report.totals.usage_source == "provider"
    else:
        assert (row.usage, row.usage_reported) == (None, False)
        assert report.totals.usage_source == "unknown"


async def test_a_server_that_refuses_stream_options_is_asked_without_it(
    transport: HttpTransport,
) -> None:
    strict = replace(LLAMA_CPP_PYTHON, refuses=("stream_options",))
    async with replaying(strict, long_text, transport) as (replay, client):
        request = ModelRequest(
            model=strict.model, messages=(UserMessage(content="Count."),), max_output_tokens=3
        )
        first = await call_model(client, request)
        second = await call_model(client, request)

    assert first.text == second.text == "word1 word2 word3"
    assert first.usage is None
    bodies = [r.body for r in replay.completions]
    assert ["stream_options" in b for b in bodies] == [True, False, False]
