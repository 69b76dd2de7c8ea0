"""One open MCP session with one server, for one tenant, kept alive by a task of its own.

The SDK's ``Client`` and its transports are async context managers built on anyio task
groups. A task group belongs to the task that entered it, and when the connection
underneath fails, the group cancels that task. So each connection is entered, held
and left by a dedicated task: callers send requests through the open ``Client`` from
their own tasks and are never cancelled by someone else's broken connection. Closing
tells the task to leave; a task that does not leave in time is cancelled, and one that
still does not finish is abandoned, so closing never hangs.
"""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import Any
from typing import Final

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from psych_mcp._classify import failure_of
from psych_mcp._egress import EgressTransport
from psych_mcp._egress import gated_client
from psych_mcp._stdio import ServerProcess
from psych_mcp._version import __version__
from psych_runtime import Scope
from psych_runtime.adapters.tools import AnyPolicy
from psych_runtime.adapters.tools import Catalogue
from psych_runtime.adapters.tools import RemoteError
from psych_runtime.adapters.tools import RemoteFailure
from psych_runtime.spec import McpServer

log = logging.getLogger(__name__)

STREAM_READ_SECONDS: Final = 300.0
"""How long a server-sent event stream may stay silent before it counts as lost."""

CLOSE_SECONDS: Final = 5.0
"""How long each step of closing (leaving, then cancelling) may take."""

MAX_PAGES: Final = 100
"""The most ``tools/list`` pages read from one server, so a paginator that never ends
cannot hang a turn."""

CLIENT_INFO = types.Implementation(name="psych-mcp", version=__version__)

EXIT_WAIT_SECONDS: Final = 2.0
"""How long a failure waits for a stdio server's exit status before it is reported."""

STDERR_IN_MESSAGE: Final = 1000
"""How much of a stdio server's stderr a failure's message quotes (the end of it)."""


type _Session = AbstractAsyncContextManager[Client]


