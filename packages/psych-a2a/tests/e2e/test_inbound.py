"""The inbound mapping mounted by hand: reconnection, signed cards, and both directions."""

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import uvicorn
from a2a.client import ClientConfig
from a2a.client import create_client
from a2a.server.agent_execution import RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore
from a2a.server.tasks import TaskManager
from a2a.types import Message
from a2a.types import Part
from a2a.types import Role
from a2a.types import SendMessageRequest
from a2a.types import SubscribeToTaskRequest
from a2a.types import Task
from a2a.types import TaskState
from starlette.applications import Starlette

from psych_a2a import A2AMount
from psych_a2a import A2ATools
from psych_a2a import CardVerifier
from psych_a2a import RunExecutor
from psych_runtime import AgentSpec
from psych_runtime import ApprovalRules
from psych_runtime import InMemoryStore
from psych_runtime import RunId
from psych_runtime import Runtime
from psych_runtime import Scope
from psych_runtime import ToolRegistry
from psych_runtime import Worker
from psych_runtime import publish
from psych_runtime import read_log
from psych_runtime import resume
from psych_runtime.adapters import ToolSourceUnavailable
from psych_runtime.spec import A2APeer
from psych_runtime.spec import SuspensionPolicy
from psych_runtime.testing import FakeModel

from ..conftest import LOOPBACK
from ..keys import pem_pair
from ..peer import loopback_socket
from ..peer import serving

ACME = Scope(tenant="acme")


@asynccontextmanager
async def mounted(
    spec: AgentSpec, model: FakeModel, registry: ToolRegistry | None = None, **mount: Any
) -> AsyncIterator[tuple[str, InMemoryStore, A2AMount]]:
    """``spec`` served over A2A by an ``A2AMount`` in a Starlette app, with a Worker."""
    store = InMemoryStore()
    sock = loopback_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    holder: dict[str, A2AMount] = {}

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        version = await publish(store, spec, scope=ACME)
        a2a = A2AMount(store, version, base_url=base, egress=LOOPBACK, **mount)
        holder["mount"] = a2a
        app.router.routes.extend(a2a.routes)
        runtime = Runtime(store, model, registry or ToolRegistry())
        worker = Worker(store, runtime, poll_interval=0.05)
        task = asyncio.create_task(worker.run())
        try:
            yield
        finally:
            await a2a.aclose()
            worker.request_stop()
            await asyncio.gather(task, return_exceptions=True)

    async with serving(Starlette(lifespan=lifespan), sock):
        yield base, store, holder["mount"]


@asynccontextmanager
async def in_loop(
    spec: AgentSpec, model: FakeModel, registry: ToolRegistry, **runtime: Any
) -> AsyncIterator[tuple[str, InMemoryStore]]:
    """Like ``mounted``, but served on the test's own event loop, so the test may write
    to the store (resume a Run) while the server reads it."""
    store = InMemoryStore()
    sock = loopback_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    version = await publish(store, spec, scope=ACME)
    mount = A2AMount(store, version, base_url=base, scope=ACME, egress=LOOPBACK)
    server = uvicorn.Server(
        uvicorn.Config(Starlette(routes=mount.routes), log_level="warning", ws="none")
    )
    worker = Worker(store, Runtime(store, model, registry, **runtime), poll_interval=0.05)
    tasks = [
        asyncio.create_task(server.serve(sockets=[sock])),
        asyncio.create_task(worker.run()),
    ]
    try:
        async with asyncio.timeout(10):
            while not server.started:
                await asyncio.sleep(0.01)
        yield base, store
    finally:
        await mount.aclose()
        server.should_exit = True
        worker.request_stop()
        await asyncio.gather(*tasks, return_exceptions=True)
        sock.close()


def _request(text: str) -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(message_id=f"m-{text}", role=Role.ROLE_USER, parts=[Part(text=text)])
    )


