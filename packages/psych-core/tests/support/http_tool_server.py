"""A small REST server on 127.0.0.1 for exercising HTTP tools, on asyncio streams.

Each request is recorded and handed to a handler that returns an ``Answer`` (status,
body, content type, and an optional delay before answering). One request per
connection, ``Connection: close``, ``Content-Length`` bodies: enough HTTP/1.1 for
httpx, and nothing a test would have to reason about.
"""

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from dataclasses import field
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs
from urllib.parse import urlsplit

from .loopback import LoopbackServer
from .loopback import read_request


@dataclass
class Seen:
    """One request the server received.

    Attributes:
        method: the request method.
        target: the raw request target, path and query exactly as sent.
        path: the (still percent-encoded) path.
        query: the decoded query parameters.
        headers: header names lower-cased.
        body: the raw body.
    """

    method: str
    target: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class Answer:
    """What the server sends back.

    Attributes:
        status: the HTTP status.
        body: bytes or text as is; anything else is sent as JSON.
        content_type: defaults to ``application/json`` for JSON bodies, else text.
        delay: seconds to wait before answering (cut short when the server closes).
        headers: extra response headers.
    """

    status: int = 200
    body: Any = b""
    content_type: str | None = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)

    def encoded(self) -> tuple[bytes, str]:
        if isinstance(self.body, bytes):
            return self.body, self.content_type or "application/octet-stream"
        if isinstance(self.body, str):
            return self.body.encode(), self.content_type or "text/plain; charset=utf-8"
        return json.dumps(self.body).encode(), self.content_type or "application/json"


Handler = Callable[[Seen], Answer | Awaitable[Answer]]


class ToolServer(LoopbackServer):
    """The server; use ``serve_tool_api()`` to start and stop it."""

    def __init__(self, handler: Handler) -> None:
        super().__init__()
        self.handler = handler
        self.requests: list[Seen] = []

    @property
    def base_url(self) -> str:
        return self.origin

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Record the request, ask the handler, and answer (after its delay)."""
        method, target, headers, body = await read_request(reader)
        parts = urlsplit(target)
        seen = Seen(
            method=method,
            target=target,
            path=parts.path,
            query=parse_qs(parts.query, keep_blank_values=True),
            headers=headers,
            body=body,
        )
        self.requests.append(seen)
        answer = self.handler(seen)
        if not isinstance(answer, Answer):
            answer = await answer
        if answer.delay:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), answer.delay)
        if not self._closing.is_set():
            await self._write(answer, writer)

    async def _write(self, answer: Answer, writer: asyncio.StreamWriter) -> None:
        body, content_type = answer.encoded()
        try:
            reason = HTTPStatus(answer.status).phrase
        except ValueError:
            reason = "Status"
        head = [
            f"HTTP/1.1 {answer.status} {reason}",
            f"Content-Type: {content_type}",
            f"Content-Length: {len(body)}",
            "Connection: close",
            *(f"{k}: {v}" for k, v in answer.headers.items()),
        ]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        await writer.drain()


@asynccontextmanager
async def serve_tool_api(handler: Handler) -> AsyncIterator[ToolServer]:
    """Run a ``ToolServer`` answering with ``handler`` for the duration of the block."""
    server = ToolServer(handler)
    await server.start()
    try:
        yield server
    finally:
        await server.close()
