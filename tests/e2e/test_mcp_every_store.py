"""MCP servers' tools in Runs on every store: the stub, an SDK-built server, real ones.

The real ones are published servers from both registries: the reference "everything"
server from npm (``@modelcontextprotocol/server-everything``), over Streamable HTTP and
over stdio, and the reference time server from PyPI (``mcp-server-time``), over stdio.
``tools/mcp_servers.py`` (which ``hatch run ci`` runs) installs them under
``~/.cache/psych-npm`` and ``~/.cache/psych-pypi``. Without them the cases skip, unless
``PSYCH_REQUIRE_MCP_SERVERS=1`` (CI sets it) turns the absence into a failure.
"""

import asyncio
import json
import os
import shutil
import socket
import subprocess
import threading
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp

import psych_runtime
from psych_mcp import McpStubServer
from psych_mcp import McpTools
from psych_runtime import RunId
from psych_runtime import Store
from psych_runtime.records import Record
from psych_runtime.spec import McpEnv
from psych_runtime.spec import McpServer
from psych_runtime.testing import FakeModel

from .conftest import EVERY

ACME = psych_runtime.Scope(tenant="acme")
UrlFor = Callable[[str], Awaitable[str]]
LOOPBACK = psych_runtime.EgressPolicy(allow_hosts=frozenset({"127.0.0.1"}))
NPM_PREFIX = Path(os.environ.get("PSYCH_NPM_PREFIX", Path.home() / ".cache" / "psych-npm"))
EVERYTHING = NPM_PREFIX / "node_modules" / "@modelcontextprotocol" / "server-everything"
PYPI_PREFIX = Path(os.environ.get("PSYCH_PYPI_PREFIX", Path.home() / ".cache" / "psych-pypi"))
TIME_SERVER = PYPI_PREFIX / "mcp-server-time" / "bin" / "mcp-server-time"


def _required() -> bool:
    return "1" in (
        os.environ.get("PSYCH_REQUIRE_MCP_SERVERS"),
        os.environ.get("PSYCH_REQUIRE_MCP_EVERYTHING"),
    )


def _missing(what: str) -> None:
    if _required():
        pytest.fail(f"{what} is not installed (run python tools/mcp_servers.py)")
    pytest.skip(f"{what} is not installed")


async def _run(url: str, spec: psych_runtime.AgentSpec, model: FakeModel) -> list[Record]:
    store = await psych_runtime.open_store(url)
    tools = McpTools(egress=LOOPBACK, catalogue_ttl_seconds=0)
    runtime = psych_runtime.Runtime(
        store, model, psych_runtime.ToolRegistry(), tool_sources=[tools]
    )
    worker = psych_runtime.Worker(
        store, runtime, lease_seconds=3.0, heartbeat_seconds=0.5, poll_interval=0.05
    )
    task = asyncio.create_task(worker.run())
    try:
        version = await psych_runtime.publish(store, spec, scope=ACME)  # psych-mcp runs it
        run = await psych_runtime.dispatch(store, version, "Go.", scope=ACME)
        return await _settled(store, run.run_id)
    finally:
        worker.request_stop()
        await asyncio.gather(task, return_exceptions=True)
        await tools.close()
        await store.close()


async def _settled(store: Store, run_id: RunId) -> list[Record]:
    async with asyncio.timeout(30):
        while True:
            log = await store.read(run_id)
            if log and log[-1].type == "run_settled":
                return log
            await asyncio.sleep(0.02)


def _spec(*servers: McpServer) -> psych_runtime.AgentSpec:
    return psych_runtime.AgentSpec(name="ops", model="fake-standard", mcp_servers=servers)


def _results(log: list[Record]) -> list[Any]:
    return [r.result for r in log if r.type == "tool_call_finished"]


@asynccontextmanager
async def _served(app: ASGIApp) -> AsyncIterator[int]:
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", ws="none")
    )
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    try:
        async with asyncio.timeout(10):
            while not server.started:
                await asyncio.sleep(0.01)
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        await asyncio.to_thread(thread.join, 10)


