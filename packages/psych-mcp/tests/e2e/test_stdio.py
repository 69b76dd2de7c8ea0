"""MCP servers over stdio: a process per tenant, principal, server and credential.

The server is ``tests/stdio_server.py``, built with the MCP SDK's own server and run
by this interpreter. What each test checks is what the process itself reports (its
pid, its environment as the kernel started it, its parent), or whether the process
is still alive.
"""

import asyncio
import json
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from psych_mcp import McpPool
from psych_mcp import McpTools
from psych_runtime import Scope
from psych_runtime import TerminalState
from psych_runtime.adapters import SourceCallFailed
from psych_runtime.adapters import SourceTool
from psych_runtime.adapters import ToolContext
from psych_runtime.adapters import ToolSourceUnavailable
from psych_runtime.spec import AgentSpec
from psych_runtime.spec import McpEnv
from psych_runtime.spec import McpServer
from psych_runtime.testing import FakeModel

from ..tenant_secrets import PerTenant
from .conftest import ACME
from .conftest import GLOBEX
from .conftest import finishes
from .conftest import run_once

SERVER = Path(__file__).resolve().parents[1] / "stdio_server.py"
ADA = ACME.model_copy(update={"principal": "ada"})


def _server(**settings: Any) -> McpServer:
    return McpServer(name="local", command=sys.executable, args=(str(SERVER),), **settings)


def _spec(server: McpServer) -> AgentSpec:
    return AgentSpec(name="ops", model="fake-standard", mcp_servers=(server,))


def _context(scope: Scope = ACME) -> ToolContext:
    return ToolContext.for_call(run_id="run", call_id="call", scope=scope, attempt_id="att")


