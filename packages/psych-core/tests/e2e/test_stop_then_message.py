"""A message racing a stop: refused as a steer with a typed error, carried by the next Run.

The pattern the docs show: ``interrupt()``, then ``send(..., queue=NEXT_RUN)`` and a
continuation dispatched with ``continues=``. The stopped Run's log shows the abort and
then the message, in that order, and the continuation's first model request carries
the message.
"""

import asyncio

import pytest

import psych_runtime
from psych_runtime import AgentSpec
from psych_runtime import CodeTool
from psych_runtime import InMemoryStore
from psych_runtime import ModelRef
from psych_runtime import QueueKind
from psych_runtime.testing import FakeModel
from psych_runtime.testing import settled_log

from .conftest import ACME
from .conftest import running_worker
from .conftest import types


def _spec() -> AgentSpec:
    return AgentSpec(
        name="ops", model=ModelRef(model="fake-standard"), tools=(CodeTool(name="slow"),)
    )


async def test_a_steer_after_an_interrupt_is_refused_and_the_next_run_carries_the_message() -> None:
    started = asyncio.Event()

    async def slow(q: str) -> str:
        """Take a long time."""
        started.set()
        await asyncio.sleep(30)
        return q

    model = FakeModel().turn(tool_calls=[("slow", {"q": "x"})]).turn(text="Doing Y instead.")
    registry = psych_runtime.ToolRegistry()
    registry.register(slow)
    store = InMemoryStore()
    version = await psych_runtime.publish(store, _spec(), scope=ACME)
    async with running_worker(store, model, registry):
        first = await psych_runtime.dispatch(store, version, "do X", scope=ACME)
        await started.wait()
        assert await psych_runtime.interrupt(store, first.run_id, scope=ACME)
        for queue in (QueueKind.STEER, QueueKind.FOLLOW_UP, "steer"):
            with pytest.raises(psych_runtime.RunStopping) as refused:
                await psych_runtime.send(
                    store,
                    first.run_id,
                    "do Y instead",
                    queue=queue,  # type: ignore[arg-type]
                    scope=ACME,
                )
            assert "NEXT_RUN" in str(refused.value) and refused.value.run_id == first.run_id
        await psych_runtime.send(
            store, first.run_id, "do Y instead", queue=QueueKind.NEXT_RUN, scope=ACME
        )
        stopped = await settled_log(store, first.run_id)
        second = await psych_runtime.dispatch(
            store, version, "carry on", continues=first.run_id, scope=ACME
        )
        carried = await settled_log(store, second.run_id)
    kinds = types(stopped)
    assert kinds.index("abort_requested") < kinds.index("queue_enqueued")
    assert stopped[-1].state is psych_runtime.TerminalState.ABORTED
    assert carried[-1].state is psych_runtime.TerminalState.COMPLETED
    users = [m.content for m in model.requests[-1].messages if m.role == "user"]
    assert "do Y instead" in users
    assert users.index("do Y instead") < users.index("carry on")
