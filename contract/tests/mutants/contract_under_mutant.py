"""The Store contract against one mutant, chosen by environment variables.

``test_store_mutants`` runs this module in a subprocess per mutant and base:
``PSYCH_MUTANT`` names the mutant (see ``store_mutants.MUTANTS``) and
``PSYCH_MUTANT_BASE`` is ``memory`` or ``sqlite``. It is not collected on its own.
"""

import os
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from psych_store_example import ExampleStore

from contract.tests.mutants.store_mutants import by_name
from psych_contract import StoreContract
from psych_runtime import Store
from psych_store_sqlite import SqliteStore

MUTANT = by_name(os.environ.get("PSYCH_MUTANT", ""))
BASE = os.environ.get("PSYCH_MUTANT_BASE", "memory")


class TestMutant(StoreContract):
    supports_notifier = True
    shares_backend = BASE in ("sqlite", "example")
    single_process = BASE == "memory"

    @pytest_asyncio.fixture
    async def store(self) -> AsyncIterator[Store]:
        with tempfile.TemporaryDirectory(prefix="psych-mutant-") as folder:
            if BASE == "memory":
                assert MUTANT.memory is not None
                store = MUTANT.memory()
            elif BASE == "example":
                assert MUTANT.example is not None
                store = MUTANT.example(f"mutant-{uuid.uuid4().hex}")
            else:
                assert MUTANT.sqlite is not None
                store = MUTANT.sqlite(Path(folder) / "mutant.db")
                await store.migrate()  # type: ignore[attr-defined]
            yield store
            await store.close()

    @pytest_asyncio.fixture
    async def peer_store(self, store: Store) -> AsyncIterator[Store]:
        # A correct store on the mutant's backend (a wrapper keeps the real one as inner).
        if BASE == "memory":
            pytest.skip("an in-memory store has no second instance")
        if BASE == "example":
            base_example = store
            while not isinstance(base_example, ExampleStore):
                base_example = base_example.inner  # type: ignore[attr-defined]
            peer_example = ExampleStore(base_example.settings)
            yield peer_example
            await peer_example.close()
            return
        base = store
        while not isinstance(base, SqliteStore):
            base = base.inner  # type: ignore[attr-defined]
        peer = SqliteStore(f"sqlite:///{base.path}")
        yield peer
        await peer.close()