@pytest.mark.parametrize("kind", EVERY)
async def test_tools_of_the_stub_and_of_an_sdk_server_in_one_run(
    kind: str, store_url_for: UrlFor
) -> None:
    weather = MCPServer("weather", log_level="WARNING")

    @weather.tool(description="Today's forecast for a city.")
    def forecast(city: str) -> str:
        return f"Sunny in {city}"

    async with McpStubServer() as crm, _served(weather.streamable_http_app()) as port:
        crm.tool("lookup", {"order": "A1", "state": "shipped"}, annotations={"readOnlyHint": True})
        crm.tool("forecast", "not this one")  # same name on another server
        spec = _spec(
            McpServer(name="crm", url=crm.url),
            McpServer(name="weather", url=f"http://127.0.0.1:{port}/mcp"),
        )
        model = (
            FakeModel()
            .turn(tool_calls=[("crm__lookup", {"order": "A1"})])
            .turn(tool_calls=[("weather__forecast", {"city": "Oslo"})])
            .turn(text="A1 shipped; sunny in Oslo.")
        )
        log = await _run(await store_url_for(kind), spec, model)
    assert log[-1].state is psych_runtime.TerminalState.COMPLETED
    offered = {t.name for t in model.requests[0].tools}
    assert {"crm__lookup", "crm__forecast", "weather__forecast"} <= offered
    assert [(c.tool, c.arguments) for c in crm.calls] == [("lookup", {"order": "A1"})]
    lookup, weather_result = _results(log)
    assert lookup["structured"] == {"order": "A1", "state": "shipped"} or "A1" in str(lookup)
    assert weather_result["text"] == "Sunny in Oslo"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def everything_url() -> Iterator[str]:
    """The reference "everything" MCP server from npm, over Streamable HTTP."""
    node = shutil.which("node")
    entry = EVERYTHING / "dist" / "index.js"
    if node is None or not entry.exists():
        _missing(f"npm @modelcontextprotocol/server-everything (under {NPM_PREFIX})")
    port = _free_port()
    process = subprocess.Popen(
        [node, str(entry), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    drain = threading.Thread(target=process.stderr.read, daemon=True)
    try:
        for line in process.stderr:  # it says when it listens
            if "listening" in line.lower():
                break
        else:
            pytest.fail("the everything server exited before listening")
        drain.start()  # keep reading, so a chatty server never blocks on a full pipe
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)
        if drain.is_alive():
            drain.join(10)
        process.stderr.close()


@pytest.mark.parametrize("kind", EVERY)
async def test_a_real_published_mcp_server(
    kind: str, store_url_for: UrlFor, everything_url: str
) -> None:
    spec = _spec(McpServer(name="everything", url=everything_url, allow=("echo", "get-sum")))
    model = (
        FakeModel()
        .turn(tool_calls=[("everything__echo", {"message": "hello from psych"})])
        .turn(tool_calls=[("everything__get-sum", {"a": 2, "b": 40})])
        .turn(tool_calls=[("everything__get-tiny-image", {})])  # not allowed by the Spec
        .turn(text="done")
    )
    log = await _run(await store_url_for(kind), spec, model)
    assert log[-1].state is psych_runtime.TerminalState.COMPLETED
    offered = sorted(t.name for t in model.requests[0].tools)
    assert offered == ["everything__echo", "everything__get-sum"]
    finishes = [r for r in log if r.type == "tool_call_finished"]
    assert "hello from psych" in finishes[0].result["text"]
    assert "42" in finishes[1].result["text"]
    assert finishes[2].failure is not None and finishes[2].failure.kind == "unknown_tool"


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_a_server_that_comes_up_mid_run_is_used_on_the_next_turn(
    kind: str, store_url_for: UrlFor
) -> None:
    late = McpStubServer()
    await late.start()
    late_url = late.url
    await late.stop()  # down when the Run starts; same port when it comes back
    late.tool("ping", "pong", annotations={"readOnlyHint": True})
    async with McpStubServer() as crm:
        crm.tool("lookup", "found", annotations={"readOnlyHint": True}, delay=1.0)
        spec = _spec(
            McpServer(name="crm", url=crm.url),
            McpServer(name="late", url=late_url, optional=True),
        )
        model = (
            FakeModel()
            .turn(tool_calls=[("crm__lookup", {})])
            .turn(tool_calls=[("late__ping", {})])
            .turn(text="done")
        )

        async def bring_it_up() -> None:
            async with asyncio.timeout(20):
                while not crm.calls:  # the first turn's call is under way
                    await asyncio.sleep(0.01)
            await late.start()

        starter = asyncio.create_task(bring_it_up())
        try:
            log = await _run(await store_url_for(kind), spec, model)
        finally:
            await starter
            await late.stop()
    assert log[-1].state is psych_runtime.TerminalState.COMPLETED
    first, second = (
        {t.name for t in model.requests[0].tools},
        {t.name for t in model.requests[1].tools},
    )
    assert "late__ping" not in first and "late__ping" in second
    assert "late" in str(model.requests[0].messages[0].content)  # told it is missing
    assert [c.tool for c in late.calls] == ["ping"]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_a_deferred_catalogue_call_is_judged_as_its_target(
    kind: str, store_url_for: UrlFor
) -> None:
    async with McpStubServer() as crm:
        for n in range(40):
            crm.tool(
                f"report_{n}",
                f"report {n}",
                description="A monthly report. " * 10,
                annotations={"readOnlyHint": True},
            )
        crm.tool("wipe", "wiped", description="Delete every record.")  # MCP default: destructive
        spec = _spec(McpServer(name="crm", url=crm.url))
        model = (
            FakeModel()
            .turn(tool_calls=[("call_tool", {"name": "crm__report_7"})])
            .turn(tool_calls=[("call_tool", {"name": "crm__wipe"})])
            .turn(text="Wiped.")
        )
        store = await psych_runtime.open_store(await store_url_for(kind))
        tools = McpTools(egress=LOOPBACK)
        runtime = psych_runtime.Runtime(
            store,
            model,
            psych_runtime.ToolRegistry(),
            tool_sources=[tools],
            catalogue_budget_chars=2_000,
            approvals=psych_runtime.ApprovalRules(selectors=("@destructive",)),
        )
        worker = psych_runtime.Worker(
            store, runtime, lease_seconds=3.0, heartbeat_seconds=0.5, poll_interval=0.05
        )
        task = asyncio.create_task(worker.run())
        try:
            version = await psych_runtime.publish(store, spec, scope=ACME)
            run = await psych_runtime.dispatch(store, version, "Go.", scope=ACME)
            async with asyncio.timeout(30):
                while (
                    await psych_runtime.status(store, run.run_id, scope=ACME)
                ).pending_approval is None:
                    await asyncio.sleep(0.02)
            assert [c.tool for c in crm.calls] == ["report_7"]  # the wipe waits
            await psych_runtime.resume(store, run.run_id, approved=True, by="ops", scope=ACME)
            log = await _settled(store, run.run_id)
        finally:
            worker.request_stop()
            await asyncio.gather(task, return_exceptions=True)
            await tools.close()
            await store.close()
    offered = {t.name for t in model.requests[0].tools}
    assert {"list_tools", "get_tool_info", "call_tool"} <= offered
    assert not any(name.startswith("crm__") for name in offered)
    assert [c.tool for c in crm.calls] == ["report_7", "wipe"]
    assert log[-1].state is psych_runtime.TerminalState.COMPLETED


async def test_a_large_mcp_result_is_elided_like_any_other(store_url_for: UrlFor) -> None:
    async with McpStubServer() as crm:
        crm.tool("export", "x" * 50_000, annotations={"readOnlyHint": True})
        spec = _spec(McpServer(name="crm", url=crm.url)).model_copy(
            update={"limits": psych_runtime.Limits(large_result_bytes=2_000)}
        )
        model = FakeModel().turn(tool_calls=[("crm__export", {})]).turn(text="Exported.")
        log = await _run(await store_url_for("memory"), spec, model)
    [finished] = [r for r in log if r.type == "tool_call_finished"]
    assert finished.result_handle is not None and finished.result_bytes > 50_000
    sent = [m.content for m in model.requests[1].messages if m.role == "tool"]
    assert len(sent[0]) < 5_000  # the model got a preview and a handle, not 50 kB
    assert "read_tool_output" in {t.name for t in model.requests[1].tools}


@pytest.fixture(scope="module")
def stdio_servers() -> tuple[McpServer, McpServer]:
    """The published servers from npm and PyPI, as stdio servers of a Spec."""
    node = shutil.which("node")
    entry = EVERYTHING / "dist" / "index.js"
    if node is None or not entry.exists():
        _missing(f"npm @modelcontextprotocol/server-everything (under {NPM_PREFIX})")
    if not TIME_SERVER.exists():
        _missing(f"PyPI mcp-server-time (under {PYPI_PREFIX})")
    everything = McpServer(
        name="everything",
        command=node,
        args=(str(entry), "stdio"),
        env=(McpEnv(name="PSYCH_STAGE", value="e2e"),),
        allow=("echo", "get-env"),
    )
    clock = McpServer(
        name="clock", command=str(TIME_SERVER), args=("--local-timezone", "UTC"), allow=("get_*",)
    )
    return everything, clock


@pytest.mark.parametrize("kind", EVERY)
async def test_published_stdio_servers_from_npm_and_pypi(
    kind: str, store_url_for: UrlFor, stdio_servers: tuple[McpServer, McpServer]
) -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[("everything__echo", {"message": "over stdio"})])
        .turn(tool_calls=[("clock__get_current_time", {"timezone": "Europe/Oslo"})])
        .turn(tool_calls=[("everything__get-env", {})])
        .turn(text="done")
    )
    log = await _run(await store_url_for(kind), _spec(*stdio_servers), model)
    assert log[-1].state is psych_runtime.TerminalState.COMPLETED
    offered = sorted(t.name for t in model.requests[0].tools)
    assert offered == ["clock__get_current_time", "everything__echo", "everything__get-env"]
    echo, clock, env = (r.result for r in log if r.type == "tool_call_finished")
    assert "over stdio" in echo["text"]
    assert clock["structured"]["timezone"] == "Europe/Oslo"
    # The npm server reports its own environment: only what the Spec gave it.
    assert json.loads(env["text"]) == {"PSYCH_STAGE": "e2e"}