async def _call(
    tools: McpTools, spec: AgentSpec, name: str, scope: Scope = ACME, **arguments: Any
) -> Any:
    offered = await tools.resolve(spec, scope, permitted=None)
    tool: SourceTool = next(t for t in offered.tools if t.name == f"local__{name}")
    result = await tools.call(spec, tool, arguments, _context(scope), permitted=None)
    return result["structured"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _gone(pid: int) -> bool:
    async with asyncio.timeout(15):
        while _alive(pid):
            await asyncio.sleep(0.02)
    return True


async def test_a_process_starts_on_first_use_one_per_tenant_principal_and_credential() -> None:
    spec = _spec(_server(env=(McpEnv(name="TOKEN", secret="crm-token"),)))
    secrets = PerTenant({"acme": "acme-secret", "globex": "globex-secret"})
    async with McpPool(secrets=secrets) as pool:
        tools = McpTools(pool)
        assert pool.open_connections == ()  # nothing starts before a Run needs it
        first = (await _call(tools, spec, "pid"))["result"]
        assert (await _call(tools, spec, "pid"))["result"] == first  # the same process
        other_tenant = (await _call(tools, spec, "pid", GLOBEX))["result"]
        other_principal = (await _call(tools, spec, "pid", ADA))["result"]
        secrets.tokens["acme"] = "rotated"
        rotated = (await _call(tools, spec, "pid"))["result"]
        keys = pool.open_connections
    assert len({first, other_tenant, other_principal, rotated}) == 4
    assert {key.transport for key in keys} == {"stdio"}
    assert all("secret" not in repr(key) and "rotated" not in repr(key) for key in keys)
    for pid in (first, other_tenant, other_principal, rotated):
        assert await _gone(pid)  # closing the pool stopped every process


async def test_the_environment_is_only_what_the_spec_and_the_secrets_give() -> None:
    os.environ["PSYCH_HOST_ONLY"] = "never to be seen by a server"
    try:
        env = (McpEnv(name="MODE", value="strict"), McpEnv(name="TOKEN", secret="crm-token"))
        async with McpPool(secrets=PerTenant({"acme": "acme-secret"})) as pool:
            seen = await _call(McpTools(pool), _spec(_server(env=env)), "environment")
    finally:
        del os.environ["PSYCH_HOST_ONLY"]
    assert seen == {"MODE": "strict", "TOKEN": "acme-secret"}


async def test_an_idle_process_is_stopped_and_a_new_one_started_on_next_use() -> None:
    spec = _spec(_server())
    async with McpPool(idle_seconds=0) as pool:
        tools = McpTools(pool)
        first = (await _call(tools, spec, "pid"))["result"]
        second = (await _call(tools, spec, "pid"))["result"]  # the first had gone idle
        assert second != first
        assert await _gone(first)
        assert _alive(second)


async def test_a_process_that_dies_is_reported_with_its_stderr_and_started_again() -> None:
    spec = _spec(_server())
    async with McpPool() as pool:
        tools = McpTools(pool)
        first = (await _call(tools, spec, "pid"))["result"]
        await _call(tools, spec, "whisper", text="warming up")
        assert "warming up" in (pool.stderr(ACME, "local") or "")
        with pytest.raises(SourceCallFailed) as died:
            await _call(tools, spec, "crash")
        assert (died.value.kind, died.value.transient) == ("unreachable", True)
        assert "exited with status 3" in str(died.value)
        assert "out of disk" in str(died.value)
        assert "out of disk" in (pool.stderr(ACME, "local") or "")  # kept after it died
        again = (await _call(tools, spec, "pid"))["result"]
    assert again != first


async def test_a_process_killed_while_idle_is_replaced_before_the_next_use() -> None:
    spec = _spec(_server())
    async with McpPool() as pool:
        tools = McpTools(pool)
        first = (await _call(tools, spec, "pid"))["result"]
        os.kill(first, signal.SIGKILL)
        assert await _gone(first)
        [connection_key] = pool.open_connections
        async with asyncio.timeout(10):  # the pool learns of the exit from the process
            while not pool._pool._entries[connection_key].connection.broken:
                await asyncio.sleep(0.01)
        again = (await _call(tools, spec, "pid"))["result"]  # no failure: a new process
    assert again != first


async def test_a_program_that_cannot_start_or_a_missing_secret_is_a_clear_failure() -> None:
    async with McpPool() as pool:
        tools = McpTools(pool)
        missing = _spec(McpServer(name="local", command="/nonexistent/mcp-server"))
        with pytest.raises(ToolSourceUnavailable) as refused:
            await tools.resolve(missing, ACME, permitted=None)
        assert not refused.value.transient
        assert "/nonexistent/mcp-server" in str(refused.value) and "no such program" in str(
            refused.value
        )
        unknown = _spec(McpServer(name="local", command="psych-no-such-mcp-server"))
        with pytest.raises(ToolSourceUnavailable, match="on the PATH"):
            await tools.resolve(unknown, ACME, permitted=None)
        secretive = _spec(_server(env=(McpEnv(name="TOKEN", secret="crm-token"),)))
        with pytest.raises(ToolSourceUnavailable, match="no secret 'crm-token' for tenant 'acme'"):
            await tools.resolve(secretive, ACME, permitted=None)
        assert pool.open_connections == ()


async def test_a_bare_program_name_is_found_on_the_specs_path() -> None:
    folder = str(Path(sys.executable).parent)
    server = McpServer(
        name="local",
        command=Path(sys.executable).name,
        args=(str(SERVER),),
        env=(McpEnv(name="PATH", value=folder),),
    )
    async with McpPool() as pool:
        seen = await _call(McpTools(pool), _spec(server), "environment")
    assert seen == {"PATH": folder}


async def test_a_run_uses_a_stdio_server() -> None:
    model = FakeModel().turn(tool_calls=[("local__whisper", {"text": "hi"})]).turn(text="Done.")
    log = await run_once(_spec(_server()), model, McpTools(McpPool()))
    assert log[-1].state is TerminalState.COMPLETED
    assert finishes(log)[0].result["structured"] == {"result": "whispered"}


# --- in a sandbox ----------------------------------------------------------------------

MINIMAL_SERVER = r"""
import json, os, sys
TOOLS = [{"name": "parent", "inputSchema": {"type": "object"}},
         {"name": "environment", "inputSchema": {"type": "object"}}]
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, answer = message.get("method"), None
    if method == "initialize":
        answer = {"protocolVersion": message["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "minimal", "version": "1"}}
    elif method == "tools/list":
        answer = {"tools": TOOLS}
    elif method == "tools/call":
        name = message["params"]["name"]
        with open("/proc/self/environ", "rb") as raw:  # as started, before any coercion
            started = dict(e.decode().split("=", 1) for e in raw.read().split(b"\0") if e)
        value = os.getppid() if name == "parent" else started
        print("called " + name, file=sys.stderr, flush=True)
        answer = {"content": [{"type": "text", "text": json.dumps(value)}]}
    if answer is None:
        reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}}
    else:
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer}
    print(json.dumps(reply), flush=True)
"""


@pytest.fixture
async def sandbox() -> AsyncIterator[Any]:
    from psych_sandbox import SubprocessSandbox

    opened = await SubprocessSandbox.open()
    try:
        yield opened
    finally:
        await opened.close()


async def test_with_a_sandbox_the_server_starts_inside_it(sandbox: Any) -> None:
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("no system python3 for the sandboxed server")
    server = McpServer(
        name="local",
        command=python,
        args=("-c", MINIMAL_SERVER),  # no file: the sandbox sees little of the host
        env=(McpEnv(name="MODE", value="contained"),),
    )
    spec = _spec(server)
    async with McpPool(sandbox=sandbox) as pool:
        tools = McpTools(pool)
        offered = await tools.resolve(spec, ACME, permitted=None)
        by_name = {tool.name: tool for tool in offered.tools}
        parent = await tools.call(spec, by_name["local__parent"], {}, _context(), permitted=None)
        env = await tools.call(spec, by_name["local__environment"], {}, _context(), permitted=None)
        # stderr travels beside stdout, not in order with it: wait for the line to arrive.
        async with asyncio.timeout(10):
            while "called environment" not in (said := pool.stderr(ACME, "local") or ""):
                await asyncio.sleep(0.01)
    relay = int(json.loads(parent["text"]))
    assert relay != os.getpid()  # started by the relay inside the sandbox, not by us
    assert json.loads(env["text"]) == {"MODE": "contained"}
    assert "called parent" in said and "called environment" in said


# --- catalogues that change ------------------------------------------------------------


async def test_a_tool_the_server_adds_mid_run_is_offered_on_the_next_turn() -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[("local__grow", {})])
        .turn(tool_calls=[("local__grown", {})])
        .turn(text="Done.")
    )
    # The catalogue is kept five minutes: only the server's announcement can explain
    # the new tool showing up on the next turn.
    pool = McpPool(catalogue_ttl_seconds=300)
    log = await run_once(_spec(_server()), model, McpTools(pool))
    assert log[-1].state is TerminalState.COMPLETED
    first, second = ({t.name for t in request.tools} for request in model.requests[:2])
    assert "local__grown" not in first and "local__grown" in second
    grew, grown = finishes(log)
    assert grew.result["structured"] == {"result": "grew"}
    assert grown.result["structured"] == {"result": "I was added later"}


async def test_an_http_server_announcing_a_change_is_listed_again() -> None:
    from ..stdio_server import build
    from .conftest import LOOPBACK
    from .conftest import served

    app = build()
    async with served(app.streamable_http_app()) as port, McpPool(egress=LOOPBACK) as pool:
        spec = _spec(McpServer(name="local", url=f"http://127.0.0.1:{port}/mcp"))
        tools = McpTools(pool)
        offered = await tools.resolve(spec, ACME, permitted=None)
        grow = next(tool for tool in offered.tools if tool.name == "local__grow")
        assert "local__grown" not in {tool.name for tool in offered.tools}
        await tools.call(spec, grow, {}, _context(), permitted=None)
        # Over HTTP the announcement travels on its own stream, beside the call's
        # answer: wait (bounded) for it to have been taken into account.
        async with asyncio.timeout(10):
            while "local__grown" not in {
                t.name for t in (await tools.resolve(spec, ACME, permitted=None)).tools
            }:
                await asyncio.sleep(0.02)
