"""An unreachable endpoint surfaces as StoreUnavailable naming it, never a driver error."""

import pytest

from psych_runtime import RunId, StoreError, StoreUnavailable
from psych_runtime.adapters import BlobKey
from psych_runtime.records import ToolCallId
from psych_store_dynamo import DynamoStore, S3BlobStore

from ..conftest import free_port


async def test_a_closed_port_is_store_unavailable_on_first_use() -> None:
    port = free_port()
    store = DynamoStore(
        f"dynamodb://psych?region=us-east-1&endpoint_url=http://127.0.0.1:{port}",
        max_attempts=1,
        connect_timeout=0.5,
    )
    try:
        with pytest.raises(StoreUnavailable) as caught:
            await store.head(RunId("r"))
        assert f"127.0.0.1:{port}" in str(caught.value)
        with pytest.raises(StoreUnavailable):
            await store.migrate()
    finally:
        await store.close()


async def test_credentials_in_the_endpoint_never_reach_the_message() -> None:
    port = free_port()
    store = DynamoStore(
        f"dynamodb://psych?region=us-east-1&endpoint_url=http://me:hunter2@127.0.0.1:{port}",
        max_attempts=1,
        connect_timeout=0.5,
    )
    try:
        with pytest.raises(StoreUnavailable) as caught:
            await store.connect()
        assert "hunter2" not in str(caught.value)
    finally:
        await store.close()


async def test_an_unreachable_s3_endpoint_is_store_unavailable() -> None:
    port = free_port()
    blobs = S3BlobStore(
        f"s3://bucket/p?region=us-east-1&endpoint_url=http://127.0.0.1:{port}",
        max_attempts=1,
        connect_timeout=0.5,
    )
    try:
        with pytest.raises(StoreUnavailable, match=f"127.0.0.1:{port}"):
            await blobs.stat(BlobKey("t", RunId("r"), ToolCallId("c")))
    finally:
        await blobs.close()


async def test_a_closed_store_refuses_further_use() -> None:
    store = DynamoStore("dynamodb://psych?region=us-east-1")
    await store.close()
    await store.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        await store.head(RunId("r"))
