"""An agent served over A2A from a Starlette app, with a Worker running beside it.

Any A2A client can then talk to it: read its card at
``/.well-known/agent-card.json``, send messages over JSON-RPC (``/rpc``) or
HTTP+JSON (the root), stream task updates, answer the agent's questions on the same
task, and cancel. ``psych-a2a`` supplies the mapping between tasks and Runs; the app,
its server and its authentication stay yours.

Runs with no API key: the model is scripted. Pass ``OpenAICompatibleClient`` to
``build_app`` to talk to a real one. Start it with ``python examples/a2a_server.py``
(it serves http://127.0.0.1:8000 until interrupted).
"""

import asyncio
import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette

import psych_runtime
from psych_a2a import A2AMount
from psych_runtime.models import ModelClient
from psych_runtime.spec import SuspensionPolicy
from psych_runtime.testing import FakeModel

spec = psych_runtime.AgentSpec(
    name="helpdesk",
    description="Answers questions about orders, and asks when it needs a detail.",
    instructions="Help with orders. Ask the user when you need a detail you do not have.",
    model="gpt-4o-mini",
    suspension=SuspensionPolicy(may_ask_questions=True),  # offers ask_question
)


def build_app(
    model: ModelClient,
    *,
    base_url: str,
    store: psych_runtime.Store | None = None,
    scope: psych_runtime.Scope | None = None,
    egress: psych_runtime.EgressPolicy | None = None,
    poll_interval: float = 0.5,
) -> Starlette:
    """The A2A app: on startup it publishes the agent, mounts the routes, starts a Worker.

    Args:
        model: what the agent thinks with.
        base_url: where callers reach the app; the Agent Card names it.
        store: where Runs live; an in-memory store by default.
        scope: the tenant every request acts for.
        egress: where push notifications may go; no private addresses by default.
        poll_interval: how often the Worker looks for work when nothing wakes it.
    """
    runs = store if store is not None else psych_runtime.InMemoryStore()
    tenant = scope if scope is not None else psych_runtime.Scope(tenant="demo")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        version = await psych_runtime.publish(runs, spec, scope=tenant)
        mount = A2AMount(runs, version, base_url=base_url, scope=tenant, egress=egress)
        app.router.routes.extend(mount.routes)  # the card, JSON-RPC and HTTP+JSON
        runtime = psych_runtime.Runtime(runs, model, psych_runtime.ToolRegistry())
        worker = psych_runtime.Worker(runs, runtime, poll_interval=poll_interval)
        running = asyncio.create_task(worker.run())
        app.state.mount = mount
        try:
            yield
        finally:
            await mount.aclose()
            worker.request_stop()
            await asyncio.gather(running, return_exceptions=True)

    return Starlette(lifespan=lifespan)


def main() -> None:
    import uvicorn

    model = FakeModel().turn(text="Your order A-1 ships tomorrow.")  # one scripted answer
    app = build_app(model, base_url="http://127.0.0.1:8000")
    uvicorn.run(app, host="127.0.0.1", port=8000)


if __name__ == "__main__":
    main()
