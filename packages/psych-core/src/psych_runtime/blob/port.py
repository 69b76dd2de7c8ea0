"""The BlobStore port.

A tool result too large for a log record is written to a BlobStore and the record keeps
only its address. The address always names a tenant: there is no way to build a key
without one, so a blob can never be written or read outside the tenancy it belongs to.
"""

from dataclasses import dataclass
from typing import Protocol
from typing import runtime_checkable
from urllib.parse import quote
from urllib.parse import unquote

from psych_runtime.core.errors import PsychError
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import ToolCallId


class BlobNotFound(PsychError):
    """No blob is stored under this key."""

    def __init__(self, key: "BlobKey") -> None:
        super().__init__(f"no blob stored at {key}")
        self.key = key


class InvalidBlobKey(PsychError, ValueError):
    """A string is not a blob key this library wrote."""


@dataclass(frozen=True, slots=True)
class BlobKey:
    """A blob's address: tenant, Run and call, never fewer.

    Attributes:
        tenant: the tenant that owns the Run; required, never empty.
        run_id: the Run whose tool produced the bytes.
        call_id: the tool call that produced them.
    """

    tenant: str
    run_id: RunId
    call_id: ToolCallId

    def __post_init__(self) -> None:
        for name in ("tenant", "run_id", "call_id"):
            if not getattr(self, name):
                raise InvalidBlobKey(f"a blob key needs a non-empty {name}")

    def __str__(self) -> str:
        return "/".join(quote(part, safe="") for part in (self.tenant, self.run_id, self.call_id))

    @classmethod
    def parse(cls, text: str) -> "BlobKey":
        """Read back a key written by ``str(key)``."""
        parts = text.split("/")
        if len(parts) != 3 or not all(parts):
            raise InvalidBlobKey(f"not a blob key: {text!r}")
        tenant, run_id, call_id = (unquote(p) for p in parts)
        return cls(tenant, RunId(run_id), ToolCallId(call_id))


@dataclass(frozen=True, slots=True)
class BlobInfo:
    """What a BlobStore knows about one blob without reading it."""

    key: BlobKey
    size: int
    content_type: str


@runtime_checkable
class BlobStore(Protocol):
    """Stores opaque bytes under tenant-scoped keys."""

    async def put(self, key: BlobKey, data: bytes, *, content_type: str) -> None:
        """Store ``data`` (replacing any blob under the same key)."""
        ...

    async def get(self, key: BlobKey, *, offset: int = 0, length: int | None = None) -> bytes:
        """The blob's bytes, or a window of them.

        Raises:
            BlobNotFound: nothing is stored under ``key``.
        """
        ...

    async def stat(self, key: BlobKey) -> BlobInfo | None:
        """Size and content type, or None when nothing is stored under ``key``."""
        ...

    async def delete(self, key: BlobKey) -> bool:
        """Remove the blob; False when there was none."""
        ...

    async def close(self) -> None:
        """Release resources; the store is unusable afterwards."""
        ...


@runtime_checkable
class RunBlobDeletion(Protocol):
    """A BlobStore that can delete every blob of one Run, named in a log or not.

    A crash between writing a blob and recording it leaves a blob no log names;
    deleting a Run for retention or erasure must not leave it behind. Every blob
    store shipped with Psych implements it, and ``psych-contract`` requires it.
    """

    async def delete_run_blobs(self, tenant: str, run_id: RunId) -> int:
        """Delete every blob stored under ``tenant`` and ``run_id``; returns how many.

        Blobs of another tenant, or of another Run whose id merely starts the same
        way, are left alone.
        """
        ...


__all__ = [
    "BlobInfo",
    "BlobKey",
    "BlobNotFound",
    "BlobStore",
    "InvalidBlobKey",
    "RunBlobDeletion",
]