async def test_a_dropped_stream_is_picked_up_again_by_resubscribing() -> None:
    released = threading.Event()
    registry = ToolRegistry()

    @registry.tool
    async def wait_for_release() -> str:
        """Wait until the test lets go."""
        await asyncio.to_thread(released.wait, 10)
        return "released"

    spec = AgentSpec(name="slow", model="fake-standard", tools=("wait_for_release",))
    model = FakeModel().turn(tool_calls=[("wait_for_release", {})]).turn(text="All done.")
    async with (
        mounted(spec, model, registry, scope=ACME) as (base, _, _),
        httpx.AsyncClient(timeout=30) as http,
    ):
        config = ClientConfig(streaming=True, httpx_client=http)
        client = await create_client(base, client_config=config)
        task_id = ""
        async with asyncio.timeout(20):
            async for event in client.send_message(_request("Go slowly")):
                if event.HasField("task"):
                    task_id = event.task.id
                if (
                    event.HasField("status_update")
                    and event.status_update.status.state == TaskState.TASK_STATE_WORKING
                ):
                    break  # the client goes away mid-task
        assert task_id
        states = []
        text = ""
        async with asyncio.timeout(20):
            async for event in client.subscribe(SubscribeToTaskRequest(id=task_id)):
                released.set()  # reconnected: now the Run may finish
                if event.HasField("task"):
                    states.append(event.task.status.state)
                    text += "".join(p.text for a in event.task.artifacts for p in a.parts)
                elif event.HasField("status_update"):
                    states.append(event.status_update.status.state)
                elif event.HasField("artifact_update"):
                    text += "".join(p.text for p in event.artifact_update.artifact.parts)
        await client.close()
    assert states[-1] == TaskState.TASK_STATE_COMPLETED
    assert text == "All done."


async def test_our_client_calls_our_server_with_a_signed_card() -> None:
    pem, public = pem_pair()
    served = AgentSpec(name="helper", description="Helps.", model="fake-standard")
    model = FakeModel().turn(text="Helped with it.")
    async with mounted(served, model, scope=ACME, signing_key=pem, signing_kid="helper-2026") as (
        base,
        _,
        mount,
    ):
        assert len(mount.card.signatures) == 1
        caller = AgentSpec(
            name="caller", model="fake-standard", a2a_peers=(A2APeer(name="helper", url=base),)
        )
        verifier = CardVerifier({"helper-2026": public})
        async with A2ATools(egress=LOOPBACK, verifier=verifier) as tools:
            [tool] = (await tools.resolve(caller, ACME, permitted=None)).tools
            assert tool.name == "helper__helper"
            from psych_runtime import ToolContext

            context = ToolContext.for_call(
                run_id="run_x", call_id="c1", scope=ACME, attempt_id="a1"
            )
            result: Any = await tools.call(
                caller, tool, {"message": "Please help"}, context, permitted=None
            )
        assert result["state"] == "completed"
        assert result["text"] == "Helped with it."
        _, stranger = pem_pair()
        async with A2ATools(egress=LOOPBACK, verifier=CardVerifier({"helper-2026": stranger})) as t:
            with pytest.raises(ToolSourceUnavailable):
                await t.resolve(caller, ACME, permitted=None)


async def test_the_scope_is_chosen_per_request() -> None:
    def by_header(context: ServerCallContext) -> Scope:
        return Scope(tenant=context.state["headers"]["x-tenant"])

    spec = AgentSpec(name="helper", model="fake-standard")
    model = FakeModel().turn(text="Hello acme.")
    async with (
        mounted(spec, model, scope=Scope(tenant="nobody"), scope_for=by_header) as (base, store, _),
        httpx.AsyncClient(timeout=30, headers={"x-tenant": "acme"}) as http,
    ):
        client = await create_client(
            base, client_config=ClientConfig(streaming=False, httpx_client=http)
        )
        events = [event async for event in client.send_message(_request("Hi"))]
        await client.close()
        task = events[-1].task
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        run_id = task.metadata["psych_run_id"]
        header = await store.get_run(run_id)
        assert header is not None and header.scope.tenant == "acme"


async def test_a_run_waiting_for_an_approval_keeps_the_task_working_until_decided() -> None:
    registry = ToolRegistry()

    @registry.tool(annotations=["destructive"])
    async def refund(order_id: str) -> str:
        """Refund an order."""
        return f"refunded {order_id}"

    spec = AgentSpec(name="refunds", model="fake-standard", tools=("refund",))
    model = (
        FakeModel().turn(tool_calls=[("refund", {"order_id": "A-1"})]).turn(text="Refunded A-1.")
    )
    rules = ApprovalRules(selectors=("@destructive",))
    async with (
        in_loop(spec, model, registry, approvals=rules) as (base, store),
        httpx.AsyncClient(timeout=30) as http,
    ):
        client = await create_client(
            base, client_config=ClientConfig(streaming=True, httpx_client=http)
        )
        states: list[int] = []
        said: list[str] = []
        run_id = ""
        decided = False
        async with asyncio.timeout(20):
            async for event in client.send_message(_request("Refund A-1")):
                if event.HasField("task"):
                    run_id = event.task.metadata["psych_run_id"]
                    continue
                status = event.status_update.status
                states.append(status.state)
                said.extend(part.text for part in status.message.parts)
                if "waiting (approval)" in " ".join(said) and not decided:
                    decided = True
                    await resume(store, run_id, approved=True, by="ops", scope=ACME)
        await client.close()
    assert "The run is waiting (approval)." in said
    assert TaskState.TASK_STATE_INPUT_REQUIRED not in states  # not the caller's to answer
    assert states[-1] == TaskState.TASK_STATE_COMPLETED


