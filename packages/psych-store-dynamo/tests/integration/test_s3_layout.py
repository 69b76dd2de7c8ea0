"""Where S3BlobStore puts objects, and how it fails on a bucket that is not there."""

import importlib

import pytest

from psych_runtime import RunId
from psych_runtime import StoreError
from psych_runtime.adapters import BlobKey
from psych_runtime.records import ToolCallId
from psych_store_dynamo import S3BlobStore

from ..conftest import REGION
from ..conftest import s3_url


async def _object_names(endpoint: str, bucket: str) -> list[str]:
    aioboto3 = importlib.import_module("aioboto3")
    async with aioboto3.Session().client("s3", region_name=REGION, endpoint_url=endpoint) as c:
        listed = await c.list_objects_v2(Bucket=bucket)
    return sorted(entry["Key"] for entry in listed.get("Contents", []))


async def test_objects_live_under_the_prefix_with_escaped_parts(
    s3_store: S3BlobStore, moto_endpoint: str, bucket: str
) -> None:
    key = BlobKey("acme/eu", RunId("run.1"), ToolCallId(".."))
    await s3_store.put(key, b"{}", content_type="application/json")
    assert await _object_names(moto_endpoint, bucket) == ["psych/blobs/acme%2Feu/run%2E1/%2E%2E"]
    assert s3_store.object_name(key) == "psych/blobs/acme%2Feu/run%2E1/%2E%2E"


async def test_a_key_too_long_for_s3_is_stored_under_its_digest(
    s3_store: S3BlobStore, moto_endpoint: str, bucket: str
) -> None:
    long_tenant = "\u79df" * 256  # 256 characters, 2304 bytes once escaped
    key = BlobKey(long_tenant, RunId("r"), ToolCallId("c"))
    other = BlobKey(long_tenant, RunId("r"), ToolCallId("d"))
    await s3_store.put(key, b"one", content_type="text/plain")
    await s3_store.put(other, b"two", content_type="text/plain")
    assert await s3_store.get(key) == b"one"
    assert await s3_store.get(other) == b"two"
    names = await _object_names(moto_endpoint, bucket)
    assert len(names) == 2
    assert all(name.startswith("psych/blobs/~sha256/") for name in names)


async def test_a_store_without_prefix_writes_at_the_bucket_root(
    moto_endpoint: str, bucket: str
) -> None:
    blobs = S3BlobStore(s3_url(moto_endpoint, bucket, prefix=""))
    try:
        await blobs.put(BlobKey("t", RunId("r"), ToolCallId("c")), b"x", content_type="a/b")
    finally:
        await blobs.close()
    assert await _object_names(moto_endpoint, bucket) == ["t/r/c"]


async def test_a_missing_bucket_is_a_clear_store_error(moto_endpoint: str) -> None:
    blobs = S3BlobStore(s3_url(moto_endpoint, "no-such-bucket-here"))
    try:
        with pytest.raises(StoreError, match="no-such-bucket-here"):
            await blobs.put(BlobKey("t", RunId("r"), ToolCallId("c")), b"x", content_type="a/b")
    finally:
        await blobs.close()
