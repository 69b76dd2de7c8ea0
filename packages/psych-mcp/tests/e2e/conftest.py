"""Shared helpers for end-to-end tests: Runs on real Workers against real MCP servers."""

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from starlette.types import ASGIApp

from psych_mcp import McpTools
from psych_runtime import AgentSpec
from psych_runtime import EgressPolicy
from psych_runtime import InMemoryStore
from psych_runtime import RunId
from psych_runtime import Runtime
from psych_runtime import Scope
from psych_runtime import Store
from psych_runtime import ToolRegistry
from psych_runtime import Worker
from psych_runtime import dispatch
from psych_runtime import publish
from psych_runtime.records import Record
from psych_runtime.testing import FAST_WORKER
from psych_runtime.testing import FakeModel
from psych_runtime.testing import settled_log as testing_settled_log
from psych_runtime.testing import worker_in_background

ACME = Scope(tenant="acme")
GLOBEX = Scope(tenant="globex")
LOOPBACK = EgressPolicy(allow_hosts=frozenset({"127.0.0.1"}))


async def settled_log(store: Store, run_id: RunId, timeout: float = 15.0) -> list[Record]:
    """``psych_runtime.testing.settled_log``, with the longer wait a server round trip needs."""
    return await testing_settled_log(store, run_id, timeout)


@asynccontextmanager
async def working(
    model: FakeModel, tools: McpTools, **runtime: Any
) -> AsyncIterator[tuple[InMemoryStore, Worker]]:
    """A store and a running Worker whose Runtime takes its remote tools from ``tools``."""
    store = InMemoryStore()
    worker = Worker(
        store, Runtime(store, model, ToolRegistry(), tool_sources=[tools], **runtime), **FAST_WORKER
    )
    try:
        async with worker_in_background(worker):
            yield store, worker
    finally:
        await tools.close()


async def run_once(
    spec: AgentSpec, model: FakeModel, tools: McpTools, *, scope: Scope = ACME, **runtime: Any
) -> list[Record]:
    """Publish ``spec`` (no validation context: the plugin provides the capability),
    run it to the end and return its log."""
    async with working(model, tools, **runtime) as (store, _):
        version = await publish(store, spec, scope=scope)
        run = await dispatch(store, version, "Go.", scope=scope)
        return await settled_log(store, run.run_id)


def finishes(log: list[Record]) -> list[Any]:
    return [record for record in log if record.type == "tool_call_finished"]


@asynccontextmanager
async def served(app: ASGIApp) -> AsyncIterator[int]:
    """Serve an ASGI app on a free port of 127.0.0.1 from a thread; yields the port."""
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
