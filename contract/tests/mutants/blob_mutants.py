"""Deliberately wrong BlobStores, each a thin wrapper around a correct one.

The faults are the ones a blob adapter meets when it maps keys to paths or object
names and windows to ranges. Each names the contract cases that must fail against it.
"""

import asyncio
import contextlib
from dataclasses import dataclass
from pathlib import Path

from psych_runtime import RunId
from psych_runtime.adapters import BlobInfo
from psych_runtime.adapters import BlobKey
from psych_runtime.adapters import BlobNotFound
from psych_runtime.adapters import BlobStore
from psych_runtime.adapters import FileBlobStore
from psych_runtime.adapters import InMemoryBlobStore
from psych_runtime.adapters import RawItem
from psych_runtime.adapters import RawStorage
from psych_runtime.adapters import RunBlobDeletion
from psych_runtime.records import ToolCallId

MODEL_CASE = "test_random_call_sequences_match_the_reference_model"


class ForwardingBlobs:
    """Passes every call to ``inner`` after ``mapped`` chose the key it is stored under."""

    def __init__(self, inner: BlobStore) -> None:
        self.inner = inner

    def mapped(self, key: BlobKey) -> BlobKey:
        return key

    async def put(self, key: BlobKey, data: bytes, *, content_type: str) -> None:
        await self.inner.put(self.mapped(key), data, content_type=content_type)

    async def get(self, key: BlobKey, *, offset: int = 0, length: int | None = None) -> bytes:
        return await self.inner.get(self.mapped(key), offset=offset, length=length)

    async def stat(self, key: BlobKey) -> BlobInfo | None:
        info = await self.inner.stat(self.mapped(key))
        return None if info is None else BlobInfo(key, info.size, info.content_type)

    async def delete(self, key: BlobKey) -> bool:
        return await self.inner.delete(self.mapped(key))

    async def raw_storage(self) -> list[RawItem]:
        assert isinstance(self.inner, RawStorage)
        return await self.inner.raw_storage()

    async def delete_run_blobs(self, tenant: str, run_id: RunId) -> int:
        assert isinstance(self.inner, RunBlobDeletion)
        return await self.inner.delete_run_blobs(tenant, run_id)

    async def close(self) -> None:
        await self.inner.close()


class CaseInsensitiveKeys(ForwardingBlobs):
    """Folds case, as a case-insensitive filesystem would."""

    def mapped(self, key: BlobKey) -> BlobKey:
        return BlobKey(
            key.tenant.lower(), RunId(key.run_id.lower()), ToolCallId(key.call_id.lower())
        )


class NaivelyJoinedKeys(ForwardingBlobs):
    """Joins the parts with ``/`` unescaped, so ``a/b`` + ``c`` equals ``a`` + ``b/c``."""

    def mapped(self, key: BlobKey) -> BlobKey:
        return BlobKey("joined", RunId(f"{key.tenant}/{key.run_id}/{key.call_id}"), ToolCallId("x"))


class WindowOneTooLong(ForwardingBlobs):
    """Reads one byte more than asked (an inclusive range end taken as exclusive)."""

    async def get(self, key: BlobKey, *, offset: int = 0, length: int | None = None) -> bytes:
        longer = None if length is None else length + 1
        return await self.inner.get(key, offset=offset, length=longer)


class LengthIgnored(ForwardingBlobs):
    """Reads to the end whatever length was asked for."""

    async def get(self, key: BlobKey, *, offset: int = 0, length: int | None = None) -> bytes:
        return await self.inner.get(key, offset=offset)


class ContentTypeParametersDropped(ForwardingBlobs):
    """Keeps only the media type, losing ``; charset=...``."""

    async def put(self, key: BlobKey, data: bytes, *, content_type: str) -> None:
        await self.inner.put(key, data, content_type=content_type.split(";")[0].strip())


class DeleteAlwaysTrue(ForwardingBlobs):
    """Reports a deletion whether or not there was a blob."""

    async def delete(self, key: BlobKey) -> bool:
        await self.inner.delete(key)
        return True


class FirstWriteWins(ForwardingBlobs):
    """Keeps the first blob written under a key (a create-only write)."""

    async def put(self, key: BlobKey, data: bytes, *, content_type: str) -> None:
        if await self.inner.stat(key) is None:
            await self.inner.put(key, data, content_type=content_type)


class DeleteOnlyHides(ForwardingBlobs):
    """Answers a deleted blob as missing while its bytes stay where they were."""

    def __init__(self, inner: BlobStore) -> None:
        super().__init__(inner)
        self._hidden: set[BlobKey] = set()

    async def put(self, key: BlobKey, data: bytes, *, content_type: str) -> None:
        self._hidden.discard(key)
        await self.inner.put(key, data, content_type=content_type)

    async def get(self, key: BlobKey, *, offset: int = 0, length: int | None = None) -> bytes:
        if key in self._hidden:
            raise BlobNotFound(key)
        return await self.inner.get(key, offset=offset, length=length)

    async def stat(self, key: BlobKey) -> BlobInfo | None:
        return None if key in self._hidden else await self.inner.stat(key)

    async def delete(self, key: BlobKey) -> bool:
        if key in self._hidden or await self.inner.stat(key) is None:
            return False
        self._hidden.add(key)
        return True