class Collected:
    """An event queue that keeps what the executor publishes."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    async def enqueue_event(self, event: Any) -> None:
        self.events.append(event)


def _context(text: str, task: Any = None) -> RequestContext:
    message = Message(message_id=f"m-{text}", role=Role.ROLE_USER, parts=[Part(text=text)])
    return RequestContext(
        ServerCallContext(),
        SendMessageRequest(message=message),
        task_id=task.id if task is not None else "task-1",
        context_id=task.context_id if task is not None else "ctx-1",
        task=task,
    )


@asynccontextmanager
async def executing(
    spec: AgentSpec, model: FakeModel, registry: ToolRegistry | None = None
) -> AsyncIterator[tuple[InMemoryStore, RunExecutor]]:
    """A ``RunExecutor`` for ``spec`` called directly, with a Worker running its Runs."""
    store = InMemoryStore()
    version = await publish(store, spec, scope=ACME)
    worker = Worker(store, Runtime(store, model, registry or ToolRegistry()), poll_interval=0.05)
    running = asyncio.create_task(worker.run())
    try:
        yield store, RunExecutor(store, version, scope=ACME)
    finally:
        worker.request_stop()
        await asyncio.gather(running, return_exceptions=True)


async def test_a_message_for_a_task_whose_run_has_settled_is_answered_by_a_continuing_run() -> None:
    # The SDK hands the executor one message of a task at a time; one that arrived
    # while the task was working reaches it after the Run has settled.
    model = FakeModel().turn(text="One.").turn(text="Two.")
    async with executing(AgentSpec(name="a", model="fake-standard"), model) as (_, executor):
        first = Collected()
        await executor.execute(_context("First"), first)  # type: ignore[arg-type]
        task = first.events[0]
        assert first.events[-1].status.state == TaskState.TASK_STATE_COMPLETED
        second = Collected()
        async with asyncio.timeout(20):
            await executor.execute(_context("Second", task), second)  # type: ignore[arg-type]
    artifacts = [e.artifact.parts[0].text for e in second.events if hasattr(e, "artifact")]
    assert artifacts == ["Two."]
    assert second.events[-1].status.state == TaskState.TASK_STATE_COMPLETED
    assert all(e.task_id == task.id for e in second.events)
    assert "First" in str(model.last_request.messages)  # the new Run continued the first


async def _kept_by_the_sdk(tasks: InMemoryTaskStore, events: list[Any]) -> Any:
    """The task as the SDK's own task manager keeps it once ``events`` were applied."""
    first = events[0]
    task_id = first.id if isinstance(first, Task) else first.task_id
    manager = TaskManager(tasks, ServerCallContext(), task_id, None, None)
    for event in events:
        await manager.process(event)
    return await manager.get_task()


async def test_a_question_from_a_run_continuing_on_the_same_task_resumes_that_run() -> None:
    asks = {"questions": [{"question": "Which order?", "header": "Order"}]}
    model = (
        FakeModel()
        .turn(text="One.")
        .turn(tool_calls=[("ask_question", asks)])
        .turn(text="A-7 ships on Monday.")
    )
    asking = AgentSpec(
        name="a", model="fake-standard", suspension=SuspensionPolicy(may_ask_questions=True)
    )
    async with executing(asking, model) as (store, executor):
        first = Collected()
        await executor.execute(_context("First"), first)  # type: ignore[arg-type]
        tasks = InMemoryTaskStore()
        task = await _kept_by_the_sdk(tasks, first.events)
        first_run = task.metadata["psych_run_id"]
        second = Collected()
        async with asyncio.timeout(20):
            await executor.execute(_context("When?", task), second)  # type: ignore[arg-type]
        assert second.events[-1].status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        task = await _kept_by_the_sdk(tasks, second.events)
        continuing = task.metadata["psych_run_id"]
        assert continuing != first_run
        third = Collected()
        async with asyncio.timeout(20):
            await executor.execute(_context("The blue one", task), third)  # type: ignore[arg-type]
    assert third.events[-1].status.state == TaskState.TASK_STATE_COMPLETED
    artifacts = [e.artifact.parts[0].text for e in third.events if hasattr(e, "artifact")]
    assert artifacts == ["A-7 ships on Monday."]
    # The answer resumed the Run that asked; no third Run was started.
    runs = await store.recent_runs(tenant="acme", limit=10)
    assert sorted(run.run_id for run in runs) == sorted([first_run, continuing])
    log = await read_log(store, RunId(continuing), scope=ACME)
    assert any(record.type == "resumed" for record in log)


