"""Wrong arguments to the control calls: each refused with our own typed error, nothing written.

A decision is a bool: ``approved="yes"`` must not approve a destructive call. A payload
is a JSON object. Everything refused leaves the Run exactly as it was (still
suspended, log unchanged), and nothing surfaces as a validation error naming an
internal record.
"""

import asyncio
from typing import NamedTuple

import pydantic
import pytest

import psych_runtime
from psych_runtime import AgentSpec
from psych_runtime import InMemoryStore
from psych_runtime import ModelRef
from psych_runtime.records import Record
from psych_runtime.testing import FakeModel

from .conftest import ACME
from .conftest import running_worker

LONE = "\ud800"


def _spec() -> AgentSpec:
    return AgentSpec(
        name="refunds",
        model=ModelRef(model="fake-standard"),
        tools=(psych_runtime.spec.CodeTool(name="refund"),),
    )


async def _suspended_run(store: InMemoryStore, refunds: list[str]) -> psych_runtime.RunId:
    """A Run waiting for approval of a ``refund`` call."""

    async def refund(order_id: str) -> str:
        """Refund an order (destructive)."""
        refunds.append(order_id)
        return "refunded"

    model = FakeModel().turn(tool_calls=[("refund", {"order_id": "A1"})]).turn(text="done")
    registry = psych_runtime.ToolRegistry()
    registry.register(refund, annotations=frozenset({"destructive"}))
    runtime = psych_runtime.Runtime(
        store,
        model,
        registry,
        approvals=psych_runtime.ApprovalRules(selectors=("@destructive",)),
    )
    version = await psych_runtime.publish(store, _spec(), scope=ACME)
    run = await psych_runtime.dispatch(store, version, "refund A1", scope=ACME)
    worker = psych_runtime.Worker(store, runtime, poll_interval=0.01)
    task = asyncio.create_task(worker.run())
    try:
        async with asyncio.timeout(5):
            while (
                not (await psych_runtime.status(store, run.run_id, scope=ACME)).suspend_reason
                is not None
            ):
                await asyncio.sleep(0.01)
    finally:
        await worker.stop()
        await task
    return run.run_id


class Waiting(NamedTuple):
    """A Run waiting for approval of a ``refund`` call, and its log when it began to wait."""

    store: InMemoryStore
    run_id: psych_runtime.RunId
    refunds: list[str]
    log: list[Record]

    async def unchanged(self) -> bool:
        return await self.store.read(self.run_id) == self.log


@pytest.fixture
async def waiting() -> Waiting:
    store = InMemoryStore()
    refunds: list[str] = []
    run_id = await _suspended_run(store, refunds)
    return Waiting(store, run_id, refunds, await store.read(run_id))


class _Opaque:
    pass


UNSTORABLE = ({"x": float("nan")}, {"x": LONE})

BAD_RESUMES: list[dict[str, object]] = [
    {"approved": "yes"},
    {"approved": "true"},
    {"approved": "maybe"},
    {"approved": 1},
    {"approved": 2},
    {"approved": [True]},
    {"approved": {}},
    {"approved": True, "payload": [1, 2]},
    {"approved": False, "payload": "no"},
    {"approved": True, "payload": {"x": {1, 2}}},
    {"approved": True, "payload": {"x": _Opaque()}},
    {"approved": True, "payload": {"x": b"bytes"}},
    {"approved": True, "payload": {1: "non-string key"}},
    {"approved": True, "payload": UNSTORABLE[0]},
    {"approved": True, "payload": UNSTORABLE[1]},
    {"approved": True, "by": 123},
    {"approved": True, "by": LONE},
    {"approved": True, "by": "x" * 257},
]


@pytest.mark.parametrize("arguments", BAD_RESUMES, ids=repr)
async def test_a_wrong_resume_is_refused_and_the_run_keeps_waiting(
    arguments: dict[str, object],
    waiting: Waiting,
) -> None:
    store, run_id, refunds = waiting.store, waiting.run_id, waiting.refunds
    unstorable = any(arguments.get("payload") is bad for bad in UNSTORABLE) or (
        arguments.get("by") == LONE
    )
    expected = psych_runtime.UnstorableValue if unstorable else psych_runtime.InvalidResume
    with pytest.raises(expected) as refused:
        await psych_runtime.resume(store, run_id, scope=ACME, **arguments)  # type: ignore[arg-type]
    assert not isinstance(refused.value, pydantic.ValidationError)
    if isinstance(refused.value, psych_runtime.InvalidResume):
        assert refused.value.argument in {"approved", "payload", "by"}
    assert await waiting.unchanged()
    assert (await psych_runtime.status(store, run_id, scope=ACME)).suspend_reason is not None
    # The one right decision still works afterwards, and only it runs the call.
    assert refunds == []
    await psych_runtime.resume(store, run_id, approved=False, scope=ACME)
    assert refunds == []


