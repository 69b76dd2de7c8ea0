"""The A2A SDK's own client against examples/a2a_server.py, served on loopback."""

import asyncio
import importlib.util
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from a2a.client import Client
from a2a.client import ClientConfig
from a2a.client import create_client
from a2a.types import CancelTaskRequest
from a2a.types import GetTaskRequest
from a2a.types import Message
from a2a.types import Part
from a2a.types import Role
from a2a.types import SendMessageConfiguration
from a2a.types import SendMessageRequest
from a2a.types import StreamResponse
from a2a.types import Task
from a2a.types import TaskPushNotificationConfig
from a2a.types import TaskState
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from psych_a2a.inbound import RUN_ID_KEY
from psych_runtime import EgressPolicy
from psych_runtime import InMemoryStore
from psych_runtime import RunId
from psych_runtime import Scope
from psych_runtime.testing import FakeModel

from ..conftest import LOOPBACK
from ..peer import loopback_socket
from ..peer import serving

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "a2a_server.py"
DEMO = Scope(tenant="demo")


def _example() -> ModuleType:
    name = "psych_example_a2a_server"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, EXAMPLE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@asynccontextmanager
async def example_app(
    model: FakeModel, *, egress: EgressPolicy | None = LOOPBACK
) -> AsyncIterator[tuple[str, InMemoryStore]]:
    """The example app with ``model``, on a free loopback port; yields its URL and store."""
    store = InMemoryStore()
    sock = loopback_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    app = _example().build_app(
        model, base_url=base, store=store, scope=DEMO, egress=egress, poll_interval=0.05
    )
    async with serving(app, sock):
        yield base, store


@asynccontextmanager
async def sdk_client(base: str, *, streaming: bool, binding: str) -> AsyncIterator[Client]:
    async with httpx.AsyncClient(timeout=30) as http:
        config = ClientConfig(
            streaming=streaming, httpx_client=http, supported_protocol_bindings=[binding]
        )
        client = await create_client(base, client_config=config)
        try:
            yield client
        finally:
            await client.close()


def _message(text: str, *, task: Task | None = None, context_id: str = "") -> SendMessageRequest:
    message = Message(message_id=f"m-{text}", role=Role.ROLE_USER, parts=[Part(text=text)])
    if task is not None:
        message.task_id, message.context_id = task.id, task.context_id
    elif context_id:
        message.context_id = context_id
    return SendMessageRequest(message=message)


async def _send(client: Client, request: SendMessageRequest) -> tuple[Task, list[int]]:
    """Send, fold the events into the task; returns it and every state seen, in order."""
    task = Task()
    states: list[int] = []
    async with asyncio.timeout(20):
        event: StreamResponse
        async for event in client.send_message(request):
            kind = event.WhichOneof("payload")
            if kind == "task":
                task.CopyFrom(event.task)
                states.append(task.status.state)
            elif kind == "status_update":
                update = event.status_update
                task.id, task.context_id = update.task_id, update.context_id
                task.status.CopyFrom(update.status)
                states.append(task.status.state)
            elif kind == "artifact_update":
                task.artifacts.append(event.artifact_update.artifact)
    return task, states


def _text(task: Task) -> str:
    return "\n".join(p.text for a in task.artifacts for p in a.parts)


def _asks(question: str) -> dict[str, Any]:
    return {"questions": [{"question": question, "header": "Order"}]}


async def _run_of(store: InMemoryStore, client: Client, task: Task) -> RunId:
    stored = await client.get_task(GetTaskRequest(id=task.id))
    return RunId(stored.metadata[RUN_ID_KEY])


async def test_jsonrpc_send_runs_the_agent_and_returns_its_answer() -> None:
    model = FakeModel().turn(text="Order A-1 ships tomorrow.")
    async with (
        example_app(model) as (base, store),
        sdk_client(base, streaming=False, binding="JSONRPC") as client,
    ):
        async with httpx.AsyncClient() as http:
            card = (await http.get(base + "/.well-known/agent-card.json")).json()
        assert card["name"] == "helpdesk"
        assert card["capabilities"] == {"streaming": True, "pushNotifications": True}
        assert [i["protocolBinding"] for i in card["supportedInterfaces"]] == [
            "JSONRPC",
            "HTTP+JSON",
        ]
        task, _ = await _send(client, _message("When does A-1 ship?"))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert _text(task) == "Order A-1 ships tomorrow."
        run_id = await _run_of(store, client, task)
        log = await store.read(run_id)
        assert log[-1].type == "run_settled" and log[-1].state == "completed"
    assert model.last_request.messages[-1].content == "When does A-1 ship?"


async def test_rest_streaming_relays_the_runs_progress() -> None:
    model = FakeModel().turn(text="Streaming works.")
    async with (
        example_app(model) as (base, _),
        sdk_client(base, streaming=True, binding="HTTP+JSON") as client,
    ):
        task, states = await _send(client, _message("Stream please"))
        assert states[0] == TaskState.TASK_STATE_SUBMITTED
        assert TaskState.TASK_STATE_WORKING in states
        assert states[-1] == TaskState.TASK_STATE_COMPLETED
        assert _text(task) == "Streaming works."


@pytest.mark.parametrize(("streaming", "binding"), [(True, "JSONRPC"), (False, "HTTP+JSON")])
async def test_a_question_is_input_required_and_the_answer_resumes_the_run(
    streaming: bool, binding: str
) -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[("ask_question", _asks("Which order do you mean?"))])
        .turn(text="Order A-7 ships on Monday.")
    )
    async with (
        example_app(model) as (base, store),
        sdk_client(base, streaming=streaming, binding=binding) as client,
    ):
        asked, _ = await _send(client, _message("When does my order ship?"))
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        question = asked.status.message.parts[0].text
        assert question == "Order: Which order do you mean?"
        run_id = await _run_of(store, client, asked)
        done, _ = await _send(client, _message("A-7", task=asked))
        assert done.id == asked.id
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        assert _text(done) == "Order A-7 ships on Monday."
        assert await _run_of(store, client, done) == run_id  # the same Run went on
    answered = [m for m in model.last_request.messages if m.role == "tool"]
    assert "A-7" in str(answered[-1].content)


