"""MCP servers that speak stdio: a process per connection, one JSON-RPC message per line.

``launch`` turns a Spec's ``McpServer`` into what to run for one Scope: the program
(an absolute path, or a bare name found on the ``PATH`` the Spec's environment gives,
else the host's), its arguments and its whole environment, made only of the Spec's
``env`` (literal values, and secrets the resolver gives for the tenant). Nothing of
the host's environment reaches the process.

``LocalProcess`` runs it as a child of this process, in a session of its own so that
stopping it stops everything it started; ``stdio_streams`` is the MCP SDK transport
over such a process: what the server writes on stdout becomes messages for the
client, what the client sends is written to stdin. The server's stderr is kept, the
last ``STDERR_KEPT`` bytes of it, for diagnosis. A process that exits closes the
streams, the connection counts as broken, and the pool starts a new one on next use.
"""

import asyncio
import contextlib
import json
import os
import shlex
import shutil
import signal
from collections.abc import AsyncIterator
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Final
from typing import Protocol

import anyio
import mcp_types as types
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

from psych_runtime import Scope
from psych_runtime.adapters.tools import RemoteError
from psych_runtime.adapters.tools import RemoteFailure
from psych_runtime.spec import McpServer

if TYPE_CHECKING:
    from psych_mcp.pool import McpPool

STDERR_KEPT: Final = 16 * 1024
"""How many bytes of a server's stderr are kept (the most recent)."""

LINE_LIMIT: Final = 64 * 1024 * 1024
"""The longest message line read from a server's stdout."""

STOP_SECONDS: Final = 2.0
"""How long a server may take to exit after its stdin closes, then after SIGTERM."""


@dataclass(frozen=True, slots=True)
class Launch:
    """What to start for one stdio server and Scope.

    Attributes:
        server: the server's name in the Spec.
        argv: the program (resolved to a path) and its arguments.
        env: the process's whole environment.
        secrets: the names of the variables whose values came from secrets.
    """

    server: str
    argv: tuple[str, ...]
    env: dict[str, str]
    secrets: frozenset[str] = frozenset()

    @property
    def command_line(self) -> str:
        """The command as a shell would read it, for messages and the pool key."""
        return shlex.join(self.argv)

    @property
    def fingerprint(self) -> str:
        """Everything that makes two processes different, as one string to digest."""
        return json.dumps([self.argv, sorted(self.env.items())], separators=(",", ":"))


async def launch(pool: "McpPool", server: McpServer, scope: Scope) -> Launch:
    """What starting ``server`` for ``scope`` runs, its secrets looked up for the tenant.

    Raises:
        RemoteError: ``missing_credential`` for a secret the tenant does not have,
            ``launch_failed`` when the program cannot be found.
    """
    assert server.command is not None  # a stdio server always has one (the Spec says so)
    env: dict[str, str] = {}
    secrets: set[str] = set()
    for variable in server.env:
        if variable.value is not None:
            env[variable.name] = variable.value
            continue
        assert variable.secret is not None
        value = await pool.secret(server, scope, variable.secret)
        env[variable.name] = value
        secrets.add(variable.name)
    program = _resolve(server, env.get("PATH"))
    return Launch(server.name, (program, *server.args), env, frozenset(secrets))


def _resolve(server: McpServer, path: str | None) -> str:
    command = server.command
    assert command is not None
    if command.startswith("/"):
        found = command if os.access(command, os.X_OK) and os.path.isfile(command) else None
    else:
        found = shutil.which(command, path=path if path is not None else os.environ.get("PATH"))
    if found is None:
        where = "" if command.startswith("/") else " on the PATH"
        message = f"MCP server {server.name}: cannot run {command!r}: no such program{where}"
        raise RemoteError(RemoteFailure("launch_failed", message, transient=False))
    return found