class McpConnection:
    """A ``Client`` connected to one server, owned by a task of its own.

    Build one with ``McpConnection.open``.

    Attributes:
        server: the server's name in the Spec.
        transport: the egress-checking transport every request goes through.
        served: how many requests were made through this connection.
        catalogue: the server's tools as last listed, and when; a change the server
            announces makes it stale.
        changes: how many tool changes the server has announced.
    """

    def __init__(
        self,
        server: str,
        transport: EgressTransport | None,
        timeout: float,
        process: ServerProcess | None = None,
    ) -> None:
        self.server = server
        self.transport = transport
        self.process = process
        self.served = 0
        self.catalogue: Catalogue[tuple[types.Tool, ...]] = Catalogue()
        self.changes = 0
        self._exits = contextlib.AsyncExitStack()
        self._timeout = timeout
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._client: Client | None = None
        self._failed = False

    @classmethod
    async def open(
        cls,
        server: McpServer,
        *,
        policy: AnyPolicy,
        scope: Scope,
        bearer: str | None,
        timeout: float,
        authorization: str | None = None,
    ) -> "McpConnection":
        """Connect to ``server`` and complete the MCP handshake.

        Args:
            server: where to connect, and over which transport.
            policy: judges every request the connection makes.
            scope: the tenant and principal the connection serves.
            bearer: the token sent as ``Authorization: Bearer ...``, if any.
            timeout: seconds the handshake (and each later request) may take.
            authorization: a whole ``Authorization`` header value (an OAuth client's
                ``Bearer ...``); sent instead of ``bearer`` when given.

        Raises:
            RemoteError: the server could not be reached or refused the handshake.
        """
        transport = EgressTransport(policy, scope)
        connection = cls(server.name, transport, timeout)
        headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
        if authorization:
            headers = {"Authorization": authorization}
        await connection._enter(connection._session(server, headers))
        return connection

    @classmethod
    async def open_stdio(
        cls, server: McpServer, process: ServerProcess, *, timeout: float
    ) -> "McpConnection":
        """Complete the MCP handshake with a stdio server whose process is running.

        The connection owns ``process`` from here on: closing it stops the process.

        Raises:
            RemoteError: the server did not complete the handshake (its stderr is in
                the message).
        """
        from psych_mcp._stdio import stdio_streams  # deferred: only stdio servers need it

        connection = cls(server.name, None, timeout, process=process)
        try:
            transport = stdio_streams(process, on_tools_changed=connection.tools_changed)
            await connection._enter(Client(transport, **connection._options()))
        except BaseException:
            await process.stop()
            raise
        return connection

    async def _enter(self, session: _Session) -> None:
        """Enter ``session`` in a task of its own and wait for the handshake.

        Raises:
            RemoteError: the handshake failed or took longer than the timeout.
        """
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(
            self._hold(session, ready), name=f"psych-mcp connection to {self.server}"
        )
        try:
            async with asyncio.timeout(self._timeout):
                self._client = await asyncio.shield(ready)
        except BaseException as error:
            await self.close()
            if isinstance(error, Exception):
                raise await self._failure(error, refused_kind="tool_error") from error
            raise

    def _options(self) -> dict[str, Any]:
        return {
            "cache": None,
            "read_timeout_seconds": self._timeout,
            "client_info": CLIENT_INFO,
            "message_handler": self._on_message,
        }

    def _session(self, server: McpServer, headers: dict[str, str]) -> _Session:
        """The SDK client for ``server``'s transport, sending through ``self.transport``."""
        timeout = httpx2.Timeout(self._timeout, read=max(self._timeout, STREAM_READ_SECONDS))

        def http_client(
            headers: dict[str, str] | None = None,
            timeout: httpx2.Timeout | None = None,
            auth: httpx2.Auth | None = None,
        ) -> httpx2.AsyncClient:
            assert self.transport is not None
            return gated_client(self.transport, headers=headers, timeout=timeout)

        options = self._options()
        assert self.transport is not None and server.url is not None  # an HTTP server
        if server.transport == "sse":
            streams = sse_client(
                server.url,
                headers=headers,
                timeout=self._timeout,
                sse_read_timeout=max(self._timeout, STREAM_READ_SECONDS),
                httpx_client_factory=http_client,
            )
            return Client(streams, **options)
        return _OwnedHttpClient(http_client(headers, timeout), server.url, options)

    async def _hold(self, session: _Session, ready: asyncio.Future[Client]) -> None:
        """Enter the session, hand it over, and stay inside until told to stop."""
        try:
            async with session as client, self._listening(client):
                if ready.cancelled():
                    return
                ready.set_result(client)
                await self._stop.wait()
        except BaseException as error:  # the task ends quietly; its callers are told
            if not ready.done():
                ready.set_exception(error)
                ready.exception()  # retrieved, whether or not anyone still waits
            elif not isinstance(error, asyncio.CancelledError):
                log.debug("MCP connection to %s ended: %r", self.server, error)

    @contextlib.asynccontextmanager
    async def _listening(self, client: Client) -> AsyncIterator[None]:
        """Follow the server's announcements that its tools changed, while inside.

        A server on the 2026-07-28 protocol announces changes only on a
        ``subscriptions/listen`` stream, so one is opened (and acknowledged) before the
        connection is handed over, when the server says it announces tool changes. An
        earlier server sends ``notifications/tools/list_changed`` unasked (see
        ``_on_message``). A stream that cannot be opened, or that is lost, leaves the
        catalogue to its TTL.
        """
        capabilities = client.session.server_capabilities
        announces = capabilities is not None and bool(
            capabilities.tools is not None and capabilities.tools.list_changed
        )
        if not announces or client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            yield
            return
        try:
            subscription = await self._exits.enter_async_context(
                client.listen(tools_list_changed=True)
            )
        except Exception as error:  # not offered after all: the TTL does the work
            log.debug("MCP server %s: no change stream (%r)", self.server, error)
            yield
            return
        follower = asyncio.create_task(self._follow_changes(subscription))
        try:
            yield
        finally:
            follower.cancel()
            with contextlib.suppress(BaseException):
                await follower
            with contextlib.suppress(BaseException):
                await self._exits.aclose()

    async def _follow_changes(self, subscription: AsyncIterator[object]) -> None:
        try:
            async for _ in subscription:
                self.tools_changed()
        except Exception as error:  # lost: changes in between may have been missed
            log.debug("MCP server %s: change stream lost (%r)", self.server, error)
        self.tools_changed()

    def tools_changed(self) -> None:
        """The server said its tools changed: the next listing asks it again."""
        self.catalogue.invalidate()
        self.changes += 1

    async def _on_message(self, message: object) -> None:
        """The session's message handler: a tools change announcement stales the catalogue."""
        if isinstance(message, types.ToolListChangedNotification):
            self.tools_changed()

    @property
    def broken(self) -> bool:
        """Whether the connection is gone or failed, so it must not be used again."""
        exited = self.process is not None and self.process.returncode is not None
        return exited or self._failed or self._task is None or self._task.done()

    async def list_tools(self) -> tuple[types.Tool, ...]:
        """Every tool the server offers now, reading all pages.

        Raises:
            RemoteError: the request failed.
        """
        client = self._require()
        tools: list[types.Tool] = []
        cursor: str | None = None
        self.served += 1
        try:
            async with asyncio.timeout(self._timeout):
                for _ in range(MAX_PAGES):
                    page = await client.list_tools(cursor=cursor, cache_mode="bypass")
                    tools.extend(page.tools)
                    cursor = page.next_cursor
                    if cursor is None:
                        break
        except Exception as error:
            raise await self._failure(error, refused_kind="protocol_error") from error
        return tuple(tools)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """Call the server's tool ``name`` once.

        Raises:
            RemoteError: the call failed before the tool could answer.
        """
        client = self._require()
        self.served += 1
        try:
            async with asyncio.timeout(self._timeout):
                return await client.call_tool(name, arguments)
        except Exception as error:
            raise await self._failure(error, refused_kind="tool_error") from error

    def _require(self) -> Client:
        if self._client is None or self.broken:
            message = f"the connection to MCP server {self.server} is closed"
            raise RemoteError(RemoteFailure("unreachable", message, transient=True))
        return self._client

    async def _failure(self, error: Exception, *, refused_kind: str) -> RemoteError:
        if isinstance(error, RemoteError):
            return error
        failure = failure_of(error, self.server, self.transport, refused_kind=refused_kind)
        if failure.kind != refused_kind:
            # Not the server refusing one request: the connection itself is in doubt.
            self._failed = True
        if self.process is not None and (failure.kind != refused_kind or self.broken):
            # A server that closed its stdout is usually exiting: wait (briefly) for its
            # exit status, which says more than "connection closed" does.
            await self.process.exited(EXIT_WAIT_SECONDS)
            failure = _with_stderr(failure, self.process)
        return RemoteError(failure, challenge=_challenge(failure, self.transport))

    async def close(self) -> None:
        """Leave the session and close its HTTP client; never raises, never hangs."""
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        try:
            async with asyncio.timeout(CLOSE_SECONDS):
                await asyncio.shield(task)
            return
        except TimeoutError:
            task.cancel()
        try:
            async with asyncio.timeout(CLOSE_SECONDS):
                await asyncio.shield(task)
        except TimeoutError:
            log.warning("the MCP connection to %s did not close; abandoning it", self.server)