async def test_only_a_real_true_runs_an_approved_call(waiting: Waiting) -> None:
    store, run_id, refunds = waiting.store, waiting.run_id, waiting.refunds
    with pytest.raises(psych_runtime.InvalidResume):
        await psych_runtime.resume(store, run_id, approved="yes", scope=ACME)  # type: ignore[arg-type]
    model = FakeModel().turn(text="done")
    registry = psych_runtime.ToolRegistry()

    async def refund(order_id: str) -> str:
        """Refund an order (destructive)."""
        refunds.append(order_id)
        return "refunded"

    registry.register(refund, annotations=frozenset({"destructive"}))
    async with running_worker(store, model, registry):
        await psych_runtime.resume(store, run_id, approved=True, by="ops", scope=ACME)
        async with asyncio.timeout(5):
            while (await psych_runtime.status(store, run_id, scope=ACME)).terminal_state is None:
                await asyncio.sleep(0.01)
    assert refunds == ["A1"]


BAD_DISPATCHES: list[dict[str, object]] = [
    {"input": {"x": {1, 2}}},
    {"input": {"x": print}},
    {"input": {"x": b"raw"}},
    {"input": {2: "x"}},
    {"input": ["not", "an", "object"]},
    {"input": "text"},
    {"message": 42},
    {"message": LONE},
    {"idempotency_key": "k" * 1_000_000},
    {"idempotency_key": 7},
    {"continues": 7},
    {"breakpoints": "step"},
    {"step_mode": "yes"},
    {"scope": "acme"},
]


@pytest.mark.parametrize("arguments", BAD_DISPATCHES, ids=lambda a: repr(a)[:60])
async def test_a_wrong_dispatch_is_refused_with_a_typed_error(arguments: dict[str, object]) -> None:
    store = InMemoryStore()
    version = await psych_runtime.publish(store, _spec(), scope=ACME)
    call: dict[str, object] = {"scope": ACME, **arguments}
    with pytest.raises((psych_runtime.InvalidDispatch, psych_runtime.UnstorableValue)) as refused:
        await psych_runtime.dispatch(store, version, **call)  # type: ignore[arg-type]
    assert not isinstance(refused.value, pydantic.ValidationError)
    assert isinstance(refused.value, psych_runtime.PsychError)


async def test_a_nested_input_a_thousand_deep_is_refused_not_a_recursion_error() -> None:
    store = InMemoryStore()
    version = await psych_runtime.publish(store, _spec(), scope=ACME)
    deep: dict[str, object] = {}
    node = deep
    for _ in range(1000):
        node["x"] = {}
        node = node["x"]  # type: ignore[assignment]
    with pytest.raises(psych_runtime.UnstorableValue, match="deeper"):
        await psych_runtime.dispatch(store, version, input=deep, scope=ACME)


@pytest.mark.parametrize(
    "arguments",
    [
        {"message": 42},
        {"message": ["a"]},
        {"message": {"x": {1}}},
        {"message": LONE},
        {"message": "hi", "queue": "sideways"},
        {"message": "hi", "queue": 3},
    ],
    ids=repr,
)
async def test_a_wrong_send_is_refused_with_a_typed_error(
    arguments: dict[str, object], waiting: Waiting
) -> None:
    store, run_id = waiting.store, waiting.run_id
    with pytest.raises((psych_runtime.InvalidArgument, psych_runtime.UnstorableValue)) as refused:
        await psych_runtime.send(store, run_id, scope=ACME, **arguments)  # type: ignore[arg-type]
    if isinstance(refused.value, psych_runtime.InvalidArgument):
        assert refused.value.argument in {"message", "queue"}
    else:
        assert arguments["message"] == LONE
    assert await waiting.unchanged()


@pytest.mark.parametrize(
    "arguments", [{"reason": 5}, {"reason": "r" * 1025}, {"by": 1}, {"by": LONE}], ids=repr
)
async def test_a_wrong_interrupt_is_refused_with_a_typed_error(
    arguments: dict[str, object],
    waiting: Waiting,
) -> None:
    store, run_id = waiting.store, waiting.run_id
    with pytest.raises((psych_runtime.InvalidArgument, psych_runtime.UnstorableValue)):
        await psych_runtime.interrupt(store, run_id, scope=ACME, **arguments)  # type: ignore[arg-type]
    assert await waiting.unchanged()


async def test_a_scope_that_is_not_a_scope_is_refused_by_every_read(waiting: Waiting) -> None:
    store, run_id = waiting.store, waiting.run_id
    for read in (psych_runtime.status, psych_runtime.answer, psych_runtime.read_log):
        with pytest.raises(psych_runtime.InvalidArgument):
            await read(store, run_id, scope="acme")  # type: ignore[arg-type]
