"""session(): a store URL it owns, reads that keep its tenant, and grouped settings."""

import inspect
from collections.abc import Iterator
from dataclasses import fields
from decimal import Decimal

import pytest

import psych_runtime
from psych_runtime import InMemoryStore
from psych_runtime import RuntimeSettings
from psych_runtime import WorkerSettings
from psych_runtime.plugins import AUTOLOAD_ENV
from psych_runtime.plugins import StoreBackend
from psych_runtime.plugins import hookimpl
from psych_runtime.plugins import register_plugin
from psych_runtime.plugins.manager import reset_plugin_manager
from psych_runtime.testing import FakeModel

from .conftest import ACME

SPEC = psych_runtime.AgentSpec(name="chat", model="gpt-4o")


class ClosableStore(InMemoryStore):
    """An in-memory store that remembers how it was opened, migrated and closed."""

    def __init__(self, url: str, options: dict[str, object]) -> None:
        super().__init__()
        self.url = url
        self.options = options
        self.migrated = False
        self.closed = False

    async def migrate(self) -> list[int]:
        self.migrated = True
        return []

    async def close(self) -> None:
        self.closed = True


OPENED: list[ClosableStore] = []


class ClosablePlugin:
    PSYCH_PLUGIN_API = 1

    @hookimpl
    def psych_register_stores(self, register):  # type: ignore[no-untyped-def]
        async def _open(url: str, **options: object) -> ClosableStore:
            store = ClosableStore(url, options)
            OPENED.append(store)
            return store

        register(StoreBackend(name="closable", schemes=("closable",), open=_open, package="t"))


@pytest.fixture(autouse=True)
def closable_backend(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    reset_plugin_manager()
    register_plugin(ClosablePlugin(), name="closable")
    OPENED.clear()
    yield
    reset_plugin_manager()


async def test_a_store_url_is_opened_migrated_and_closed_with_the_session() -> None:
    model = FakeModel().turn(text="hello")
    async with psych_runtime.session(model, store="closable://runs") as s:
        [opened] = OPENED
        assert s.store is opened
        assert opened.url == "closable://runs" and opened.options == {}
        assert opened.migrated
        assert (await s.ask(SPEC, "hi")).text == "hello"
        assert not opened.closed
    assert opened.closed


async def test_a_store_url_is_closed_when_the_block_raises() -> None:
    with pytest.raises(RuntimeError, match="boom"):
        async with psych_runtime.session(FakeModel(), store="closable://runs"):
            raise RuntimeError("boom")
    assert OPENED[0].closed


async def test_a_store_url_is_closed_when_the_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        async with psych_runtime.session(
            FakeModel(), store="closable://runs", worker=WorkerSettings(concurrency=0)
        ):
            pass
    assert OPENED[0].closed


async def test_a_store_object_stays_the_callers_to_close() -> None:
    store = ClosableStore("given", {})
    async with psych_runtime.session(FakeModel().turn(text="hi"), store=store) as s:
        await s.ask(SPEC, "hello")
    assert not store.closed


async def test_session_reads_and_controls_keep_its_tenant() -> None:
    model = FakeModel().turn(text="first answer")
    async with psych_runtime.session(model, scope=ACME) as s:
        reply = await s.ask(SPEC, "question")
        run_id = reply.run_id
        store = s.store
        assert await s.status(run_id) == await psych_runtime.status(store, run_id, scope=ACME)
        assert await s.answer(run_id) == reply
        assert await s.thread(run_id) == await psych_runtime.thread(store, run_id, scope=ACME)
        assert await s.report(run_id) == await psych_runtime.report(store, run_id, scope=ACME)
        assert await s.read_log(run_id) == await psych_runtime.read_log(store, run_id, scope=ACME)
        assert await s.state(run_id) == await psych_runtime.state(store, run_id, scope=ACME)
        assert [r.seq async for r in s.stream(run_id)] == [r.seq for r in await s.read_log(run_id)]
        assert "".join([t async for t in s.stream_text(run_id)]) == "first answer"
        assert await s.interrupt(run_id) is False  # already settled
        with pytest.raises(psych_runtime.RunAlreadySettled):
            await s.send(run_id, "more")

    async with psych_runtime.session(FakeModel(), store=store) as other:
        for read in (other.status, other.answer, other.report, other.read_log, other.state):
            with pytest.raises(psych_runtime.AccessDenied):
                await read(run_id)
        with pytest.raises(psych_runtime.AccessDenied):
            await other.interrupt(run_id)


async def test_grouped_settings_reach_the_runtime_and_the_worker() -> None:
    prices = psych_runtime.models.StaticPriceTable(
        {
            "gpt-4o": psych_runtime.models.ModelPrice(
                input=Decimal("1"),
                output=Decimal("1"),
                cache_read=Decimal(0),
                cache_write=Decimal(0),
            )
        }
    )
    async with psych_runtime.session(
        FakeModel(),
        runtime=RuntimeSettings(prices=prices, blob_offload_bytes=2048),
        worker=WorkerSettings(concurrency=2, lease_seconds=20.0, heartbeat_seconds=5.0),
    ) as s:
        assert s.runtime.prices is prices and s.runtime.blob_offload_bytes == 2048
        assert (s.worker.concurrency, s.worker.lease_seconds) == (2, 20.0)
        assert s.worker.heartbeat_seconds == 5.0


@pytest.mark.parametrize(
    ("settings", "built", "own"),
    [
        (RuntimeSettings, psych_runtime.Runtime, {"store", "model", "registry"}),
        (WorkerSettings, psych_runtime.Worker, {"store", "runner"}),
    ],
)
def test_settings_follow_the_constructor_they_feed(
    settings: type, built: type, own: set[str]
) -> None:
    # Every keyword of the constructor, with the same default, so a setting added there
    # without being added here is caught.
    parameters = inspect.signature(built).parameters
    expected = {name: p.default for name, p in parameters.items() if name not in own}
    assert {f.name: f.default for f in fields(settings)} == expected