async def test_a_message_for_a_run_still_going_joins_its_next_turn() -> None:
    gate = asyncio.Event()
    registry = ToolRegistry()

    @registry.tool
    async def hold() -> str:
        """Hold until the test lets go."""
        await gate.wait()
        return "held"

    model = FakeModel().turn(tool_calls=[("hold", {})]).turn(text="Both seen.")
    spec = AgentSpec(name="a", model="fake-standard", tools=("hold",))
    async with executing(spec, model, registry) as (store, executor):
        first = Collected()
        async with asyncio.timeout(20):
            starting = asyncio.create_task(executor.execute(_context("Start"), first))  # type: ignore[arg-type]
            while not first.events:
                await asyncio.sleep(0.01)
            task = first.events[0]
            run_id = task.metadata["psych_run_id"]
            while not any(r.type == "tool_call_started" for r in await store.read(run_id)):
                await asyncio.sleep(0.01)
            second = Collected()
            joining = asyncio.create_task(
                executor.execute(_context("Also this", task), second)  # type: ignore[arg-type]
            )
            while not any(r.type == "queue_enqueued" for r in await store.read(run_id)):
                await asyncio.sleep(0.01)
            gate.set()
            await asyncio.gather(starting, joining)
    assert second.events[-1].status.state == TaskState.TASK_STATE_COMPLETED
    assert "Also this" in str(model.last_request.messages)
    assert len(await store.read(run_id)) > 0 and len(model.requests) == 2  # one Run, two turns


async def test_a_streamed_task_text_arrives_in_pieces_as_the_run_writes_it() -> None:
    first_piece_seen = threading.Event()
    registry = ToolRegistry()

    @registry.tool
    async def look_up(order: str) -> str:
        """Look an order up; waits until the client has the text written so far."""
        assert await asyncio.to_thread(first_piece_seen.wait, 20), "no piece reached the client"
        return f"{order} is in Oslo"

    spec = AgentSpec(name="helper", model="fake-standard", tools=("look_up",))
    model = (
        FakeModel()
        .turn(text="Looking A-1 up.", tool_calls=[("look_up", {"order": "A-1"})])
        .turn(text="A-1 is in Oslo.")
    )
    chunks: list[tuple[str, str, bool]] = []
    settled_before_first = None
    async with (
        mounted(spec, model, registry, scope=ACME) as (base, store, _),
        httpx.AsyncClient(timeout=30) as http,
    ):
        client = await create_client(
            base, client_config=ClientConfig(streaming=True, httpx_client=http)
        )
        run_id = ""
        async with asyncio.timeout(30):
            async for event in client.send_message(_request("Where is A-1?")):
                if event.HasField("task"):
                    run_id = event.task.metadata["psych_run_id"]
                if event.HasField("artifact_update"):
                    update = event.artifact_update
                    text = "".join(part.text for part in update.artifact.parts)
                    chunks.append((update.artifact.artifact_id, text, update.append))
                    if settled_before_first is None:
                        log = await read_log(store, RunId(run_id), scope=ACME)
                        settled_before_first = log[-1].type == "run_settled"
                    first_piece_seen.set()  # only now may the Run go on
        await client.close()
        from psych_runtime import stream_text

        pieces = [piece async for piece in stream_text(store, RunId(run_id), scope=ACME)]
    assert settled_before_first is False  # the first piece came while the Run was going
    assert [text for _, text, _ in chunks] == pieces == ["Looking A-1 up.", "A-1 is in Oslo."]
    assert [append for _, _, append in chunks] == [False, True]
    assert len({artifact for artifact, _, _ in chunks}) == 1  # one artifact, appended to
