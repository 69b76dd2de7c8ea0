"""Where the bytes of oversized tool results live.

A tool result too big for a log record is written to a BlobStore and the record keeps
its address (a ``BlobKey``). The core ships two adapters: ``InMemoryBlobStore`` for
tests and ``FileBlobStore`` for a local or mounted directory; others (S3, say) come
from plugins and are opened by URL with ``open_blob_store``.
"""

from psych_runtime.blob.filesystem import FileBlobStore
from psych_runtime.blob.memory import InMemoryBlobStore
from psych_runtime.blob.port import BlobInfo
from psych_runtime.blob.port import BlobKey
from psych_runtime.blob.port import BlobNotFound
from psych_runtime.blob.port import BlobStore
from psych_runtime.blob.port import InvalidBlobKey

__all__ = [
    "BlobInfo",
    "BlobKey",
    "BlobNotFound",
    "BlobStore",
    "FileBlobStore",
    "InMemoryBlobStore",
    "InvalidBlobKey",
]
