"""A scripted OpenAI-compatible HTTP server on 127.0.0.1, for tests.

Written on the standard library's asyncio streams so the client under test goes through
real sockets, real HTTP/1.1 framing (chunked bodies, closed connections) and real
server-sent events. Each POST to ``/v1/chat/completions`` consumes the next scripted
``Reply``; ``/v1/models`` lists ``models``. Every request is recorded.

Replies are lists of parts: bytes are written as one HTTP chunk each, floats are pauses
(seconds), so a test can stall a stream or cut it off at an exact byte.
"""

import asyncio
import contextlib
import json
from collections import deque
from collections.abc import AsyncIterator
from collections.abc import Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from .loopback import LoopbackServer
from .loopback import read_request

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    408: "Request Timeout",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


@dataclass
class Reply:
    """One scripted response.

    Attributes:
        status: the HTTP status.
        headers: extra response headers.
        parts: body pieces; bytes are sent (one chunk each), floats are pauses.
        chunked: use chunked transfer encoding; otherwise the body ends when the
            connection closes.
        cut: close the connection without finishing the body (no final chunk).
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    parts: list[bytes | float] = field(default_factory=list)
    chunked: bool = True
    cut: bool = False


@dataclass
class Received:
    """One request the server saw."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


def chunk(
    content: str | None = None,
    *,
    reasoning: str | None = None,
    reasoning_field: str = "reasoning_content",
    tool_calls: list[dict[str, Any]] | None = None,
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    model: str = "gpt-test",
    choices: bool = True,
) -> dict[str, Any]:
    """A chat.completion.chunk object the way OpenAI shapes it."""
    delta: dict[str, Any] = {}
    if content is not None:
        delta["content"] = content
    if reasoning is not None:
        delta[reasoning_field] = reasoning
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if choices else [],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def call_fragment(
    index: int, *, id: str | None = None, name: str | None = None, arguments: str = ""
) -> dict[str, Any]:
    """One element of a delta's ``tool_calls`` list."""
    fragment: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if id is not None:
        fragment["id"] = id
        fragment["type"] = "function"
    if name is not None:
        fragment["function"]["name"] = name
    return fragment


def sse(*events: dict[str, Any] | str | bytes | float, done: bool = True, **options: Any) -> Reply:
    """A 200 event stream: dicts become ``data:`` events, str/bytes are sent verbatim."""
    parts: list[bytes | float] = []
    for event in events:
        if isinstance(event, dict):
            parts.append(b"data: " + json.dumps(event).encode() + b"\n\n")
        elif isinstance(event, str):
            parts.append(event.encode())
        else:
            parts.append(event)
    if done:
        parts.append(b"data: [DONE]\n\n")
    headers = {"Content-Type": "text/event-stream", **options.pop("headers", {})}
    return Reply(status=200, headers=headers, parts=parts, **options)


def text_reply(text: str, *, usage: dict[str, Any] | None = None, pieces: int = 3) -> Reply:
    """A plain answer streamed in a few pieces, then the finish and (optionally) usage."""
    size = max(1, -(-len(text) // pieces))
    events: list[dict[str, Any] | str | bytes | float] = [
        chunk(text[i : i + size]) for i in range(0, len(text), size)
    ]
    events.append(chunk(finish="stop"))
    if usage is not None:
        events.append(chunk(usage=usage, choices=False))
    return sse(*events)


def error(status: int, body: Any = None, *, headers: dict[str, str] | None = None) -> Reply:
    """A complete (non-streamed) error response with a JSON or text body."""
    if body is None:
        body = {"error": {"message": f"scripted {status}", "type": "test"}}
    data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    content_type = "text/plain" if isinstance(body, str) else "application/json"
    return Reply(
        status=status,
        headers={"Content-Type": content_type, **(headers or {})},
        parts=[data],
        chunked=False,
    )


class OpenAIServer(LoopbackServer):
    """The server; use ``serve_openai()`` to start and stop it."""

    def __init__(self, models: Iterable[str]) -> None:
        super().__init__()
        self.models = list(models)
        self.replies: deque[Reply] = deque()
        self.requests: list[Received] = []

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def script(self, *replies: Reply) -> "OpenAIServer":
        self.replies.extend(replies)
        return self

    @property
    def completions(self) -> list[Received]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Record the request and play the next scripted reply."""
        method, path, headers, raw = await read_request(reader)
        request = Received(
            method=method, path=path, headers=headers, body=json.loads(raw) if raw else None
        )
        self.requests.append(request)
        await self._respond(request, writer)

    async def _respond(self, request: Received, writer: asyncio.StreamWriter) -> None:
        if request.method == "GET" and request.path.endswith("/models"):
            listing = {
                "object": "list",
                "data": [{"id": m, "object": "model"} for m in self.models],
            }
            reply = Reply(
                headers={"Content-Type": "application/json"},
                parts=[json.dumps(listing).encode()],
                chunked=False,
            )
        elif request.method == "POST" and request.path.endswith("/chat/completions"):
            reply = self.replies.popleft() if self.replies else error(400, "no scripted reply left")
        else:
            reply = error(404)
        await self._write(reply, writer)

    async def _write(self, reply: Reply, writer: asyncio.StreamWriter) -> None:
        head = [f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}"]
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        head.append("Connection: close")
        if reply.chunked:
            head.append("Transfer-Encoding: chunked")
        elif not reply.cut and all(isinstance(p, bytes) for p in reply.parts):
            length = sum(len(p) for p in reply.parts if isinstance(p, bytes))
            head.append(f"Content-Length: {length}")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        for part in reply.parts:
            if isinstance(part, float | int):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), part)
                if self._closing.is_set():
                    return
                continue
            if reply.chunked:
                writer.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            else:
                writer.write(part)
            await writer.drain()
        if reply.chunked and not reply.cut:
            writer.write(b"0\r\n\r\n")
            await writer.drain()


@asynccontextmanager
async def serve_openai(models: Iterable[str] = ("gpt-test",)) -> AsyncIterator[OpenAIServer]:
    """Run an ``OpenAIServer`` for the duration of the block."""
    server = OpenAIServer(models)
    await server.start()
    try:
        yield server
    finally:
        await server.close()