class InPlaceWrite(ForwardingBlobs):
    """Overwrites a blob in two steps, the first half new and the rest old in between.

    A reader that comes while the write is half done reads the mix: the mutant waits
    for one whole read of that state before finishing, so the torn read happens on
    every run instead of on an unlucky schedule.
    """

    def __init__(self, inner: BlobStore) -> None:
        super().__init__(inner)
        self._read_done = asyncio.Event()

    async def get(self, key: BlobKey, *, offset: int = 0, length: int | None = None) -> bytes:
        data = await self.inner.get(key, offset=offset, length=length)
        self._read_done.set()
        return data

    async def put(self, key: BlobKey, data: bytes, *, content_type: str) -> None:
        old = await self.inner.get(key) if await self.inner.stat(key) is not None else b""
        half = len(data) // 2
        await self.inner.put(key, data[:half] + old[half : len(data)], content_type=content_type)
        self._read_done.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._read_done.wait(), 5.0)
        await self.inner.put(key, data, content_type=content_type)


class RunBlobsByPrefix(ForwardingBlobs):
    """Deletes a Run's blobs by matching the run id as a prefix of other run ids."""

    def __init__(self, inner: BlobStore) -> None:
        super().__init__(inner)
        self._keys: set[BlobKey] = set()

    async def put(self, key: BlobKey, data: bytes, *, content_type: str) -> None:
        self._keys.add(key)
        await self.inner.put(key, data, content_type=content_type)

    async def delete_run_blobs(self, tenant: str, run_id: RunId) -> int:
        gone = 0
        for key in sorted(self._keys, key=str):
            if key.tenant == tenant and key.run_id.startswith(run_id):
                gone += int(await self.inner.delete(key))
                self._keys.discard(key)
        return gone


@dataclass(frozen=True)
class BlobMutant:
    """One broken behaviour and the cases that must catch it, on both bases."""

    name: str
    caught_by: tuple[str, ...]
    wrapper: type[ForwardingBlobs]

    def build(self, base: str, folder: Path) -> BlobStore:
        inner: BlobStore = InMemoryBlobStore() if base == "memory" else FileBlobStore(folder)
        return self.wrapper(inner)


BLOB_MUTANTS: tuple[BlobMutant, ...] = (
    BlobMutant(
        "case-insensitive-keys",
        ("test_awkward_key_parts_stay_isolated", MODEL_CASE),
        CaseInsensitiveKeys,
    ),
    BlobMutant(
        "naively-joined-keys",
        ("test_awkward_key_parts_stay_isolated", MODEL_CASE),
        NaivelyJoinedKeys,
    ),
    BlobMutant(
        "window-one-too-long",
        ("test_windowed_get_returns_exact_slices", MODEL_CASE),
        WindowOneTooLong,
    ),
    BlobMutant(
        "length-ignored", ("test_windowed_get_returns_exact_slices", MODEL_CASE), LengthIgnored
    ),
    BlobMutant(
        "content-type-parameters-dropped",
        ("test_content_type_is_kept_verbatim", MODEL_CASE),
        ContentTypeParametersDropped,
    ),
    BlobMutant(
        "delete-always-true",
        ("test_delete_of_a_missing_blob_is_false", MODEL_CASE),
        DeleteAlwaysTrue,
    ),
    BlobMutant(
        "first-write-wins",
        ("test_overwrite_replaces_bytes_and_content_type", MODEL_CASE),
        FirstWriteWins,
    ),
)

BLOB_MUTANTS += (
    BlobMutant(
        "delete-only-hides",
        ("test_raw_storage_shows_a_blob_and_loses_it_on_delete",),
        DeleteOnlyHides,
    ),
    BlobMutant("in-place-write", ("test_reads_during_overwrites_are_never_torn",), InPlaceWrite),
    BlobMutant(
        "run-blobs-by-prefix",
        ("test_run_blobs_are_deleted_together_and_only_theirs",),
        RunBlobsByPrefix,
    ),
)

BLOB_CONTROL = BlobMutant(
    "control",
    tuple(sorted({case for mutant in BLOB_MUTANTS for case in mutant.caught_by})),
    ForwardingBlobs,
)


def blob_mutant(name: str) -> BlobMutant:
    """The blob mutant called ``name`` (or the fault-free ``control``)."""
    for mutant in (*BLOB_MUTANTS, BLOB_CONTROL):
        if mutant.name == name:
            return mutant
    raise KeyError(name)


__all__ = ["BLOB_CONTROL", "BLOB_MUTANTS", "BlobMutant", "ForwardingBlobs", "blob_mutant"]
