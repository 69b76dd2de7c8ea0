"""Calling registered tools: validation, context, threads and result conversion."""

import asyncio
import dataclasses
import threading
from datetime import UTC
from datetime import datetime
from decimal import Decimal

import pytest
from pydantic import BaseModel

from psych_runtime.core.ids import AttemptId
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.scope import Scope
from psych_runtime.tools import ToolArgumentsInvalid
from psych_runtime.tools import ToolContext
from psych_runtime.tools import ToolRegistry
from psych_runtime.tools import ToolResultInvalid
from psych_runtime.tools import UnknownTool


def _context(call_id: str = "call_1") -> ToolContext:
    return ToolContext.for_call(
        run_id=RunId("run_1"),
        call_id=ToolCallId(call_id),
        scope=Scope(tenant="acme"),
        attempt_id=AttemptId("att_1"),
    )


class Line(BaseModel):
    sku: str
    qty: int = 1


class Receipt(BaseModel):
    total: Decimal
    at: datetime


@dataclasses.dataclass
class Pair:
    left: int
    right: tuple[int, ...]


async def test_async_tool_receives_validated_arguments_and_defaults() -> None:
    registry = ToolRegistry()
    seen: dict[str, object] = {}

    @registry.tool
    async def order(lines: list[Line], note: str = "none", rush: bool = False) -> int:
        """Place an order."""
        seen.update(lines=lines, note=note, rush=rush)
        return len(lines)

    result = await registry.invoke(
        "order", {"lines": [{"sku": "a"}, {"sku": "b", "qty": 2}]}, _context()
    )
    assert result == 2
    lines = seen["lines"]
    assert isinstance(lines, list)
    assert all(isinstance(line, Line) for line in lines)
    assert [line.qty for line in lines] == [1, 2]
    assert seen["note"] == "none"
    assert seen["rush"] is False


async def test_context_is_passed_to_the_parameter_that_asks() -> None:
    registry = ToolRegistry()
    received: list[ToolContext] = []

    @registry.tool
    async def charge(amount: int, ctx: ToolContext) -> str:
        """Charge."""
        received.append(ctx)
        return ctx.idempotency_key

    context = _context("call_9")
    key = await registry.invoke("charge", {"amount": 5}, context)
    assert received == [context]
    assert received[0] is context
    assert key == context.idempotency_key


async def test_context_may_not_be_supplied_by_the_model() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def charge(amount: int, ctx: ToolContext) -> None:
        """Charge."""

    with pytest.raises(ToolArgumentsInvalid, match="ctx: not a parameter"):
        await registry.invoke("charge", {"amount": 5, "ctx": {"run_id": "x"}}, _context())


async def test_invalid_arguments_list_every_bad_field() -> None:
    registry = ToolRegistry()
    called = False

    @registry.tool
    async def order(count: int, lines: list[Line], name: str) -> None:
        """Place an order."""
        nonlocal called
        called = True

    with pytest.raises(ToolArgumentsInvalid) as info:
        await registry.invoke(
            "order", {"count": "many", "lines": [{"qty": 1}], "surprise": True}, _context()
        )
    error = info.value
    assert not called
    assert error.kind == "invalid_arguments"
    assert error.tool == "order"
    fields = sorted(problem.split(":")[0] for problem in error.problems)
    assert fields == ["count", "lines.0.sku", "name", "surprise"]
    message = str(error)
    assert "'many'" in message
    assert "surprise: not a parameter" in message
    assert "name: required" in message


async def test_arguments_that_are_not_an_object_are_invalid() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def noop() -> None:
        """Nothing."""

    with pytest.raises(ToolArgumentsInvalid):
        await registry.invoke("noop", ["not", "a", "dict"], _context())  # type: ignore[arg-type]


async def test_unknown_tool_names_the_registered_ones() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def known() -> None:
        """Known."""

    with pytest.raises(UnknownTool) as info:
        await registry.invoke("unknown", {}, _context())
    assert info.value.kind == "unknown_tool"
    assert "known" in str(info.value)


