"""A small MCP server over stdio, built with the MCP SDK's own server, for tests.

Run as ``python stdio_server.py``. Its tools tell the test what the process is:
``environment`` (exactly the environment it was started with, read from
``/proc/self/environ``, so nothing the interpreter adds later shows), ``pid``,
``whisper`` (writes a line to stderr), ``crash`` (writes to stderr and exits 3),
``grow`` (adds a tool ``grown`` and announces the change), ``parent`` (the pid of
the process that started it) and ``ping`` (answers at once).
"""

import os
import sys

from mcp.server.mcpserver import Context
from mcp.server.mcpserver import MCPServer


def build() -> MCPServer:
    """A fresh server with every tool below (tests over HTTP serve one in-process)."""
    built = MCPServer("stdio-test", log_level="WARNING")
    for tool in (environment, pid, parent, whisper, crash, ping):
        built.add_tool(tool, description=tool.__doc__)

    @built.tool(description="Add the tool 'grown' and announce the change.")
    async def grow(ctx: Context) -> str:
        def grown() -> str:
            """A tool added while the server runs."""
            return "I was added later"

        built.add_tool(grown, name="grown", description="A tool added while the server runs.")
        await ctx.notify_tools_changed()
        return "grew"

    return built


def environment() -> dict[str, str]:
    """The environment this process was started with."""
    with open("/proc/self/environ", "rb") as raw:
        entries = [entry for entry in raw.read().split(b"\0") if entry]
    return dict(entry.decode().split("=", 1) for entry in entries)


def pid() -> int:
    """This process's id."""
    return os.getpid()


def parent() -> int:
    """The id of the process that started this one."""
    return os.getppid()


def whisper(text: str) -> str:
    """Write a line to stderr."""
    print(text, file=sys.stderr, flush=True)
    return "whispered"


def ping() -> str:
    """Answer at once (for benchmarks)."""
    return "pong"


def crash() -> str:
    """Write to stderr, then exit with status 3."""
    print("about to fall over: out of disk", file=sys.stderr, flush=True)
    os._exit(3)


if __name__ == "__main__":
    build().run("stdio")