async def test_cancel_interrupts_the_run() -> None:
    model = FakeModel().turn(tool_calls=[("ask_question", _asks("Which order?"))])
    async with (
        example_app(model) as (base, store),
        sdk_client(base, streaming=False, binding="JSONRPC") as client,
    ):
        asked, _ = await _send(client, _message("Cancel me later"))
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        run_id = await _run_of(store, client, asked)
        canceled = await client.cancel_task(CancelTaskRequest(id=asked.id))
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
        log = await store.read(run_id)
        assert log[-1].type == "run_settled" and log[-1].state == "aborted"
        assert any(r.type == "abort_requested" for r in log)


async def test_cancel_stops_a_task_while_the_model_is_still_answering() -> None:
    # Sixty words, half a second apiece: the answer would take thirty seconds.
    model = FakeModel().turn(text=["word "] * 60, chunk_delay_seconds=0.5)
    async with (
        example_app(model) as (base, store),
        sdk_client(base, streaming=True, binding="JSONRPC") as client,
    ):
        seen: list[Task] = []

        async def follow() -> None:
            async for event in client.send_message(_message("Talk for a long while")):
                if event.WhichOneof("payload") == "task":
                    seen.append(event.task)

        following = asyncio.create_task(follow())
        try:
            async with asyncio.timeout(10):
                while not seen:
                    await asyncio.sleep(0.02)
                run_id = await _run_of(store, client, seen[0])
                while not any(r.type == "model_call_started" for r in await store.read(run_id)):
                    await asyncio.sleep(0.02)
                canceled = await client.cancel_task(CancelTaskRequest(id=seen[0].id))
                assert canceled.status.state == TaskState.TASK_STATE_CANCELED
                while (log := await store.read(run_id))[-1].type != "run_settled":
                    await asyncio.sleep(0.02)
        finally:
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)
    assert log[-1].state == "aborted"
    closed = [r for r in log if r.type == "model_call_failed"]
    assert [r.failure.kind for r in closed] == ["interrupted"]
    assert not any(r.type == "model_call_completed" for r in log)


async def test_a_new_task_in_the_same_context_continues_the_conversation() -> None:
    model = FakeModel().turn(text="First answer.").turn(text="Second answer.")
    async with (
        example_app(model) as (base, store),
        sdk_client(base, streaming=False, binding="JSONRPC") as client,
    ):
        first, _ = await _send(client, _message("First question"))
        second, _ = await _send(client, _message("Second question", context_id=first.context_id))
        assert second.id != first.id and second.context_id == first.context_id
        first_run = await _run_of(store, client, first)
        header = await store.get_run(await _run_of(store, client, second))
        assert header is not None and header.continues_run_id == first_run
        other, _ = await _send(client, _message("Unrelated"))
        assert other.context_id != first.context_id
    contents = [str(m.content) for m in model.requests[1].messages]
    assert any("First question" in c for c in contents)  # the thread was carried over


@asynccontextmanager
async def push_receiver() -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    received: list[dict[str, Any]] = []

    async def notified(request: Request) -> Response:
        received.append(
            {"token": request.headers.get("x-a2a-notification-token"), "body": await request.json()}
        )
        return Response(status_code=200)

    sock = loopback_socket()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/notify"
    async with serving(Starlette(routes=[Route("/notify", notified, methods=["POST"])]), sock):
        yield url, received


def _with_push(text: str, url: str) -> SendMessageRequest:
    request = _message(text)
    request.configuration.CopyFrom(
        SendMessageConfiguration(
            task_push_notification_config=TaskPushNotificationConfig(url=url, token="secret-1")
        )
    )
    return request


async def test_push_notifications_are_delivered_where_the_policy_allows() -> None:
    model = FakeModel().turn(text="Pushed.")
    async with (
        push_receiver() as (url, received),
        example_app(model, egress=LOOPBACK) as (base, _),
        sdk_client(base, streaming=False, binding="JSONRPC") as client,
    ):
        task, _ = await _send(client, _with_push("Push me", url))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        async with asyncio.timeout(10):
            while not any("COMPLETED" in str(n["body"]) for n in received):
                await asyncio.sleep(0.02)
    assert all(n["token"] == "secret-1" for n in received)
    assert task.id in str(received[-1]["body"])


async def test_push_notifications_to_a_refused_url_are_rejected() -> None:
    model = FakeModel().turn(text="Not pushed.")
    refusing = EgressPolicy()  # the default: no loopback or private addresses
    async with (
        push_receiver() as (url, received),
        example_app(model, egress=refusing) as (base, _),
        sdk_client(base, streaming=False, binding="JSONRPC") as client,
    ):
        with pytest.raises(Exception, match="push notification URL"):
            await _send(client, _with_push("Push me", url))
    assert received == []


async def test_a_failed_run_fails_the_task_with_its_reason() -> None:
    model = FakeModel().raises_permanent(400, message="the model refused the request")
    async with (
        example_app(model) as (base, store),
        sdk_client(base, streaming=True, binding="JSONRPC") as client,
    ):
        task, states = await _send(client, _message("Break please"))
        assert states[-1] == TaskState.TASK_STATE_FAILED
        assert "the run ended failed" in task.status.message.parts[0].text
        log = await store.read(await _run_of(store, client, task))
        assert log[-1].type == "run_settled" and log[-1].state == "failed"