def _with_stderr(failure: RemoteFailure, process: ServerProcess) -> RemoteFailure:
    """``failure`` of a stdio server, with its exit status and the end of its stderr.

    A server whose process has exited is ``unreachable`` (transient): the pool starts
    a new process on next use.
    """
    said = process.stderr_tail.strip()[-STDERR_IN_MESSAGE:]
    exited = process.returncode
    notes = []
    if exited is not None:
        notes.append(f"the process exited with status {exited}")
    if said:
        notes.append(f"its stderr ends: {said}")
    if not notes:
        return failure
    message = f"{failure.message} ({'; '.join(notes)})"
    if exited is not None:  # gone: a new process is started on next use
        return RemoteFailure("unreachable", message, transient=True)
    return RemoteFailure(failure.kind, message, transient=failure.transient)


def _challenge(
    failure: RemoteFailure, transport: EgressTransport | None
) -> tuple[int, str | None] | None:
    """The 401/403 challenge behind an ``unauthorized`` failure, if the transport saw one."""
    if transport is None or failure.kind != "unauthorized":
        return None
    return transport.challenge


class _OwnedHttpClient:
    """A Streamable HTTP ``Client`` that also closes the ``httpx2`` client it sends through.

    The SDK leaves a client it was handed open, so this enters that client first and
    leaves it last.
    """

    def __init__(self, http: httpx2.AsyncClient, url: str, options: dict[str, Any]) -> None:
        self._http = http
        self._client = Client(streamable_http_client(url, http_client=http), **options)

    async def __aenter__(self) -> Client:
        await self._http.__aenter__()
        try:
            return await self._client.__aenter__()
        except BaseException:
            await self._http.aclose()
            raise

    async def __aexit__(self, *exc_info: Any) -> None:
        try:
            await self._client.__aexit__(*exc_info)
        finally:
            await self._http.aclose()


__all__ = ["McpConnection"]
