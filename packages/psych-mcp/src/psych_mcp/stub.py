"""``McpStubServer``: a real MCP server on 127.0.0.1 that a test scripts as it goes.

It is built with the MCP SDK's own server and served by uvicorn over Streamable HTTP
(or the legacy SSE transport), so whatever talks to it speaks real MCP over a real
socket. A test adds and removes tools while it runs, makes some slow or failing,
requires a bearer token, and reads back every call it received with the
``Authorization`` header that came with it::

    async with McpStubServer(require_token="s3cret") as server:
        server.tool("find", lambda arguments: {"found": arguments["q"]})
        ...  # point a Spec's McpServer at server.url
        assert server.calls[0].authorization == "Bearer s3cret"

To stand in for a server behind OAuth, give it a ``token_check`` (which validates a
bearer token, say against the test's authorization server, and may return the token's
scopes), ``resource_metadata`` (served as its RFC 9728 protected resource metadata,
named in the ``WWW-Authenticate`` challenge of its 401s) and give tools the
``scopes`` they need: a call with a token lacking them is answered 403
``insufficient_scope``, as a real resource server would.

The server runs in a thread of its own with its own event loop, so a test that blocks
its loop cannot starve it; tool handlers run on the server's loop.

A tool's answer may be a ``CallToolResult``, a string (one text block), a list of
content blocks, or any other JSON value: a dict becomes the structured content (and
its JSON the text), anything else is sent as JSON text. A handler that raises
answers with an error result carrying the exception's message.
"""

import asyncio
import inspect
import json
import threading
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import Literal
from typing import Self

import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.sse import SseServerTransport
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount
from starlette.routing import Route
from starlette.types import ASGIApp
from starlette.types import Receive
from starlette.types import Scope
from starlette.types import Send

from psych_runtime.adapters.tools import ClosedOnExit

type Handler = Callable[[dict[str, Any]], Any]
"""Computes a tool's answer from the call's arguments; may be a coroutine function."""

type TokenVerdict = bool | Collection[str] | None
"""What a ``token_check`` says of a bearer token: False or None to refuse it (401),
True to accept it, or the scopes it grants (accepted; tools' ``scopes`` are checked)."""

type TokenCheck = Callable[[str], TokenVerdict | Awaitable[TokenVerdict]]
"""Validates a bearer token (without the ``Bearer`` prefix); may be a coroutine function."""

_START_SECONDS = 10.0
_POLL_SECONDS = 0.01


@dataclass(frozen=True, slots=True)
class StubCall:
    """One ``tools/call`` the stub received.

    Attributes:
        tool: the tool's name.
        arguments: the arguments as sent.
        authorization: the request's ``Authorization`` header, or None.
    """

    tool: str
    arguments: dict[str, Any]
    authorization: str | None


@dataclass(frozen=True, slots=True)
class _StubTool:
    definition: types.Tool
    answer: Handler | Any
    delay: float
    fail: str | None
    scopes: tuple[str, ...] = ()


