"""A stdio MCP server started inside a sandbox, through the core's ``Sandbox`` port only.

The port runs a Python program and lets it call the host back through bindings; it
has no notion of a long-lived process with pipes. So the program is a small relay:
it starts the server (the ``Launch``'s program, arguments and environment) as its
own child, inside the sandbox and under its limits, and exchanges lines with the
host through one binding, ``mcp_exchange``: each call carries what the server wrote
(stdout lines, stderr text, whether it exited) and returns what the client sends.
The host side of that binding is ``SandboxedProcess``, which the stdio transport
uses like a local process. A call waits a moment for something to send, so an idle
server costs a few exchanges a second, and a message takes at most about two such
moments longer than over a local pipe.
"""

import asyncio
import contextlib
import json
from typing import Final

from pydantic import JsonValue

from psych_mcp._stdio import Launch
from psych_mcp._stdio import StderrTail
from psych_runtime.adapters.sandbox import Execution
from psych_runtime.adapters.sandbox import ExecutionStatus
from psych_runtime.adapters.sandbox import Program
from psych_runtime.adapters.sandbox import ResolvedLimits
from psych_runtime.adapters.sandbox import Sandbox
from psych_runtime.adapters.tools import RemoteError
from psych_runtime.adapters.tools import RemoteFailure

EXCHANGE: Final = "mcp_exchange"
"""The one binding the relay calls."""

WAIT_SECONDS: Final = 0.02
"""How long either side waits for something to pass on before it answers anyway."""

SERVER_LIMITS: Final = ResolvedLimits(
    cpu_seconds=3_600.0,
    wall_seconds=86_400.0,
    memory_bytes=4 * 1024**3,
    file_size_bytes=64 * 1024**2,
    process_count=256,
    disk_bytes=256 * 1024**2,
)
"""The limits a sandboxed server runs under: a long-lived process, not a snippet."""

_RELAY = """
import json, queue, subprocess, threading
launch = json.loads({launch!r})
child = subprocess.Popen(
    launch["argv"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    env=launch["env"],
)
lines, errors = queue.Queue(), queue.Queue()
def pump(stream, into, whole_lines):
    read = stream.readline if whole_lines else (lambda: stream.read1(4096))
    for chunk in iter(read, b""):
        into.put(chunk.decode("utf-8", "replace"))
    into.put(None)
threading.Thread(target=pump, args=(child.stdout, lines, True), daemon=True).start()
threading.Thread(target=pump, args=(child.stderr, errors, False), daemon=True).start()
closed = False
while True:
    out = []
    try:
        out.append(lines.get(timeout={wait}))
        while True:
            out.append(lines.get_nowait())
    except queue.Empty:
        pass
    ended = None in out
    said = []
    while not errors.empty():
        said.append(errors.get_nowait() or "")
    reply = tools.{exchange}(
        lines=[line for line in out if line is not None], stderr="".join(said),
        ended=ended or closed, exited=child.poll(),
    )
    for line in reply["lines"]:
        try:
            child.stdin.write(line.encode("utf-8") + b"\\n")
            child.stdin.flush()
        except OSError:
            pass
    closed = closed or ended
    if reply["stop"] or (closed and child.poll() is not None):
        break
try:
    child.stdin.close()
    child.wait({stop})
except Exception:
    child.kill()
result = child.poll()
"""


