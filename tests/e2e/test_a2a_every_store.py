"""Other agents over A2A on every store: a Run calls an agent that another Run serves.

The serving side is an ``A2AMount`` over the store, in a Starlette app on loopback; the
calling side is a Run whose Spec names it as an A2A peer; the A2A SDK's own client
then takes a task through a question and its answer. One Worker runs both sides.
"""

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import uvicorn
from a2a.client import ClientConfig
from a2a.client import create_client
from a2a.types import Message
from a2a.types import Part
from a2a.types import Role
from a2a.types import SendMessageRequest
from a2a.types import TaskState
from starlette.applications import Starlette

import psych_runtime
from psych_a2a import A2AMount
from psych_a2a import A2ATools
from psych_runtime import RunId
from psych_runtime import Store
from psych_runtime.records import Record
from psych_runtime.spec import A2APeer
from psych_runtime.spec import SuspensionPolicy
from psych_runtime.testing import FakeModel

from .conftest import EVERY

ACME = psych_runtime.Scope(tenant="acme")
LOOPBACK = psych_runtime.EgressPolicy(allow_hosts=frozenset({"127.0.0.1"}))
HELPER = psych_runtime.AgentSpec(
    name="helper",
    description="Answers questions about orders.",
    model="fake-standard",
    suspension=SuspensionPolicy(may_ask_questions=True),
)


@asynccontextmanager
async def _serving(store: Store) -> AsyncIterator[str]:
    """The helper over A2A from ``store``, on this event loop; yields its URL."""
    sock = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    version = await psych_runtime.publish(store, HELPER, scope=ACME)
    mount = A2AMount(store, version, base_url=url, scope=ACME, egress=LOOPBACK)
    server = uvicorn.Server(
        uvicorn.Config(Starlette(routes=mount.routes), log_level="warning", ws="none")
    )
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(10):
            while not server.started:
                await asyncio.sleep(0.01)
        yield url
    finally:
        await mount.aclose()
        server.should_exit = True
        await asyncio.gather(serving, return_exceptions=True)


async def _settled(store: Store, run_id: RunId) -> list[Record]:
    async with asyncio.timeout(30):
        while True:
            log = await store.read(run_id)
            if log and log[-1].type == "run_settled":
                return log
            await asyncio.sleep(0.02)


def _message(text: str, task_id: str = "", context_id: str = "") -> SendMessageRequest:
    message = Message(message_id=f"m-{text}", role=Role.ROLE_USER, parts=[Part(text=text)])
    message.task_id, message.context_id = task_id, context_id
    return SendMessageRequest(message=message)


async def _final(client: Any, request: SendMessageRequest) -> Any:
    last = None
    async with asyncio.timeout(30):
        async for event in client.send_message(request):
            last = event
    return last


@pytest.mark.parametrize("kind", EVERY)
async def test_a_run_calls_an_agent_served_over_a2a_and_a_question_round_trips(
    kind: str, store_url_for: Any
) -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[("helper__helper", {"message": "Where is A-1?"})])  # the caller
        .turn(text="A-1 is in Oslo.")  # the helper's Run
        .turn(text="The helper says A-1 is in Oslo.")  # the caller
        .turn(tool_calls=[("ask_question", {"questions": [{"question": "Which order?"}]})])
        .turn(text="A-7 ships Monday.")  # the helper, answered
    )
    store = await psych_runtime.open_store(await store_url_for(kind))
    tools = A2ATools(egress=LOOPBACK)
    runtime = psych_runtime.Runtime(
        store, model, psych_runtime.ToolRegistry(), tool_sources=[tools]
    )
    worker = psych_runtime.Worker(
        store, runtime, lease_seconds=3.0, heartbeat_seconds=0.5, poll_interval=0.05
    )
    working = asyncio.create_task(worker.run())
    try:
        async with _serving(store) as url:
            caller = psych_runtime.AgentSpec(
                name="caller", model="fake-standard", a2a_peers=(A2APeer(name="helper", url=url),)
            )
            version = await psych_runtime.publish(store, caller, scope=ACME)
            run = await psych_runtime.dispatch(store, version, "Ask the helper.", scope=ACME)
            log = await _settled(store, run.run_id)
            [finished] = [r for r in log if r.type == "tool_call_finished"]
            assert finished.result["text"] == "A-1 is in Oslo."
            assert log[-1].state is psych_runtime.TerminalState.COMPLETED

            async with httpx.AsyncClient(timeout=30) as http:
                config = ClientConfig(streaming=True, httpx_client=http)
                client = await create_client(url, client_config=config)
                asked = await _final(client, _message("When does my order ship?"))
                update = asked.status_update if asked.HasField("status_update") else asked.task
                assert update.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
                task_id = update.task_id if asked.HasField("status_update") else update.id
                done = await _final(client, _message("A-7", task_id, update.context_id))
                assert done.status_update.status.state == TaskState.TASK_STATE_COMPLETED
                await client.close()
    finally:
        worker.request_stop()
        await asyncio.gather(working, return_exceptions=True)
        await tools.close()
        await store.close()
    answered = [m for m in model.last_request.messages if m.role == "tool"]
    assert "A-7" in str(answered[-1].content)