async def test_exceptions_from_the_tool_propagate_unchanged() -> None:
    registry = ToolRegistry()
    boom = RuntimeError("card declined")

    @registry.tool
    async def charge() -> None:
        """Charge."""
        raise boom

    @registry.tool
    def charge_sync() -> None:
        """Charge, blocking."""
        raise boom

    for name in ("charge", "charge_sync"):
        with pytest.raises(RuntimeError) as info:
            await registry.invoke(name, {}, _context())
        assert info.value is boom


async def test_sync_tools_run_off_the_event_loop_thread() -> None:
    registry = ToolRegistry()
    loop_thread = threading.get_ident()

    @registry.tool
    def where() -> int:
        """Report the thread."""
        return threading.get_ident()

    @registry.tool
    async def where_async() -> int:
        """Report the thread."""
        return threading.get_ident()

    assert await registry.invoke("where", {}, _context()) != loop_thread
    assert await registry.invoke("where_async", {}, _context()) == loop_thread


async def test_a_blocking_sync_tool_does_not_stall_the_loop() -> None:
    registry = ToolRegistry()
    release = threading.Event()

    @registry.tool
    def wait_for_release() -> bool:
        """Block until released."""
        return release.wait(timeout=5)

    async def releaser() -> None:
        await asyncio.sleep(0)
        release.set()

    # If the tool blocked the loop, the releaser could never run and the wait would
    # time out, returning False.
    result, _ = await asyncio.gather(
        registry.invoke("wait_for_release", {}, _context()), releaser()
    )
    assert result is True


async def test_return_values_become_json_data() -> None:
    registry = ToolRegistry()
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)

    @registry.tool
    async def receipt() -> Receipt:
        """A receipt."""
        return Receipt(total=Decimal("12.50"), at=at)

    @registry.tool
    def pair() -> Pair:
        """A dataclass."""
        return Pair(left=1, right=(2, 3))

    @registry.tool
    async def when() -> datetime:
        """A timestamp."""
        return at

    @registry.tool
    async def nothing() -> None:
        """Nothing."""

    got = await registry.invoke("receipt", {}, _context())
    assert got == {"total": "12.50", "at": at.isoformat().replace("+00:00", "Z")}
    assert await registry.invoke("pair", {}, _context()) == {"left": 1, "right": [2, 3]}
    when_value = await registry.invoke("when", {}, _context())
    assert isinstance(when_value, str)
    assert datetime.fromisoformat(when_value) == at
    assert await registry.invoke("nothing", {}, _context()) is None


async def test_unserialisable_result_is_reported_as_such() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def weird() -> object:
        """Returns something odd."""
        return object()

    with pytest.raises(ToolResultInvalid, match="weird"):
        await registry.invoke("weird", {}, _context())


async def test_positional_only_parameters_are_passed_by_position() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def divide(a: int, b: int, /, *, exact: bool = False) -> float:
        """Divide."""
        return a / b if not exact else a // b

    assert await registry.invoke("divide", {"a": 9, "b": 2}, _context()) == 4.5
    assert await registry.invoke("divide", {"a": 9, "b": 2, "exact": True}, _context()) == 4


async def test_callable_objects_sync_and_async() -> None:
    registry = ToolRegistry()

    class AsyncCounter:
        """Count asynchronously."""

        async def __call__(self, step: int) -> int:
            return threading.get_ident()

    class SyncCounter:
        """Count synchronously."""

        def __call__(self, step: int) -> int:
            return threading.get_ident()

    registry.register(AsyncCounter(), name="async_counter")
    registry.register(SyncCounter(), name="sync_counter")
    loop_thread = threading.get_ident()
    assert await registry.invoke("async_counter", {"step": 1}, _context()) == loop_thread
    assert await registry.invoke("sync_counter", {"step": 1}, _context()) != loop_thread


async def test_lax_coercion_of_json_numbers_and_strings() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def scale(factor: float, times: int) -> float:
        """Scale."""
        return factor * times

    assert await registry.invoke("scale", {"factor": 2, "times": "3"}, _context()) == 6.0


async def test_registered_tool_invoke_matches_registry_invoke() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def echo(text: str) -> str:
        """Echo."""
        return text

    tool = registry.get("echo")
    assert tool is not None
    assert await tool.invoke({"text": "hi"}, _context()) == "hi"
