"""What calling an MCP server's tool costs, over loopback HTTP and over stdio. JSON lines.

Run with ``hatch run bench --only mcp`` (or ``python -m benchmarks.mcp``). For each
transport, against a real MCP server on this machine (the MCP SDK's own server:
``McpStubServer`` over Streamable HTTP on 127.0.0.1, and the package's test server
over stdio):

* ``mcp_call``: one ``McpTools.call`` on a warm connection, narrowing and result
  mapping included, the server's own work being nothing (``call_median_ms``); the
  baseline is the same call made through the SDK's ``Client`` directly on that
  connection (``sdk_median_ms``): the difference is what the tool source adds.
* ``mcp_run``: a Run of K=10 turns that each call the server's tool, on the in-memory
  store, per tool turn (``per_tool_turn_ms``), beside the same Run calling a code tool
  (``code_tool_per_turn_ms``): the difference is what a remote tool costs a turn.
* ``mcp_stdio_start``: starting a stdio server's process and completing the handshake
  (``McpTools.resolve`` on a fresh pool), this interpreter plus the SDK's import.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import psych_runtime
from benchmarks.run import median_ms
from benchmarks.run import timed
from psych_mcp import McpPool
from psych_mcp import McpStubServer
from psych_mcp import McpTools
from psych_runtime import RunId
from psych_runtime import Scope
from psych_runtime import ToolContext
from psych_runtime.models import ModelRequest
from psych_runtime.records import AttemptId
from psych_runtime.records import ToolCallId
from psych_runtime.spec import AgentSpec
from psych_runtime.spec import McpServer
from psych_runtime.testing import FakeModel

SCOPE = Scope(tenant="bench")
LOOPBACK = psych_runtime.EgressPolicy(allow_hosts=frozenset({"127.0.0.1"}))
STDIO_SERVER = Path(__file__).resolve().parents[1] / "packages/psych-mcp/tests/stdio_server.py"
K = 10


def _emit(metric: str, transport: str, **values: Any) -> None:
    print(
        json.dumps({"metric": metric, "store": "-", "transport": transport, **values}), flush=True
    )


class _Calling:
    """Answers any Run with K calls of ``tool`` (one per turn), then a final text."""

    def __init__(self, tool: str, arguments: dict[str, Any]) -> None:
        self.tool, self.arguments = tool, arguments

    async def known_models(self) -> frozenset[str]:
        return frozenset()

    def stream(self, request: ModelRequest) -> Any:
        done = sum(1 for m in request.messages if m.role == "tool")
        script = FakeModel()
        if done < K:
            script.turn(tool_calls=[(self.tool, self.arguments)])
        else:
            script.turn(text="done")
        return script.stream(request)


async def _per_turn(spec: AgentSpec, model: _Calling, tools: list[Any], n: int, **kw: Any) -> float:
    async with psych_runtime.session(model, tools=tools, **kw) as s:
        version = await s.publish(spec)

        async def one() -> None:
            run = await s.dispatch(version, "go")
            await s.wait(run.run_id)

        await one()
        return median_ms(await timed(one, n)) / K


async def _one_transport(transport: str, server: McpServer, pool: McpPool, n: int) -> None:
    tools = McpTools(pool)
    spec = AgentSpec(name="bench", model="m", mcp_servers=(server,))
    offered = await tools.resolve(spec, SCOPE, permitted=None)
    tool = next(t for t in offered.tools if t.remote_name == "ping")
    context = ToolContext.for_call(
        run_id=RunId("r"), call_id=ToolCallId("c"), scope=SCOPE, attempt_id=AttemptId("a")
    )

    async def through_the_source() -> None:
        await tools.call(spec, tool, {}, context, permitted=None)

    [key] = pool.open_connections
    connection = pool._pool._entries[key].connection  # the SDK client, for the baseline
    client = connection._require()

    async def through_the_sdk() -> None:
        await client.call_tool("ping", {})

    await through_the_source()
    source = median_ms(await timed(through_the_source, n))
    sdk = median_ms(await timed(through_the_sdk, n))
    _emit(
        "mcp_call",
        transport,
        call_median_ms=source,
        sdk_median_ms=sdk,
        samples=n,
    )
    runs = max(3, n // 20)
    settings = psych_runtime.RuntimeSettings(tool_sources=[tools])
    remote = await _per_turn(spec, _Calling(f"{server.name}__ping", {}), [], runs, runtime=settings)

    async def ping() -> str:
        """Answer pong."""
        return "pong"

    code_spec = AgentSpec(name="bench", model="m", tools=("ping",))
    local = await _per_turn(code_spec, _Calling("ping", {}), [ping], runs)
    _emit(
        "mcp_run",
        transport,
        k=K,
        per_tool_turn_ms=round(remote, 3),
        code_tool_per_turn_ms=round(local, 3),
        samples=runs,
    )


async def bench_mcp(quick: bool) -> None:
    n = 40 if quick else 200
    async with McpStubServer() as stub:
        stub.tool("ping", "pong", annotations={"readOnlyHint": True})
        async with McpPool(egress=LOOPBACK) as pool:
            await _one_transport("http", McpServer(name="stub", url=stub.url), pool, n)
    stdio = McpServer(name="local", command=sys.executable, args=(str(STDIO_SERVER),))
    spec = AgentSpec(name="bench", model="m", mcp_servers=(stdio,))
    starts = []
    for _ in range(3 if quick else 8):
        async with McpPool() as fresh:
            started = time.perf_counter()
            await McpTools(fresh).resolve(spec, SCOPE, permitted=None)
            starts.append(time.perf_counter() - started)
    _emit("mcp_stdio_start", "stdio", median_ms=median_ms(starts), samples=len(starts))
    async with McpPool() as pool:
        await _one_transport("stdio", stdio.model_copy(update={"allow": ("ping",)}), pool, n)


if __name__ == "__main__":
    asyncio.run(bench_mcp("--quick" in sys.argv))
