"""S3BlobStore against the shared BlobStore conformance suite, on a real moto server.

Every case gets a fresh bucket and writes under a prefix of it.
"""

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from psych_contract import BlobStoreContract
from psych_contract.lifecycle import closing
from psych_runtime.adapters import BlobStore
from psych_store_dynamo import S3BlobStore

from ..conftest import make_bucket
from ..conftest import new_table_name
from ..conftest import s3_url


class TestS3BlobStore(BlobStoreContract):
    @pytest.fixture(autouse=True)
    def _server(self, moto_endpoint: str) -> None:
        # The `blob_store` override must keep the suite's signature (see the Store one).
        self.endpoint = moto_endpoint

    @pytest_asyncio.fixture
    async def blob_store(self) -> AsyncIterator[S3BlobStore]:
        bucket = new_table_name()
        await make_bucket(self.endpoint, bucket)
        async with closing(S3BlobStore(s3_url(self.endpoint, bucket))) as store:
            yield store

    @pytest_asyncio.fixture
    async def peer_blob_store(self, blob_store: BlobStore) -> AsyncIterator[S3BlobStore]:
        # A second client on the same bucket and prefix.
        assert isinstance(blob_store, S3BlobStore)
        async with closing(S3BlobStore(blob_store.settings)) as peer:
            yield peer
