"""Hostile values at the public boundary get the same typed answer on every store.

A run id, tenant or idempotency key holding a NUL or a lone surrogate cannot be stored
anywhere: reads and control calls answer ``RunNotFound`` for such ids and dispatch
refuses such keys with ``UnstorableValue``, before any store is asked. Values a record
cannot carry (a lone surrogate, a non-finite number, runaway nesting) are refused with
``UnstorableValue`` by every store, and the log is left as it was. Out-of-range
deadlines are refused at dispatch with ``InvalidDispatch``.
"""

import math
from collections.abc import Awaitable
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

import pytest

import psych_runtime
from psych_runtime import RunId
from psych_runtime.testing import FakeModel

from .conftest import EVERY

ACME = psych_runtime.Scope(tenant="acme")
UrlFor = Callable[[str], Awaitable[str]]
Call = Callable[[psych_runtime.Store, RunId], Awaitable[object]]

NOW = datetime.now(UTC) + timedelta(minutes=1)
"""A claim instant after every dispatch in this module, so any admitted Run is claimable."""
UNPUBLISHED = psych_runtime.VersionHash("sha256:" + "ab" * 32)
"""Dispatch checks its arguments before it looks the Version up, so none is needed."""
HOSTILE_IDS = ["run_\x00", "run_\ud800", "\udfff", "\x00"]


def _spec() -> psych_runtime.AgentSpec:
    return psych_runtime.AgentSpec(name="ops", model=psych_runtime.ModelRef(model="fake-standard"))


async def _first(iterator: Any) -> object:
    async for item in iterator:
        return item
    return None


async def _dispatch_continuing(store: psych_runtime.Store, run_id: RunId) -> object:
    return await psych_runtime.dispatch(store, UNPUBLISHED, "hi", scope=ACME, continues=run_id)


CALLS: dict[str, Call] = {
    "status": lambda store, rid: psych_runtime.status(store, rid, scope=ACME),
    "answer": lambda store, rid: psych_runtime.answer(store, rid, scope=ACME),
    "thread": lambda store, rid: psych_runtime.thread(store, rid, scope=ACME),
    "report": lambda store, rid: psych_runtime.report(store, rid, scope=ACME),
    "records": lambda store, rid: psych_runtime.read_log(store, rid, scope=ACME),
    "records_unscoped": lambda store, rid: psych_runtime.read_log(store, rid),
    "state": lambda store, rid: psych_runtime.state(store, rid, scope=ACME),
    "stream": lambda store, rid: _first(psych_runtime.stream(store, rid, scope=ACME)),
    "stream_text": lambda store, rid: _first(psych_runtime.stream_text(store, rid, scope=ACME)),
    "interrupt": lambda store, rid: psych_runtime.interrupt(store, rid, scope=ACME),
    "send": lambda store, rid: psych_runtime.send(store, rid, "more", scope=ACME),
    "dispatch_continues": _dispatch_continuing,
}


@pytest.fixture
async def open_kind(store_url_for: UrlFor) -> Any:
    """A factory: ``await open_kind(kind)`` opens a fresh store, closed afterwards."""
    opened: list[psych_runtime.Store] = []

    async def make(kind: str) -> psych_runtime.Store:
        store = await psych_runtime.open_store(await store_url_for(kind))
        opened.append(store)
        return store

    yield make
    for store in opened:
        await store.close()


@pytest.mark.parametrize("kind", EVERY)
async def test_reads_and_control_calls_with_impossible_run_ids_raise_run_not_found(
    kind: str, open_kind: Any
) -> None:
    store = await open_kind(kind)
    wrong: list[str] = []
    for name, call in CALLS.items():
        for run_id in HOSTILE_IDS:
            try:
                await call(store, RunId(run_id))
            except psych_runtime.RunNotFound:
                continue
            except Exception as error:  # every other outcome is listed
                wrong.append(f"{name}({run_id!r}): {type(error).__module__}.{error!r}"[:200])
            else:
                wrong.append(f"{name}({run_id!r}): returned without raising")
    assert wrong == []


