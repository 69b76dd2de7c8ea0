"""The in-process store against the shared Store conformance suite, plus its extras."""

import asyncio
from collections.abc import AsyncIterator

import pytest_asyncio

from psych_contract import StoreContract
from psych_contract import _data as data
from psych_contract.lifecycle import closing
from psych_runtime.core.ids import WorkerId
from psych_runtime.store.memory import InMemoryStore
from psych_runtime.store.notify import WORK
from psych_runtime.store.port import RunState


class TestInMemoryStore(StoreContract):
    single_process = True  # its Runs live in this process only: no second instance

    @pytest_asyncio.fixture
    async def store(self) -> AsyncIterator[InMemoryStore]:
        async with closing(InMemoryStore()) as store:
            yield store


async def test_a_release_signals_the_run_key_whatever_the_state() -> None:
    # Someone waiting for a Run to stop (an inline parent, a test) hears the release.
    store = InMemoryStore()
    run, admitted = data.admission()
    await store.create_run(run, admitted)
    claimed = await store.claim(WorkerId("w"), data.at(0), 30)
    assert claimed is not None
    seen = store.notifier.generation(run.run_id)
    await store.release(run.run_id, WorkerId("w"), RunState.SUSPENDED)
    assert store.notifier.generation(run.run_id) == seen + 1


async def test_admitting_a_parked_or_nested_run_does_not_signal_work() -> None:
    store = InMemoryStore()
    await store.create_run(*data.admission(state=RunState.NESTED))
    await store.create_run(*data.admission(state=RunState.SUSPENDED))
    assert store.notifier.generation(WORK) == 0
    await store.create_run(*data.admission())
    assert store.notifier.generation(WORK) == 1


async def test_refused_appends_do_not_signal() -> None:
    store = InMemoryStore()
    run, admitted = data.admission()
    await store.create_run(run, admitted)
    seen = store.notifier.generation(run.run_id)
    results = await asyncio.gather(
        store.append(run.run_id, 1, data.batch(run, 1, 1)),
        return_exceptions=True,
    )
    assert isinstance(results[0], Exception)
    assert store.notifier.generation(run.run_id) == seen