class ServerProcess(Protocol):
    """A running stdio server, as the transport needs it."""

    @property
    def returncode(self) -> int | None:
        """The exit status once it has exited, else None."""
        ...

    @property
    def stderr_tail(self) -> str:
        """The most recent ``STDERR_KEPT`` bytes it wrote to stderr, decoded leniently."""
        ...

    async def write(self, line: bytes) -> None:
        """Send one line to its stdin.

        Raises:
            ConnectionError: its stdin is closed.
        """
        ...

    async def readline(self) -> bytes:
        """The next line it wrote to stdout; empty once it closed stdout."""
        ...

    async def exited(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds for it to exit; its exit status, or None."""
        ...

    async def stop(self) -> None:
        """Stop it, and everything it started; never raises, never hangs."""
        ...


class StderrTail:
    """The last ``STDERR_KEPT`` bytes written to a stream."""

    def __init__(self) -> None:
        self._kept = bytearray()

    def add(self, chunk: bytes) -> None:
        """Keep ``chunk``, forgetting what falls out of the bound."""
        self._kept += chunk
        if len(self._kept) > STDERR_KEPT:
            del self._kept[: len(self._kept) - STDERR_KEPT]

    @property
    def text(self) -> str:
        """What is kept, as text."""
        return self._kept.decode("utf-8", errors="replace")


class LocalProcess:
    """A stdio server run as a child process in a session (and process group) of its own."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process
        self._stderr = StderrTail()
        self._pump = asyncio.create_task(self._keep_stderr(), name="psych-mcp stderr")

    @classmethod
    async def start(cls, launch: Launch) -> "LocalProcess":
        """Start the server ``launch`` describes.

        Raises:
            RemoteError: ``launch_failed`` when the program cannot be started.
        """
        try:
            process = await asyncio.create_subprocess_exec(
                *launch.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=launch.env,
                start_new_session=True,
                limit=LINE_LIMIT,
            )
        except OSError as error:
            message = (
                f"MCP server {launch.server}: cannot start {launch.command_line!r} "
                f"({type(error).__name__}: {error.strerror or error})"
            )
            raise RemoteError(RemoteFailure("launch_failed", message, transient=False)) from None
        return cls(process)

    @property
    def returncode(self) -> int | None:
        """The exit status once it has exited, else None."""
        return self._process.returncode

    @property
    def stderr_tail(self) -> str:
        """The most recent stderr it wrote."""
        return self._stderr.text

    async def _keep_stderr(self) -> None:
        stream = self._process.stderr
        assert stream is not None
        with contextlib.suppress(OSError, ValueError):
            while chunk := await stream.read(4096):
                self._stderr.add(chunk)

    async def write(self, line: bytes) -> None:
        """Send one line to its stdin."""
        stdin = self._process.stdin
        assert stdin is not None
        if stdin.is_closing():
            raise ConnectionResetError("the MCP server's stdin is closed")
        stdin.write(line)
        await stdin.drain()

    async def readline(self) -> bytes:
        """The next line of its stdout; empty at its end."""
        stdout = self._process.stdout
        assert stdout is not None
        try:
            return await stdout.readline()
        except (ValueError, OSError):  # a line over the limit, or the pipe gone
            return b""

    async def exited(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds for it to exit; its exit status, or None."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._process.wait()
        return self._process.returncode

    async def stop(self) -> None:
        """Close its stdin, give it time to leave, then signal its whole process group."""
        process = self._process
        with contextlib.suppress(Exception):
            if process.stdin is not None and not process.stdin.is_closing():
                process.stdin.close()
        for sent in (None, signal.SIGTERM, signal.SIGKILL):
            if sent is not None and process.returncode is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, sent)
            try:
                async with asyncio.timeout(STOP_SECONDS):
                    await process.wait()
                break
            except TimeoutError:
                continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # anything it left behind in its group
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            async with asyncio.timeout(STOP_SECONDS):
                await self._pump


TOOLS_CHANGED: Final = "notifications/tools/list_changed"


@contextlib.asynccontextmanager
async def stdio_streams(
    process: ServerProcess, *, on_tools_changed: Callable[[], None] = lambda: None
) -> AsyncIterator[TransportStreams]:
    """The MCP SDK's transport streams over ``process``'s stdout and stdin.

    ``on_tools_changed`` runs as the server's announcement that its tools changed is
    read, before anything the server wrote after it is passed on: a tool the server
    added before answering a call is known to have been added by the time the answer
    arrives.

    Leaving stops the process, shielded from cancellation so it never outlives the
    connection.
    """
    incoming_writer, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outgoing, outgoing_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def reading() -> None:
        async with incoming_writer:
            while line := await process.readline():
                if not line.strip():
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except ValueError as error:
                    await incoming_writer.send(error)
                    continue
                if (
                    isinstance(message, types.JSONRPCNotification)
                    and message.method == TOOLS_CHANGED
                ):
                    on_tools_changed()
                await incoming_writer.send(SessionMessage(message))

    async def writing() -> None:
        try:
            async with outgoing_reader:
                async for sent in outgoing_reader:
                    text = sent.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.write(text.encode() + b"\n")
        except (ConnectionError, OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            await incoming_writer.aclose()  # the server is gone: the session sees the end

    async with anyio.create_task_group() as group:
        group.start_soon(reading)
        group.start_soon(writing)
        try:
            yield incoming, outgoing
        finally:
            with anyio.CancelScope(shield=True):
                await process.stop()
                await outgoing.aclose()
                await incoming.aclose()
            group.cancel_scope.cancel()


__all__ = [
    "LINE_LIMIT",
    "STDERR_KEPT",
    "Launch",
    "LocalProcess",
    "ServerProcess",
    "StderrTail",
    "launch",
    "stdio_streams",
]
