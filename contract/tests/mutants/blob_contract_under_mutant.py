"""The BlobStore contract against one blob mutant, chosen by environment variables.

``test_blob_mutants`` runs this module in a subprocess: ``PSYCH_MUTANT`` names the
mutant (see ``blob_mutants.BLOB_MUTANTS``), ``PSYCH_MUTANT_BASE`` is ``memory`` or
``file``. It is not collected on its own.
"""

import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from contract.tests.mutants.blob_mutants import blob_mutant
from psych_contract import BlobStoreContract
from psych_runtime.adapters import BlobStore
from psych_runtime.adapters import FileBlobStore

MUTANT = blob_mutant(os.environ.get("PSYCH_MUTANT", ""))
BASE = os.environ.get("PSYCH_MUTANT_BASE", "memory")


class TestMutant(BlobStoreContract):
    single_process = BASE == "memory"

    @pytest_asyncio.fixture
    async def blob_store(self) -> AsyncIterator[BlobStore]:
        with tempfile.TemporaryDirectory(prefix="psych-blob-mutant-") as folder:
            store = MUTANT.build(BASE, Path(folder))
            yield store
            await store.close()

    @pytest_asyncio.fixture
    async def peer_blob_store(self, blob_store: BlobStore) -> AsyncIterator[BlobStore]:
        # A correct instance on the mutant's directory.
        inner = getattr(blob_store, "inner", blob_store)
        assert isinstance(inner, FileBlobStore)
        peer = FileBlobStore(inner.root)
        yield peer
        await peer.close()