class McpStubServer(ClosedOnExit):
    """A scriptable MCP server for tests, listening on a free port of 127.0.0.1.

    Args:
        name: the server's name, as it introduces itself.
        transport: ``http`` for Streamable HTTP (``url`` ends in ``/mcp``) or ``sse``
            for the legacy transport (``url`` ends in ``/sse``).
        require_token: when set, every request without
            ``Authorization: Bearer <require_token>`` is answered 401. May be
            changed while the server runs.
        token_check: when set, every request must carry a bearer token this accepts
            (else 401 with a ``WWW-Authenticate`` challenge); may be changed while
            the server runs. Takes precedence over ``require_token``.
        resource_metadata: when set, served (with ``resource`` set to ``url`` unless
            given) at ``/.well-known/oauth-protected-resource/<path>`` without a
            token, and named by the challenges' ``resource_metadata``.
        www_authenticate: the challenge of the 401s; by default
            ``Bearer resource_metadata="..."`` when ``resource_metadata`` is set,
            plus ``error="invalid_token"`` when a token was sent.
        port: the port to listen on; 0 picks a free one. After ``stop``, ``start``
            listens on the same port again.
    """

    def __init__(
        self,
        *,
        name: str = "psych-mcp-stub",
        transport: Literal["http", "sse"] = "http",
        require_token: str | None = None,
        token_check: TokenCheck | None = None,
        resource_metadata: Mapping[str, Any] | None = None,
        www_authenticate: str | None = None,
        port: int = 0,
    ) -> None:
        self.name = name
        self.transport = transport
        self.require_token = require_token
        self.token_check = token_check
        self.resource_metadata = resource_metadata
        self.www_authenticate = www_authenticate
        self._port = port
        self._lock = threading.Lock()
        self._tools: dict[str, _StubTool] = {}
        self._calls: list[StubCall] = []
        self._listings = 0
        self._uvicorn: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Where clients connect; the port is known once the server has started.

        Raises:
            RuntimeError: the server has not started yet.
        """
        if not self._port:
            raise RuntimeError("the stub server has no port until it has started")
        path = "/sse" if self.transport == "sse" else "/mcp"
        return f"http://127.0.0.1:{self._port}{path}"

    @property
    def running(self) -> bool:
        """Whether the server is serving now."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def calls(self) -> tuple[StubCall, ...]:
        """Every tool call received so far, oldest first."""
        with self._lock:
            return tuple(self._calls)

    @property
    def listings(self) -> int:
        """How many times a client has listed the tools."""
        with self._lock:
            return self._listings

    def tool(
        self,
        name: str,
        answer: Handler | Any = None,
        *,
        description: str = "",
        input_schema: Mapping[str, Any] | None = None,
        annotations: Mapping[str, Any] | types.ToolAnnotations | None = None,
        delay: float = 0.0,
        fail: str | None = None,
        scopes: Sequence[str] = (),
    ) -> None:
        """Offer a tool, or replace the one with the same name; takes effect at once.

        Args:
            name: the tool's name.
            answer: a callable computing the answer from the arguments (sync or
                async), or the answer itself, returned for every call.
            description: what the model is told the tool does.
            input_schema: the arguments' JSON Schema; any object by default.
            annotations: MCP hints, as a mapping (``{"readOnlyHint": True}`` or
                ``{"read_only_hint": True}``) or a ``ToolAnnotations``.
            delay: seconds to wait before answering.
            fail: when set, every call answers with an error result saying this.
            scopes: the OAuth scopes a call needs, when ``token_check`` returns the
                token's scopes; a call without them is answered HTTP 403 with
                ``error="insufficient_scope"`` and these scopes in the challenge.
        """
        hints = (
            types.ToolAnnotations.model_validate(dict(annotations))
            if isinstance(annotations, Mapping)
            else annotations
        )
        definition = types.Tool(
            name=name,
            description=description or None,
            input_schema=dict(input_schema) if input_schema is not None else {"type": "object"},
            annotations=hints,
        )
        with self._lock:
            self._tools[name] = _StubTool(definition, answer, delay, fail, tuple(scopes))

    def remove_tool(self, name: str) -> None:
        """Stop offering ``name``; unknown names are ignored."""
        with self._lock:
            self._tools.pop(name, None)

    @property
    def resource_metadata_url(self) -> str:
        """Where the protected resource metadata is served (with ``resource_metadata``)."""
        path = "/sse" if self.transport == "sse" else "/mcp"
        return f"http://127.0.0.1:{self._port}/.well-known/oauth-protected-resource{path}"

    def calls_to(self, name: str) -> tuple[StubCall, ...]:
        """The calls received for the tool ``name``, oldest first."""
        return tuple(call for call in self.calls if call.tool == name)

    async def start(self) -> None:
        """Start serving and return once the server accepts connections.

        Raises:
            RuntimeError: the server is already running, or could not start.
        """
        if self.running:
            raise RuntimeError("the stub server is already running")
        config = uvicorn.Config(
            self._app(),
            host="127.0.0.1",
            port=self._port,
            log_level="warning",
            access_log=False,
            lifespan="on",
            ws="none",
            timeout_graceful_shutdown=1,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(
            target=lambda: asyncio.run(server.serve()), name=f"{self.name} server", daemon=True
        )
        self._uvicorn, self._thread = server, thread
        thread.start()
        async with asyncio.timeout(_START_SECONDS):
            while not server.started:
                if not thread.is_alive():
                    raise RuntimeError("the stub server could not start (is the port taken?)")
                await asyncio.sleep(_POLL_SECONDS)
        self._port = server.servers[0].sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Stop serving (connections are dropped); ``start`` serves again on the same port."""
        server, thread = self._uvicorn, self._thread
        if server is None or thread is None:
            return
        server.should_exit = True
        await asyncio.to_thread(thread.join, _START_SECONDS)
        if thread.is_alive():
            server.force_exit = True
            await asyncio.to_thread(thread.join, _START_SECONDS)
        self._uvicorn = self._thread = None

    # Leaving an ``async with`` stops the server.
    close = stop

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    def _app(self) -> ASGIApp:
        server = Server(self.name, on_list_tools=self._list_tools, on_call_tool=self._call_tool)
        app = self._sse_app(server) if self.transport == "sse" else server.streamable_http_app()
        metadata_path = "/.well-known/oauth-protected-resource" + (
            "/sse" if self.transport == "sse" else "/mcp"
        )
        return _TokenGate(app, self, metadata_path)

    def _sse_app(self, server: Server[Any]) -> Starlette:
        messages = SseServerTransport("/messages/")

        async def stream(scope: Scope, receive: Receive, send: Send) -> None:
            async with messages.connect_sse(scope, receive, send) as (reading, writing):
                await server.run(reading, writing, server.create_initialization_options())

        return Starlette(
            routes=[
                Route("/sse", endpoint=_AsgiEndpoint(stream), methods=["GET"]),
                Mount("/messages/", app=messages.handle_post_message),
            ]
        )

    async def _list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        with self._lock:
            self._listings += 1
            return types.ListToolsResult(tools=[tool.definition for tool in self._tools.values()])

    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        request = getattr(ctx, "request", None)
        authorization = None
        if isinstance(request, Request):
            authorization = request.headers.get("authorization")
        with self._lock:
            self._calls.append(StubCall(params.name, arguments, authorization))
            tool = self._tools.get(params.name)
        if tool is None:
            return _error(f"unknown tool: {params.name}")
        if tool.delay:
            await asyncio.sleep(tool.delay)
        if tool.fail is not None:
            return _error(tool.fail)
        try:
            answer = tool.answer(arguments) if callable(tool.answer) else tool.answer
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as error:
            return _error(str(error) or type(error).__name__)
        return _result(answer)


class _TokenGate:
    """Serves the resource metadata; answers 401/403 to requests without a good token."""

    def __init__(self, app: ASGIApp, stub: McpStubServer, metadata_path: str) -> None:
        self._app = app
        self._stub = stub
        self._metadata_path = metadata_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        stub = self._stub
        metadata = stub.resource_metadata
        path = scope.get("path") if scope["type"] == "http" else None
        if metadata is not None and path == self._metadata_path:
            await JSONResponse({"resource": stub.url, **metadata})(scope, receive, send)
            return
        if scope["type"] == "http" and stub.token_check is not None:
            await self._checked(stub.token_check, scope, receive, send)
            return
        token = stub.require_token
        if scope["type"] == "http" and token is not None:
            headers = dict(scope.get("headers", []))
            if headers.get(b"authorization", b"").decode("latin-1") != f"Bearer {token}":
                refusal = JSONResponse({"error": "unauthorized"}, status_code=401)
                await refusal(scope, receive, send)
                return
        await self._app(scope, receive, send)

    async def _checked(self, check: TokenCheck, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", []))
        header = headers.get(b"authorization", b"").decode("latin-1")
        verdict: TokenVerdict = None
        if header.startswith("Bearer "):
            checked = check(header.removeprefix("Bearer "))
            verdict = await checked if inspect.isawaitable(checked) else checked
        if verdict is None or verdict is False:
            error = ', error="invalid_token"' if header else ""
            await self._refuse(401, error, scope, receive, send)
            return
        if verdict is True or scope["method"] != "POST":
            await self._app(scope, receive, send)
            return
        body, receive = await _buffered(receive)
        needed = self._needed(body)
        missing = [s for s in needed if s not in set(verdict)]
        if missing:
            wanted = " ".join(needed)
            detail = f', error="insufficient_scope", scope="{wanted}"'
            await self._refuse(403, detail, scope, receive, send)
            return
        await self._app(scope, receive, send)

    def _needed(self, body: bytes) -> tuple[str, ...]:
        """The scopes the ``tools/call`` in ``body`` needs, if it is one."""
        try:
            message = json.loads(body)
        except ValueError:
            return ()
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            return ()
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        with self._stub._lock:
            tool = self._stub._tools.get(name) if isinstance(name, str) else None
        return tool.scopes if tool is not None else ()

    async def _refuse(
        self, status: int, detail: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        stub = self._stub
        challenge = stub.www_authenticate
        if challenge is None:
            challenge = "Bearer"
            if stub.resource_metadata is not None:
                challenge += f' resource_metadata="{stub.resource_metadata_url}"'
                detail = f",{detail.removeprefix(',')}" if detail else ""
            else:
                detail = detail.removeprefix(",")
            challenge += detail
        refusal = JSONResponse(
            {"error": "unauthorized" if status == 401 else "insufficient_scope"},
            status_code=status,
            headers={"WWW-Authenticate": challenge},
        )
        await refusal(scope, receive, send)


async def _buffered(receive: Receive) -> tuple[bytes, Receive]:
    """Read a request's whole body; a ``receive`` that hands it over again."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    replayed = False

    async def again() -> Any:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, again


class _AsgiEndpoint:
    """Marks a coroutine function as a raw ASGI endpoint for a Starlette ``Route``."""

    def __init__(self, serve: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self._serve = serve

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._serve(scope, receive, send)


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def _result(answer: Any) -> types.CallToolResult:
    """A tool's answer as an MCP result (see the module docstring)."""
    if isinstance(answer, types.CallToolResult):
        return answer
    if answer is None:
        return types.CallToolResult(content=[])
    if isinstance(answer, str):
        return types.CallToolResult(content=[types.TextContent(text=answer)])
    if isinstance(answer, Sequence) and answer and all(_is_block(item) for item in answer):
        return types.CallToolResult(content=list(answer))
    text = types.TextContent(text=json.dumps(answer))
    structured = answer if isinstance(answer, dict) else None
    return types.CallToolResult(content=[text], structured_content=structured)


def _is_block(item: object) -> bool:
    return isinstance(
        item,
        types.TextContent
        | types.ImageContent
        | types.AudioContent
        | types.EmbeddedResource
        | types.ResourceLink,
    )


__all__ = ["Handler", "McpStubServer", "StubCall", "TokenCheck", "TokenVerdict"]
