"""``execute.execute``: one call run to its end, its cancellation, or its failure, as data."""

import asyncio
import sys
from typing import Any

import pytest

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import TaskListUpdated
from psych_runtime.core.records import ToolCallFinished
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.spec import CodeTool
from psych_runtime.core.spec import HttpTool
from psych_runtime.runtime.agent.execute import execute
from psych_runtime.runtime.agent.remote import refresh_remote
from psych_runtime.spec import McpServer
from psych_runtime.tools.deferred import CALL_TOOL
from psych_runtime.tools.registry import ToolRegistry

from ....e2e.test_tool_sources import ServerRoom
from .conftest import Attempt
from .conftest import Orders
from .conftest import agent
from .conftest import open_attempt
from .conftest import started
from .conftest import tool_turn

C1 = ToolCallId("c1")
A1: JsonObject = {"order_id": "A1"}


async def _running(tool: str, registry: ToolRegistry, **spec: Any) -> Attempt:
    """Call ``c1`` of ``tool`` is started (and durable)."""
    log = tool_turn(started(), "c1").tool_started("c1", tool=tool, arguments=A1)
    return await open_attempt(log, spec=agent(**spec), registry=registry)


async def test_a_registered_tool_returns_its_result_as_data() -> None:
    orders = Orders()
    attempt = await _running("lookup", orders.registry, tools=("lookup",))
    executed = await execute(attempt.ctx, C1, "lookup", A1)
    assert (executed.outcome, executed.result, executed.failure) == (
        ToolOutcome.OK,
        "A1: shipped",
        None,
    )
    assert executed.duration >= 0 and orders.calls == [("lookup", "A1")]
    assert attempt.new() == []  # finishing is the caller's


async def test_a_tool_that_raises_fails_its_call_with_the_traceback() -> None:
    registry = ToolRegistry()

    def lookup(order_id: str) -> str:
        """Look an order up."""
        raise LookupError(f"no order {order_id}")

    registry.register(lookup)
    attempt = await _running("lookup", registry, tools=("lookup",))
    executed = await execute(attempt.ctx, C1, "lookup", A1)
    assert executed.outcome is ToolOutcome.ERROR and executed.failure is not None
    assert (executed.failure.kind, executed.failure.message) == ("LookupError", "no order A1")
    assert executed.failure.traceback is not None
    assert "LookupError: no order A1" in executed.failure.traceback


async def test_arguments_that_do_not_fit_the_tool_fail_the_call_as_invalid() -> None:
    orders = Orders()
    attempt = await _running("lookup", orders.registry, tools=("lookup",))
    executed = await execute(attempt.ctx, C1, "lookup", {"order": 7})
    assert executed.failure is not None
    assert executed.failure.kind == "invalid_arguments" and executed.failure.traceback is None
    assert orders.calls == []


@pytest.mark.parametrize("raised", [SystemExit(3), KeyboardInterrupt(), GeneratorExit()])
async def test_a_tool_raising_a_base_exception_fails_only_its_own_call(
    raised: BaseException,
) -> None:
    orders = Orders()

    async def bail(order_id: str) -> str:
        """Stop the process, or try to."""
        raise raised

    orders.registry.register(bail)
    attempt = await _running("bail", orders.registry, tools=("bail", "lookup"))
    executed = await execute(attempt.ctx, C1, "bail", A1)
    assert executed.outcome is ToolOutcome.ERROR and executed.failure is not None
    assert executed.failure.kind == type(raised).__name__
    # The loop and the process carry on: the next call runs as usual.
    after = await execute(attempt.ctx, ToolCallId("c2"), "lookup", A1)
    assert after.outcome is ToolOutcome.OK


