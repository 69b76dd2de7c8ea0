"""The BlobStore port, for whoever writes a blob store.

The protocol, its address and errors, the checks every blob store makes, the raw-storage
hook, and the in-memory and file-system blob stores.
"""

from psych_runtime.blob.checks import (
    check_content_type as check_content_type,
    check_window as check_window,
    coerce_bytes as coerce_bytes,
)
from psych_runtime.blob.filesystem import (
    FileBlobStore as FileBlobStore,
)
from psych_runtime.blob.memory import (
    InMemoryBlobStore as InMemoryBlobStore,
)
from psych_runtime.blob.port import (
    BlobInfo as BlobInfo,
    BlobKey as BlobKey,
    BlobNotFound as BlobNotFound,
    BlobStore as BlobStore,
    InvalidBlobKey as InvalidBlobKey,
    RunBlobDeletion as RunBlobDeletion,
)
from psych_runtime.core.raw import (
    RawItem as RawItem,
    RawStorage as RawStorage,
    mentions as mentions,
)

__all__ = [
    "BlobInfo",
    "BlobKey",
    "BlobNotFound",
    "BlobStore",
    "FileBlobStore",
    "InMemoryBlobStore",
    "InvalidBlobKey",
    "RawItem",
    "RawStorage",
    "RunBlobDeletion",
    "check_content_type",
    "check_window",
    "coerce_bytes",
    "mentions",
]
