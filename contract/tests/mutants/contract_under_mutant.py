"""The Store contract against one mutant, chosen by environment variables.

``test_store_mutants`` runs this module in a subprocess per mutant and base:
``PSYCH_MUTANT`` names the mutant (see ``store_mutants.MUTANTS``) and
``PSYCH_MUTANT_BASE`` is ``memory`` or ``sqlite``. It is not collected on its own.
"""

import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from contract.tests.mutants.store_mutants import by_name
from psych_contract import StoreContract
from psych_runtime import Store
from psych_store_sqlite import SqliteStore

MUTANT = by_name(os.environ.get("PSYCH_MUTANT", ""))
BASE = os.environ.get("PSYCH_MUTANT_BASE", "memory")


class TestMutant(StoreContract):
    supports_notifier = True
    shares_backend = BASE == "sqlite"

    @pytest_asyncio.fixture
    async def store(self) -> AsyncIterator[Store]:
        with tempfile.TemporaryDirectory(prefix="psych-mutant-") as folder:
            if BASE == "memory":
                assert MUTANT.memory is not None
                store = MUTANT.memory()
            else:
                assert MUTANT.sqlite is not None
                store = MUTANT.sqlite(Path(folder) / "mutant.db")
                await store.migrate()  # type: ignore[attr-defined]
            yield store
            await store.close()

    @pytest_asyncio.fixture
    async def peer_store(self, store: Store) -> AsyncIterator[Store]:
        # A correct store on the mutant's file (a wrapper keeps the real store as inner).
        if BASE != "sqlite":
            pytest.skip("an in-memory store has no second instance")
        base = store
        while not isinstance(base, SqliteStore):
            base = base.inner  # type: ignore[attr-defined]
        peer = SqliteStore(f"sqlite:///{base.path}")
        yield peer
        await peer.close()
