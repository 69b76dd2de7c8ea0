"""The BlobStore port, for whoever writes a blob store.

The protocol, its address and errors, the checks every blob store makes, the raw-storage
hook, and the in-memory and file-system blob stores.
"""

from psych_runtime import blob as _blob
from psych_runtime.blob import *  # noqa: F403
from psych_runtime.blob.checks import check_content_type as check_content_type
from psych_runtime.blob.checks import check_window as check_window
from psych_runtime.blob.checks import coerce_bytes as coerce_bytes
from psych_runtime.blob.port import RunBlobDeletion as RunBlobDeletion
from psych_runtime.core.raw import RawItem as RawItem
from psych_runtime.core.raw import RawStorage as RawStorage
from psych_runtime.core.raw import mentions as mentions

# The blob package's own names, and what only an adapter author needs.
__all__ = [
    *_blob.__all__,
    "RawItem",
    "RawStorage",
    "RunBlobDeletion",
    "check_content_type",
    "check_window",
    "coerce_bytes",
    "mentions",
]
