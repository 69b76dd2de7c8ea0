"""An in-process BlobStore: a dictionary behind the BlobStore port.

Good for tests and single-process deployments that already accept losing every Run
when the process exits (the in-memory Store makes the same trade). It passes the same
conformance suite as the durable blob stores.
"""

from psych_runtime.blob.checks import check_content_type
from psych_runtime.blob.checks import check_window
from psych_runtime.blob.checks import coerce_bytes
from psych_runtime.blob.port import BlobInfo
from psych_runtime.blob.port import BlobKey
from psych_runtime.blob.port import BlobNotFound
from psych_runtime.core.ids import RunId
from psych_runtime.core.raw import RawItem


class InMemoryBlobStore:
    """A BlobStore that keeps every blob in this process's memory.

    It satisfies ``psych_runtime.blob.port.BlobStore`` structurally. Each method body
    runs without awaiting, so two coroutines can never see a blob half written.
    """

    def __init__(self) -> None:
        self._blobs: dict[BlobKey, tuple[bytes, str]] = {}

    async def put(self, key: BlobKey, data: bytes, *, content_type: str) -> None:
        """Store ``data`` under ``key``, replacing whatever was there."""
        check_content_type(content_type)
        # bytes() copies a bytearray or memoryview, so a caller who reuses its buffer
        # afterwards cannot change what was stored.
        self._blobs[key] = (coerce_bytes(data), content_type)

    async def get(self, key: BlobKey, *, offset: int = 0, length: int | None = None) -> bytes:
        """The blob's bytes, or the window ``[offset, offset + length)`` of them.

        Raises:
            BlobNotFound: nothing is stored under ``key``.
            ValueError: ``offset`` or ``length`` is negative.
        """
        check_window(offset, length)
        stored = self._blobs.get(key)
        if stored is None:
            raise BlobNotFound(key)
        data = stored[0]
        end = len(data) if length is None else offset + length
        return data[offset:end]

    async def stat(self, key: BlobKey) -> BlobInfo | None:
        """Size and content type of the blob, or None when there is none."""
        stored = self._blobs.get(key)
        if stored is None:
            return None
        return BlobInfo(key=key, size=len(stored[0]), content_type=stored[1])

    async def delete(self, key: BlobKey) -> bool:
        """Forget the blob; False when there was nothing to forget."""
        return self._blobs.pop(key, None) is not None

    async def delete_run_blobs(self, tenant: str, run_id: RunId) -> int:
        """Delete every blob of ``run_id`` under ``tenant``; returns how many."""
        doomed = [k for k in self._blobs if k.tenant == tenant and k.run_id == run_id]
        for key in doomed:
            del self._blobs[key]
        return len(doomed)

    async def raw_storage(self) -> list[RawItem]:
        """See ``RawStorage.raw_storage``: every blob's bytes and content type."""
        return [
            RawItem(f"blob {key}", data + b"\n" + content_type.encode())
            for key, (data, content_type) in self._blobs.items()
        ]

    async def close(self) -> None:
        """Drop every blob; nothing here outlives the store anyway."""
        self._blobs.clear()

    def __len__(self) -> int:
        return len(self._blobs)

    def __repr__(self) -> str:
        return f"InMemoryBlobStore(blobs={len(self._blobs)})"


__all__ = ["InMemoryBlobStore"]
