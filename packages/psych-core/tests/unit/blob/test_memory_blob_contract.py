"""The in-process BlobStore against the shared BlobStore conformance suite."""

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from psych_contract import BlobStoreContract
from psych_contract.lifecycle import closing
from psych_runtime.blob.memory import InMemoryBlobStore
from psych_runtime.blob.port import BlobKey
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import ToolCallId


class TestInMemoryBlobStore(BlobStoreContract):
    single_process = True  # its blobs live in this process only

    @pytest_asyncio.fixture
    async def blob_store(self) -> AsyncIterator[InMemoryBlobStore]:
        async with closing(InMemoryBlobStore()) as blobs:
            yield blobs


async def test_a_caller_reusing_its_buffer_cannot_change_the_stored_blob() -> None:
    blobs = InMemoryBlobStore()
    key = BlobKey("t", RunId("r"), ToolCallId("c"))
    buffer = bytearray(b"original")
    await blobs.put(key, buffer, content_type="text/plain")  # type: ignore[arg-type]
    buffer[:] = b"changed!"
    assert await blobs.get(key) == b"original"


async def test_text_is_refused_rather_than_silently_encoded() -> None:
    blobs = InMemoryBlobStore()
    with pytest.raises(TypeError, match="encode it first"):
        await blobs.put(
            BlobKey("t", RunId("r"), ToolCallId("c")),
            "not bytes",  # type: ignore[arg-type]
            content_type="text/plain",
        )


async def test_an_empty_content_type_is_refused() -> None:
    blobs = InMemoryBlobStore()
    with pytest.raises(ValueError, match="content type"):
        await blobs.put(BlobKey("t", RunId("r"), ToolCallId("c")), b"x", content_type="")
