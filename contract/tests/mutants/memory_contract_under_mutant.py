"""The MemoryStore contract against one memory mutant, chosen by environment variables.

``test_memory_mutants`` runs this module in a subprocess: ``PSYCH_MUTANT`` names the
mutant (see ``memory_mutants.MEMORY_MUTANTS``), ``PSYCH_MUTANT_BASE`` is ``memory`` or
``sqlite``. It is not collected on its own.
"""

import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from contract.tests.mutants.memory_mutants import memory_mutant
from psych_contract import MemoryContract
from psych_runtime.adapters import MemoryStore

MUTANT = memory_mutant(os.environ.get("PSYCH_MUTANT", ""))
BASE = os.environ.get("PSYCH_MUTANT_BASE", "memory")


class TestMutant(MemoryContract):
    durable = False
    single_process = True  # the cases the mutants are checked with need no second instance

    @pytest_asyncio.fixture
    async def memory_store(self) -> AsyncIterator[MemoryStore]:
        with tempfile.TemporaryDirectory(prefix="psych-memory-mutant-") as folder:
            if BASE == "memory":
                assert MUTANT.memory is not None
                store = MUTANT.memory()
            else:
                assert MUTANT.sqlite is not None
                store = MUTANT.sqlite(Path(folder) / "mutant.db")
                inner = getattr(store, "inner", store)
                await inner.migrate()
            yield store
            await store.close()
