"""Closing a store while a request is in flight leaves nothing open behind it.

aiobotocore opens its HTTP session on a request, lazily; a request that reached that
point after its client had been closed opened a session nobody closed, which Python
reports when the garbage collector finds it, in whatever test happens to run then.
"""

import asyncio
import gc
import warnings

import pytest

from psych_runtime import RunId
from psych_runtime import StoreError
from psych_runtime import ToolCallId
from psych_runtime.adapters.blob import BlobKey
from psych_store_dynamo import S3BlobStore

from ..conftest import StoreFactory


def _unclosed_sessions() -> list[str]:
    """The unclosed-session reports a full collection produces now."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
    return [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]


async def test_a_request_in_flight_ends_before_the_client_is_closed(
    make_store: StoreFactory,
) -> None:
    store = await make_store()
    _unclosed_sessions()
    reading = asyncio.ensure_future(store.read(RunId("run_none")))
    await asyncio.sleep(0)  # the read is under way: past the store, inside the client
    assert not reading.done()
    await store.close()
    assert reading.done()  # closing waited for it
    assert await reading == []
    assert _unclosed_sessions() == []


async def test_a_request_after_close_is_refused_and_opens_nothing(
    make_store: StoreFactory,
) -> None:
    store = await make_store()
    table = await store._open()  # a reference a slow caller might still hold
    await store.close()
    _unclosed_sessions()
    with pytest.raises(StoreError, match="closed"):
        await table.describe()
    assert _unclosed_sessions() == []


async def test_the_blob_store_waits_for_its_requests_too(s3_store: S3BlobStore) -> None:
    _unclosed_sessions()
    key = BlobKey("acme", RunId("run_none"), ToolCallId("c1"))
    reading = asyncio.ensure_future(s3_store.stat(key))
    await asyncio.sleep(0)
    await s3_store.close()
    assert await reading is None
    assert _unclosed_sessions() == []
