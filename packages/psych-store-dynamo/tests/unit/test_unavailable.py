"""An unreachable endpoint surfaces as StoreUnavailable naming it, never a driver error."""

import pytest

from psych_contract.lifecycle import closing
from psych_runtime import RunId
from psych_runtime import StoreError
from psych_runtime import StoreUnavailable
from psych_runtime.adapters import BlobKey
from psych_runtime.records import ToolCallId
from psych_store_dynamo import DynamoStore
from psych_store_dynamo import S3BlobStore

from ..conftest import free_port

QUICK = {"max_attempts": 1, "connect_timeout": 0.5}
"""Options that give up on an unreachable endpoint after one short attempt."""


async def test_a_closed_port_is_store_unavailable_on_first_use() -> None:
    port = free_port()
    url = f"dynamodb://psych?region=us-east-1&endpoint_url=http://127.0.0.1:{port}"
    async with closing(DynamoStore(url, **QUICK)) as store:
        with pytest.raises(StoreUnavailable) as caught:
            await store.head(RunId("r"))
        assert f"127.0.0.1:{port}" in str(caught.value)
        with pytest.raises(StoreUnavailable):
            await store.migrate()


async def test_credentials_in_the_endpoint_never_reach_the_message() -> None:
    port = free_port()
    url = f"dynamodb://psych?region=us-east-1&endpoint_url=http://me:hunter2@127.0.0.1:{port}"
    async with closing(DynamoStore(url, **QUICK)) as store:
        with pytest.raises(StoreUnavailable) as caught:
            await store.connect()
        assert "hunter2" not in str(caught.value)


async def test_an_unreachable_s3_endpoint_is_store_unavailable() -> None:
    port = free_port()
    url = f"s3://bucket/p?region=us-east-1&endpoint_url=http://127.0.0.1:{port}"
    async with closing(S3BlobStore(url, **QUICK)) as blobs:
        with pytest.raises(StoreUnavailable, match=f"127.0.0.1:{port}"):
            await blobs.stat(BlobKey("t", RunId("r"), ToolCallId("c")))


async def test_a_closed_store_refuses_further_use() -> None:
    store = DynamoStore("dynamodb://psych?region=us-east-1")
    await store.close()
    await store.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        await store.head(RunId("r"))