class Gate:
    """A refund that waits to be let through, and says whether it was cancelled."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = False
        self.registry = ToolRegistry()

        async def refund(order_id: str) -> str:
            """Refund an order."""
            self.entered.set()
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.cancelled = True
                raise
            return f"{order_id}: refunded"

        self.registry.register(refund)


async def test_an_uninterruptible_call_runs_through_a_cancellation_and_records_its_end() -> None:
    gate = Gate()
    spec = agent(tools=(CodeTool(name="refund", interruptible=False),))
    log = tool_turn(started(), "c1").tool_started("c1", tool="refund", interruptible=False)
    attempt = await open_attempt(log, spec=spec, registry=gate.registry)
    running = asyncio.create_task(execute(attempt.ctx, C1, "refund", A1))
    async with asyncio.timeout(10):
        await gate.entered.wait()
        running.cancel()
        gate.release.set()
        with pytest.raises(asyncio.CancelledError):
            await running
    assert not gate.cancelled
    (finished,) = [r for r in await attempt.durable() if isinstance(r, ToolCallFinished)]
    assert (finished.call_id, finished.outcome, finished.result) == (
        "c1",
        ToolOutcome.OK,
        "A1: refunded",
    )


async def test_an_interruptible_call_is_abandoned_when_the_attempt_is_cancelled() -> None:
    gate = Gate()
    attempt = await _running("refund", gate.registry, tools=("refund",))
    running = asyncio.create_task(execute(attempt.ctx, C1, "refund", A1))
    async with asyncio.timeout(10):
        await gate.entered.wait()
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
    assert gate.cancelled
    assert attempt.new() == [] and await attempt.durable() == []


async def test_a_call_that_ends_as_the_attempt_is_cancelled_is_recorded_and_cancels() -> None:
    # The tool keeps running through the cancellation and returns (as a tool that
    # catches CancelledError does): the call did run, so its end is written, and the
    # Attempt is cancelled all the same rather than going on to its next call.
    entered = asyncio.Event()
    registry = ToolRegistry()

    async def stubborn(order_id: str) -> str:
        """Look an order up, whatever happens."""
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            return f"{order_id}: shipped"
        return "never"

    registry.register(stubborn)
    attempt = await _running("stubborn", registry, tools=("stubborn",))
    running = asyncio.create_task(execute(attempt.ctx, C1, "stubborn", A1))
    async with asyncio.timeout(10):
        await entered.wait()
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
    (finished,) = [r for r in await attempt.durable() if isinstance(r, ToolCallFinished)]
    assert (finished.outcome, finished.result) == (ToolOutcome.OK, "A1: shipped")


async def test_a_built_in_is_run_as_its_entry_says() -> None:
    log = tool_turn(started(), "c1").tool_started("c1", tool="update_tasks")
    attempt = await open_attempt(log, spec=agent(tasks_enabled=True))
    tasks: dict[str, Any] = {"tasks": [{"title": "Find the order"}]}
    executed = await execute(attempt.ctx, C1, "update_tasks", tasks)
    assert executed.result == {"tasks": 1}
    (updated,) = attempt.new(TaskListUpdated)
    assert [task.title for task in updated.tasks] == ["Find the order"]


async def test_an_http_tool_goes_through_the_runtimes_transport_and_none_fails_it() -> None:
    quote = HttpTool(name="quote", description="Get a quote.", url="https://x.example/q")
    log = tool_turn(started(), "c1").tool_started("c1", tool="quote")
    attempt = await open_attempt(log, spec=agent(tools=(quote,)))
    executed = await execute(attempt.ctx, C1, "quote", {})
    assert executed.failure is not None
    assert executed.failure.kind == "http_transport_required"


async def _remote(catalogue_budget: int = 20_000) -> tuple[Attempt, ServerRoom]:
    room = ServerRoom({"files": {"read": ("read-only",), "broken": ()}})
    server = McpServer(name="files", url="https://files.example/mcp")
    log = tool_turn(started(), "c1").tool_started("c1", tool="files__read")
    attempt = await open_attempt(
        log,
        spec=agent(mcp_servers=(server,)),
        sources=(room,),
        catalogue_budget=catalogue_budget,
    )
    await refresh_remote(attempt.ctx, ["files__*"])
    return attempt, room


async def test_a_remote_tool_is_called_through_its_source_with_the_runs_scope() -> None:
    attempt, room = await _remote()
    executed = await execute(attempt.ctx, C1, "files__read", {"path": "a"})
    assert executed.result == {"server": "files", "tool": "read"}
    assert room.calls == [("acme", "files", "read", {"path": "a"})]


async def test_a_remote_failure_keeps_its_kind_and_whether_it_is_worth_retrying() -> None:
    attempt, _ = await _remote()
    executed = await execute(attempt.ctx, C1, "files__broken", {})
    assert executed.failure is not None
    assert (executed.failure.kind, executed.failure.transient) == ("tool_error", True)


async def test_call_tool_runs_the_deferred_tool_it_names() -> None:
    attempt, room = await _remote(catalogue_budget=1)
    assert "files__read" in attempt.ctx.tools.deferred
    wanted: dict[str, Any] = {"name": "files__read", "arguments": {"path": "b"}}
    executed = await execute(attempt.ctx, C1, CALL_TOOL, wanted)
    assert executed.result == {"server": "files", "tool": "read"}
    assert room.calls == [("acme", "files", "read", {"path": "b"})]
    missing = await execute(attempt.ctx, C1, CALL_TOOL, {"name": "files__nope"})
    assert missing.failure is not None and missing.failure.kind == "invalid_arguments"


async def test_nothing_a_tool_prints_to_stderr_or_exits_with_leaks_as_a_crash() -> None:
    registry = ToolRegistry()

    def noisy(order_id: str) -> str:
        """Exit from deep inside a library."""
        print("bye", file=sys.stderr)
        sys.exit("the library gave up")

    registry.register(noisy)
    attempt = await _running("noisy", registry, tools=("noisy",))
    executed = await execute(attempt.ctx, C1, "noisy", A1)
    assert executed.failure is not None
    assert (executed.failure.kind, executed.failure.message) == (
        "SystemExit",
        "the library gave up",
    )
