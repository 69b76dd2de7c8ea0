"""A scripted Anthropic Messages server on 127.0.0.1, for tests.

Built on the same loopback server and scripted ``Reply`` as the OpenAI one: each POST
to ``/v1/messages`` plays the next reply, ``/v1/models`` lists ``models``, and every
request is recorded. The helpers below write the event stream the way the Messages
API documents it: ``message_start``, content blocks opened, filled by deltas and
closed, ``message_delta`` with the stop reason and usage, ``message_stop``, with
``ping`` events wherever the test wants them.
"""

import asyncio
import json
from collections.abc import AsyncIterator
from collections.abc import Iterable
from collections.abc import Sequence
from contextlib import asynccontextmanager
from typing import Any

from .openai_server import OpenAIServer
from .openai_server import Received
from .openai_server import Reply
from .openai_server import error

__all__ = [
    "AnthropicServer",
    "Received",
    "Reply",
    "error",
    "event",
    "message_stream",
    "serve_anthropic",
    "start_usage",
    "text_block",
    "tool_block",
]


def event(name: str, data: dict[str, Any]) -> bytes:
    """One server-sent event, named and with a JSON payload carrying the same type."""
    return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()


def start_usage(
    input_tokens: int, *, cache_read: int = 0, five_minutes: int = 0, one_hour: int = 0
) -> dict[str, Any]:
    """The usage of a ``message_start``, with cache writes split by their lifetime.

    The API states the writes twice: their sum, and apart by lifetime; both are written
    here from the parts, so a test gives each number once.
    """
    return {
        "input_tokens": input_tokens,
        "output_tokens": 1,
        "cache_read_input_tokens": cache_read,
        "cache_creation_input_tokens": five_minutes + one_hour,
        "cache_creation": {
            "ephemeral_5m_input_tokens": five_minutes,
            "ephemeral_1h_input_tokens": one_hour,
        },
    }


def text_block(index: int, *pieces: str) -> list[bytes]:
    """A text block streamed in ``pieces``."""
    parts = [
        event(
            "content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}}
        )
    ]
    parts += [
        event("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": p}})
        for p in pieces
    ]
    parts.append(event("content_block_stop", {"index": index}))
    return parts


def tool_block(index: int, call_id: str, name: str, *json_pieces: str) -> list[bytes]:
    """A ``tool_use`` block whose input arrives as ``input_json_delta`` pieces."""
    start = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    parts = [event("content_block_start", {"index": index, "content_block": start})]
    parts += [
        event(
            "content_block_delta",
            {"index": index, "delta": {"type": "input_json_delta", "partial_json": p}},
        )
        for p in json_pieces
    ]
    parts.append(event("content_block_stop", {"index": index}))
    return parts


def message_stream(
    blocks: Sequence[list[bytes]],
    *,
    stop_reason: str = "end_turn",
    usage: dict[str, Any] | None = None,
    final_usage: dict[str, Any] | None = None,
    model: str = "claude-haiku-4-5-20251001",
    stop: bool = True,
    pings: bool = True,
) -> Reply:
    """A 200 event stream holding ``blocks`` between the opening and closing events.

    Args:
        blocks: content blocks, each a list of events (``text_block``, ``tool_block``).
        stop_reason: sent in ``message_delta``.
        usage: the usage in ``message_start`` (input side and a first output count).
        final_usage: the usage in ``message_delta``; the output count by default.
        model: the model named in ``message_start``.
        stop: end with ``message_stop``; False leaves the stream without it.
        pings: put a ``ping`` after ``message_start``, as the API does.
    """
    start_usage = usage if usage is not None else {"input_tokens": 10, "output_tokens": 1}
    message = {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    parts: list[bytes | float] = [event("message_start", {"message": message})]
    if pings:
        parts.append(event("ping", {}))
    for block in blocks:
        parts.extend(block)
    closing = final_usage if final_usage is not None else {"output_tokens": 12}
    parts.append(
        event(
            "message_delta",
            {"delta": {"stop_reason": stop_reason, "stop_sequence": None}, "usage": closing},
        )
    )
    if stop:
        parts.append(event("message_stop", {}))
    return Reply(status=200, headers={"Content-Type": "text/event-stream"}, parts=parts)


class AnthropicServer(OpenAIServer):
    """The server; use ``serve_anthropic()`` to start and stop it."""

    @property
    def base_url(self) -> str:
        return self.origin

    @property
    def messages(self) -> list[Received]:
        return [r for r in self.requests if r.path.endswith("/v1/messages")]

    async def _respond(self, request: Received, writer: asyncio.StreamWriter) -> None:
        if request.method == "GET" and request.path.startswith("/v1/models"):
            listing = {"data": [{"id": m, "type": "model"} for m in self.models], "has_more": False}
            reply = Reply(
                headers={"Content-Type": "application/json"},
                parts=[json.dumps(listing).encode()],
                chunked=False,
            )
        elif request.method == "POST" and request.path.endswith("/v1/messages"):
            reply = self.replies.popleft() if self.replies else error(400, "no scripted reply left")
        else:
            reply = error(404)
        await self._write(reply, writer)


@asynccontextmanager
async def serve_anthropic(
    models: Iterable[str] = ("claude-haiku-4-5",),
) -> AsyncIterator[AnthropicServer]:
    """Run an ``AnthropicServer`` for the duration of the block."""
    server = AnthropicServer(models)
    await server.start()
    try:
        yield server
    finally:
        await server.close()