class SandboxedProcess:
    """The host's side of a stdio server relayed out of a sandbox."""

    def __init__(self, launch: Launch) -> None:
        self._launch = launch
        self._stdout: asyncio.Queue[bytes] = asyncio.Queue()
        self._stdin: asyncio.Queue[str] = asyncio.Queue()
        self._stderr = StderrTail()
        self._stopping = False
        self._ended = False
        self._exited: int | None = None
        self._run: asyncio.Task[Execution] | None = None

    @classmethod
    async def start(cls, sandbox: Sandbox, launch: Launch) -> "SandboxedProcess":
        """Start the relay, and through it the server, in ``sandbox``.

        Raises:
            RemoteError: ``launch_failed`` when the sandbox refuses the program at once.
        """
        process = cls(launch)
        text = json.dumps({"argv": list(launch.argv), "env": launch.env})
        source = _RELAY.format(launch=text, wait=WAIT_SECONDS, exchange=EXCHANGE, stop=2.0)
        program = Program(
            source=source,
            limits=SERVER_LIMITS,
            bindings=(EXCHANGE,),
            preview_bytes=2_000,
            max_artifacts=0,
        )
        process._run = asyncio.create_task(
            sandbox.execute(program, process._exchange), name=f"psych-mcp sandboxed {launch.server}"
        )
        process._run.add_done_callback(process._ran)
        await asyncio.sleep(0)  # let it start; a refusal shows up as an ended relay
        if process._run.done() and process._failed_to_start():
            message = (
                f"MCP server {launch.server}: the sandbox did not start it: {process.stderr_tail}"
            )
            raise RemoteError(RemoteFailure("launch_failed", message, transient=False))
        return process

    def _failed_to_start(self) -> bool:
        assert self._run is not None
        if self._run.cancelled() or self._run.exception() is not None:
            return True
        return self._run.result().status is ExecutionStatus.FAILED

    def _ran(self, run: "asyncio.Task[Execution]") -> None:
        """The relay ended: keep why, and let readers see the end of stdout."""
        self._ended = True
        if run.cancelled():
            said = "the sandboxed relay was stopped"
        elif (error := run.exception()) is not None:
            said = f"the sandbox failed: {type(error).__name__}: {error}"
        else:
            execution = run.result()
            if isinstance(execution.value, int):
                self._exited = execution.value
            said = execution.traceback or execution.message or execution.stderr
        if self._exited is None:
            self._exited = -1
        if said:
            self._stderr.add(f"\n{said}".encode())
        self._stdout.put_nowait(b"")

    async def _exchange(self, name: str, arguments: dict[str, JsonValue]) -> JsonValue:
        """The binding: take what the server said, hand back what the client sends."""
        lines = arguments.get("lines")
        for line in lines if isinstance(lines, list) else ():
            if isinstance(line, str):
                self._stdout.put_nowait(line.encode())
        said = arguments.get("stderr")
        if isinstance(said, str) and said:
            self._stderr.add(said.encode())
        exited = arguments.get("exited")
        if isinstance(exited, int):
            self._exited = exited
        if arguments.get("ended") is True and not self._ended:
            self._ended = True
            self._stdout.put_nowait(b"")
        sending: list[JsonValue] = []
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(WAIT_SECONDS):
                sending.append(await self._stdin.get())
        while not self._stdin.empty():
            sending.append(self._stdin.get_nowait())
        return {"lines": sending, "stop": self._stopping}

    @property
    def returncode(self) -> int | None:
        """The server's exit status once it has exited (-1 when the relay ended first)."""
        return self._exited

    @property
    def stderr_tail(self) -> str:
        """The most recent stderr it wrote, and why the relay ended if it did."""
        return self._stderr.text

    async def write(self, line: bytes) -> None:
        """Queue one line for the server's stdin."""
        if self._stopping or self._ended:
            raise ConnectionResetError("the sandboxed MCP server is gone")
        self._stdin.put_nowait(line.decode().rstrip("\n"))

    async def readline(self) -> bytes:
        """The next line the server wrote; empty at its end."""
        if self._ended and self._stdout.empty():
            return b""
        line = await self._stdout.get()
        if not line:
            self._stdout.put_nowait(b"")  # every later reader sees the end too
        return line

    async def exited(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds for the relay to end; the exit status, or None."""
        run = self._run
        if run is not None and not run.done():
            with contextlib.suppress(TimeoutError, asyncio.CancelledError, Exception):
                async with asyncio.timeout(timeout):
                    await asyncio.shield(run)
        return self._exited

    async def stop(self) -> None:
        """Ask the relay to stop the server and leave; cancel it if it does not."""
        self._stopping = True
        run = self._run
        if run is None or run.done():
            return
        with contextlib.suppress(TimeoutError, asyncio.CancelledError, Exception):
            async with asyncio.timeout(5.0):
                await asyncio.shield(run)
        if not run.done():
            run.cancel()
            with contextlib.suppress(BaseException):
                await run


__all__ = ["EXCHANGE", "SERVER_LIMITS", "SandboxedProcess"]
