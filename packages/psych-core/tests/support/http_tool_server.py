"""A small REST server on 127.0.0.1 for exercising HTTP tools, on asyncio streams.

Each request is recorded and handed to a handler that returns an ``Answer`` (status,
body, content type, and an optional delay before answering). One request per
connection, ``Connection: close``, ``Content-Length`` bodies: enough HTTP/1.1 for
httpx, and nothing a test would have to reason about.
"""

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit


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


class ToolServer:
    """The server; use ``serve_tool_api()`` to start and stop it."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[Seen] = []
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._closing = asyncio.Event()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)

    async def close(self) -> None:
        self._closing.set()
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self._writers.add(writer)
        try:
            seen = await self._read(reader)
            self.requests.append(seen)
            answer = self.handler(seen)
            if not isinstance(answer, Answer):
                answer = await answer
            if answer.delay:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), answer.delay)
            if not self._closing.is_set():
                await self._write(answer, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._handlers.discard(task)
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()

    async def _read(self, reader: asyncio.StreamReader) -> Seen:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        body = await reader.readexactly(length) if length else b""
        parts = urlsplit(target)
        return Seen(
            method=method,
            target=target,
            path=parts.path,
            query=parse_qs(parts.query, keep_blank_values=True),
            headers=headers,
            body=body,
        )

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
