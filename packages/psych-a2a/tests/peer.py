"""A small A2A agent built only from the SDK's server side, served on loopback for tests.

It answers a message according to its text: ``echo <words>`` completes at once with an
artifact; ``slow <words>`` reports working first and completes a moment later;
``ask`` waits for input (and completes with the answer on the same task); ``fail``
ends failed; ``wait <words>`` reports working and completes only once the test sets
``Seen.release``. What it was sent (and with which headers) is kept for assertions.
"""

import asyncio
import socket
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from dataclasses import field

import uvicorn
from a2a.helpers.proto_helpers import new_text_artifact
from a2a.helpers.proto_helpers import new_text_message
from a2a.server.agent_execution import AgentExecutor
from a2a.server.agent_execution import RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandlerV2
from a2a.server.routes import create_agent_card_routes
from a2a.server.routes import create_jsonrpc_routes
from a2a.server.routes import create_rest_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.server.tasks import TaskUpdater
from a2a.types import AgentCapabilities
from a2a.types import AgentCard
from a2a.types import AgentInterface
from a2a.types import AgentSkill
from a2a.types import Message
from a2a.types import Role
from a2a.types import Task
from a2a.types import TaskState
from a2a.types import TaskStatus
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.types import ASGIApp
from starlette.types import Receive
from starlette.types import Scope
from starlette.types import Send


@dataclass
class Seen:
    """What the peer was sent: each message's text, and each request's headers."""

    texts: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    completed: threading.Event = field(default_factory=threading.Event)


def _agent_says(context: RequestContext, text: str) -> Message:
    """A message from the peer, in the task and context of ``context``."""
    return new_text_message(
        text, context_id=context.context_id, task_id=context.task_id, role=Role.ROLE_AGENT
    )


class EchoExecutor(AgentExecutor):
    """Answers by the first word of the message (see the module docstring)."""

    def __init__(self, seen: Seen) -> None:
        self.seen = seen

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        self.seen.texts.append(text)
        assert context.task_id and context.context_id
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        if context.current_task is None:
            await event_queue.enqueue_event(
                Task(
                    id=context.task_id,
                    context_id=context.context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[context.message] if context.message else [],
                )
            )
        elif context.current_task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await updater.add_artifact([new_text_artifact("answer", f"you said {text}").parts[0]])
            await updater.complete()
            return
        word, _, rest = text.partition(" ")
        await updater.start_work()
        if word == "slow":
            await asyncio.sleep(0.3)
        if word == "wait":
            released = await asyncio.to_thread(self.seen.release.wait, 30)
            assert released, "the test never released the peer"
        if word == "ask":
            await updater.requires_input(_agent_says(context, "What colour?"))
            return
        if word == "fail":
            await updater.failed(_agent_says(context, "it broke"))
            return
        await updater.add_artifact(new_text_artifact("echo", rest).parts, name="echo")
        await updater.complete()
        self.seen.completed.set()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def peer_card(
    base: str,
    *,
    streaming: bool = True,
    skills: tuple[str, ...] = ("echo", "shout"),
    rest: bool = False,
    protocol: str = "1.0",
) -> AgentCard:
    """The card of the test peer reached at ``base``."""
    interfaces = [
        AgentInterface(url=base + "/rpc", protocol_binding="JSONRPC", protocol_version=protocol)
    ]
    if rest:
        interfaces.insert(
            0, AgentInterface(url=base, protocol_binding="HTTP+JSON", protocol_version="1.0")
        )
    return AgentCard(
        name="echo",
        description="Echoes what it is told.",
        version="1.0.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(id=s, name=s.title(), description=f"The {s} skill.", tags=["test"])
            for s in skills
        ],
    )


class _Recording:
    def __init__(self, app: ASGIApp, seen: Seen) -> None:
        self.app, self.seen = app, seen

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(Request(scope).headers)
            headers[":path"] = scope["path"]
            self.seen.headers.append(headers)
        await self.app(scope, receive, send)


def peer_app(base: str, seen: Seen, card: AgentCard | None = None, **options: object) -> ASGIApp:
    """The peer as an ASGI app: card route, JSON-RPC at /rpc, REST at the root."""
    card = card or peer_card(base, **options)  # type: ignore[arg-type]
    handler = DefaultRequestHandlerV2(EchoExecutor(seen), InMemoryTaskStore(), card)
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/rpc", enable_v0_3_compat=True),
        *create_rest_routes(handler),
    ]
    return _Recording(Starlette(routes=routes), seen)


def loopback_socket() -> socket.socket:
    """A listening-ready socket on a free port of 127.0.0.1 (bound, not yet listening)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@asynccontextmanager
async def serving(app: ASGIApp, sock: socket.socket | None = None) -> AsyncIterator[int]:
    """Serve ``app`` on ``sock`` (or a free port) of 127.0.0.1 from a thread; yields the port.

    The app's lifespan runs, so an app that starts a Worker on startup does so.
    """
    sock = sock or loopback_socket()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", ws="none"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    try:
        async with asyncio.timeout(10):
            while not server.started:
                await asyncio.sleep(0.01)
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        await asyncio.to_thread(thread.join, 10)
        sock.close()


@asynccontextmanager
async def running_peer(**options: object) -> AsyncIterator[tuple[str, Seen]]:
    """The test peer on loopback; yields its base URL and what it saw."""
    sock, seen = loopback_socket(), Seen()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    async with serving(peer_app(base, seen, **options), sock):
        yield base, seen