@pytest.mark.parametrize("kind", EVERY)
async def test_the_store_port_answers_impossible_run_ids_as_unknown(
    kind: str, open_kind: Any
) -> None:
    store = await open_kind(kind)
    for run_id in HOSTILE_IDS:
        rid = RunId(run_id)
        assert await store.get_run(rid) is None
        assert await store.get_run(RunId("run_fine"), tenant=run_id) is None
        assert await store.read(rid) == []
        assert await store.read(rid, tenant="acme") == []
        assert await store.head(rid) == 0


@pytest.mark.parametrize("kind", EVERY)
@pytest.mark.parametrize(
    ("what", "tenant", "key"),
    [
        ("tenant", "acme\x00", None),
        ("tenant", "acme\ud800", None),
        ("idempotency_key", "acme", "key\x00"),
        ("idempotency_key", "acme", "key\udc00"),
    ],
)
async def test_dispatch_refuses_a_tenant_or_key_no_store_can_hold(
    kind: str, what: str, tenant: str, key: str | None, open_kind: Any
) -> None:
    store = await open_kind(kind)
    with pytest.raises(psych_runtime.UnstorableValue, match=what):
        await psych_runtime.dispatch(
            store,
            UNPUBLISHED,
            "hi",
            # The Scope model refuses a surrogate itself; built unchecked, the Scope
            # shows that dispatch refuses it even so.
            scope=psych_runtime.Scope.model_construct(tenant=tenant),
            idempotency_key=key,
        )
    assert await store.claim(psych_runtime.records.WorkerId("w"), NOW, 30) is None


@pytest.mark.parametrize("kind", EVERY)
async def test_dispatch_refuses_input_no_store_can_hold(kind: str, open_kind: Any) -> None:
    store = await open_kind(kind)
    deep: object = "leaf"
    for _ in range(5_000):
        deep = [deep]
    for message, input in [("\ud800", None), (None, {"x": math.nan}), (None, {"deep": deep})]:
        with pytest.raises(psych_runtime.UnstorableValue):
            await psych_runtime.dispatch(store, UNPUBLISHED, message, input=input, scope=ACME)
    assert await store.claim(psych_runtime.records.WorkerId("w"), NOW, 30) is None


@pytest.mark.parametrize(
    "seconds", [math.nan, math.inf, -math.inf, 1e300, 0, 0.0, -1, 86_400.5, 10**400]
)
async def test_dispatch_refuses_a_deadline_out_of_range(seconds: float) -> None:
    store = psych_runtime.InMemoryStore()
    with pytest.raises(psych_runtime.InvalidDispatch) as caught:
        await psych_runtime.dispatch(store, UNPUBLISHED, "hi", scope=ACME, deadline_seconds=seconds)
    assert caught.value.argument == "deadline_seconds"
    assert isinstance(caught.value, ValueError)
    assert await store.claim(psych_runtime.records.WorkerId("w"), NOW, 30) is None


async def test_a_deadline_in_range_still_admits_and_runs() -> None:
    store = psych_runtime.InMemoryStore()
    model = FakeModel().turn(text="done")
    async with psych_runtime.session(model, store=store) as s:
        version = await psych_runtime.publish(store, _spec())
        run = await psych_runtime.dispatch(
            store, version, "hi", scope=s.scope, deadline_seconds=86_400
        )
        await s.wait(run.run_id, timeout=10)
        assert (await psych_runtime.status(store, run.run_id)).terminal_state == "completed"


@pytest.mark.parametrize("kind", EVERY)
async def test_open_store_migrate_true_works_for_every_scheme(
    kind: str, store_url_for: UrlFor
) -> None:
    url = await store_url_for(kind)
    store = await psych_runtime.open_store(url, migrate=True)
    try:
        assert await store.get_run(RunId("run_absent")) is None
    finally:
        await store.close()
