"""The BlobStore conformance suite.

Subclass ``BlobStoreContract`` in your adapter's tests and override the ``blob_store``
fixture so it yields a ready store (and closes it afterwards). Every case below then
runs against your adapter; a case's docstring says what it protects and where to look
when it fails.

Only the public port is used: ``psych_runtime.blob.port``. Run ids are unique per case
(and per session), so a backend that keeps objects between runs, such as a shared
bucket, does not have to be emptied first.
"""

import asyncio
import random
import uuid
from collections.abc import AsyncIterator
from typing import ClassVar

import pytest
import pytest_asyncio

from psych_contract import _data as data
from psych_contract._overrides import Suite
from psych_contract._overrides import must_override
from psych_contract._overrides import overridden_without_xfail
from psych_contract._overrides import raw_items
from psych_contract.blob_reference import check_blob_store_against_reference
from psych_runtime import RunId
from psych_runtime.adapters.blob import BlobInfo
from psych_runtime.adapters.blob import BlobKey
from psych_runtime.adapters.blob import BlobNotFound
from psych_runtime.adapters.blob import BlobStore
from psych_runtime.adapters.blob import RunBlobDeletion
from psych_runtime.adapters.store import mentions
from psych_runtime.records import ToolCallId

JSON = "application/json"
TEXT = "text/plain; charset=utf-8"
BINARY = "application/octet-stream"

AWKWARD_PARTS: tuple[str, ...] = (
    "plain",
    "a/b",
    "a%2Fb",
    "..",
    ".",
    "../..",
    "../escape",
    "x/../y",
    "Acme",
    "acme",
    "ACME",
    "ünïcødé",
    "租户",
    "emoji 🚀",
    "with space",
    "tab\tand\nnewline",
    "back\\slash",
    "~home",
    "con",
    "semi;colon:and?query#frag",
    "t" * 256,
    "%",
    "_",
    "*",
    "?",
    "acm%",
    "acm_",
    "acme ",
    "\u0430cme",
    "acme\u200b",
)
"""Key parts that break a naive mapping to paths or object names.

Each must address its own blob: slashes and ``..`` must not climb or merge levels,
percent signs must not alias the escaped form of another part, case must matter even
on a case-insensitive filesystem, and long parts must not collide when shortened.
"""


def _key(tenant: str, label: str, call: str = "call-1") -> BlobKey:
    return BlobKey(tenant, data.new_run_id(label), ToolCallId(call))


def _bytes(size: int, seed: int) -> bytes:
    """Reproducible bytes with no repeating period a chunking bug could hide behind."""
    return random.Random(seed).randbytes(size)


class BlobStoreContract(Suite):
    """Conformance cases every BlobStore adapter must pass.

    Capability flags (override as class attributes in your subclass):

    Attributes:
        concurrency: how many concurrent writers the contention cases start.
        single_process: the blobs live in this process only (the in-memory store), so
            there is no second instance. Every other blob store overrides
            ``peer_blob_store``.
        model_examples: random call sequences the model-based case tries.
        model_steps: the most calls in one such sequence.
        large_blob_bytes: size of the large round-trip case. Lower it only when the
            backend truly cannot hold an object that big: the runtime offloads tool
            results of any size, and a cap here is a cap on what a tool may return.
    """

    __test__: ClassVar[bool] = False

    concurrency: ClassVar[int] = 12
    single_process: ClassVar[bool] = False
    large_blob_bytes: ClassVar[int] = 6 * 1024 * 1024
    model_examples: ClassVar[int] = 40
    model_steps: ClassVar[int] = 25

    @pytest_asyncio.fixture
    async def blob_store(self) -> AsyncIterator[BlobStore]:
        """Override: yield a ready blob store, and close it after the test."""
        yield must_override("override the `blob_store` fixture in your BlobStoreContract subclass")

    @pytest_asyncio.fixture
    async def peer_blob_store(self, blob_store: BlobStore) -> AsyncIterator[BlobStore]:
        """Override: a second instance on the same backend as ``blob_store``.

        Only a store that declares ``single_process = True`` may leave it out.
        """
        if self.single_process:
            pytest.skip("the adapter declares single_process = True: no second instance")
        yield must_override(
            "override `peer_blob_store` to yield a second instance on the same backend, "
            "or declare single_process = True if the store cannot have one"
        )

    @pytest.fixture
    def blob_readers(
        self, blob_store: BlobStore, request: pytest.FixtureRequest
    ) -> list[BlobStore]:
        """The instances readers run on: ``blob_store``, and its peer unless single process."""
        stores = [blob_store]
        if not self.single_process:
            stores.append(request.getfixturevalue("peer_blob_store"))
        return stores

    # --- the suite itself --------------------------------------------------------------

    async def test_random_call_sequences_match_the_reference_model(
        self, blob_store: BlobStore
    ) -> None:
        """Random puts, gets, stats and deletes agree with ``ReferenceBlobStore``.

        Keys are drawn so that a careless mapping to paths or object names collides
        (case, slashes, percent signs, parts that join alike). A failure prints the
        shortest sequence of calls that disagreed.
        """
        await check_blob_store_against_reference(
            blob_store, examples=self.model_examples, steps=self.model_steps
        )

    async def test_overridden_cases_are_marked_xfail(self) -> None:
        """A subclass may override a case only to mark it ``xfail(reason=...)``.

        If this fails, one of your overrides silently replaced a standard case. Keep the
        case as it is, or decorate your override with ``pytest.mark.xfail(reason=...)``
        and explain why the adapter cannot meet it.
        """
        offenders = overridden_without_xfail(BlobStoreContract, type(self))
        assert offenders == [], f"overridden without xfail(reason=...): {offenders}"

    async def test_blob_store_satisfies_the_protocol(self, blob_store: BlobStore) -> None:
        """The adapter has every method of ``psych_runtime.blob.port.BlobStore``.

        Compare your class with the protocol by hand: ``put``, ``get``, ``stat``,
        ``delete`` and ``close``, all ``async``.
        """
        assert isinstance(blob_store, BlobStore)

    # --- round trips -------------------------------------------------------------------

    async def test_binary_round_trip(self, blob_store: BlobStore) -> None:
        """Every byte value, NUL and invalid UTF-8 included, reads back unchanged.

        A failure usually means the adapter decodes or encodes text somewhere (a
        ``str`` column, a text-mode file, a JSON body) instead of storing raw bytes.
        """
        key = _key("tenant-a", "binary")
        payload = bytes(range(256)) * 3 + b"\x00\xff\xfe\x80"
        await blob_store.put(key, payload, content_type=BINARY)
        assert await blob_store.get(key) == payload

    async def test_empty_blob_round_trip(self, blob_store: BlobStore) -> None:
        """A zero-byte blob exists: it reads back as ``b""`` and stats with size 0.

        A failure means the adapter treats "no bytes" as "no blob" (a missing file and
        an empty one are not the same thing).
        """
        key = _key("tenant-a", "empty")
        await blob_store.put(key, b"", content_type=TEXT)
        assert await blob_store.get(key) == b""
        assert await blob_store.stat(key) == BlobInfo(key=key, size=0, content_type=TEXT)

    async def test_large_round_trip(self, blob_store: BlobStore) -> None:
        """A multi-megabyte blob (6 MiB by default) reads back byte for byte.

        Look for a single-request size limit, a multipart upload that drops or reorders
        a part, or a read that returns only its first chunk.
        """
        key = _key("tenant-a", "large")
        payload = _bytes(self.large_blob_bytes, seed=1)
        await blob_store.put(key, payload, content_type=BINARY)
        read = await blob_store.get(key)
        assert len(read) == len(payload)
        assert read == payload
        info = await blob_store.stat(key)
        assert info is not None and info.size == len(payload)

    async def test_content_type_is_kept_verbatim(self, blob_store: BlobStore) -> None:
        """The content type reads back exactly as written, parameters and case included.

        The runtime decodes an offloaded result by its content type; a store that
        normalises ``text/plain; charset=utf-8`` breaks that lookup.
        """
        for index, content_type in enumerate((JSON, TEXT, BINARY, "Text/X-Custom; a=B")):
            key = _key("tenant-a", f"ctype-{index}")
            await blob_store.put(key, b"{}", content_type=content_type)
            info = await blob_store.stat(key)
            assert info is not None and info.content_type == content_type

    # --- windows -----------------------------------------------------------------------

    async def test_windowed_get_returns_exact_slices(self, blob_store: BlobStore) -> None:
        """``get(offset=, length=)`` equals slicing the whole blob, at every edge.

        Covers a window inside, at the start, at the end, overlapping the end, starting
        exactly at the end and starting past it (both empty), and a zero length. An
        off-by-one usually means an inclusive range header (``bytes=a-b``) was built
        from ``offset + length`` instead of ``offset + length - 1``.
        """
        key = _key("tenant-a", "window")
        payload = _bytes(10_000, seed=2)
        await blob_store.put(key, payload, content_type=BINARY)
        size = len(payload)
        cases = [
            (0, None),
            (0, 1),
            (1, 10),
            (4_321, 1_000),
            (size - 5, 5),
            (size - 5, 50),
            (size - 1, None),
            (size, None),
            (size, 10),
            (size + 100, None),
            (size + 100, 7),
            (123, 0),
            (0, size),
            (0, size * 2),
        ]
        for offset, length in cases:
            got = await blob_store.get(key, offset=offset, length=length)
            end = size if length is None else offset + length
            assert got == payload[offset:end], f"window offset={offset} length={length}"

    async def test_negative_windows_are_refused(self, blob_store: BlobStore) -> None:
        """A negative offset or length raises ``ValueError`` instead of reading something.

        Python slicing would quietly read from the end; a range header would be
        malformed. Check the arguments before talking to the backend.
        """
        key = _key("tenant-a", "negative")
        await blob_store.put(key, b"abcdef", content_type=BINARY)
        with pytest.raises(ValueError):
            await blob_store.get(key, offset=-1)
        with pytest.raises(ValueError):
            await blob_store.get(key, offset=0, length=-1)

    # --- stat, delete, overwrite, missing ----------------------------------------------

    async def test_stat_reports_size_and_content_type(self, blob_store: BlobStore) -> None:
        """``stat`` gives the key, the size in bytes and the content type, without the body.

        A wrong size often comes from measuring a text encoding of the bytes.
        """
        key = _key("tenant-a", "stat")
        payload = "héllo wörld".encode()
        await blob_store.put(key, payload, content_type=TEXT)
        assert await blob_store.stat(key) == BlobInfo(key=key, size=len(payload), content_type=TEXT)

    async def test_stat_of_a_missing_blob_is_none(self, blob_store: BlobStore) -> None:
        """``stat`` answers None for a key never written; it does not raise."""
        assert await blob_store.stat(_key("tenant-a", "never")) is None

    async def test_get_of_a_missing_blob_raises_blob_not_found(self, blob_store: BlobStore) -> None:
        """``get`` of a key never written raises ``BlobNotFound`` carrying that key.

        Translate the backend's own "no such key" error (``FileNotFoundError``, a 404,
        ``NoSuchKey``) into ``BlobNotFound``; let other errors through unchanged.
        """
        key = _key("tenant-a", "missing")
        with pytest.raises(BlobNotFound) as caught:
            await blob_store.get(key)
        assert caught.value.key == key
        with pytest.raises(BlobNotFound):
            await blob_store.get(key, offset=10, length=5)

    async def test_delete_removes_and_reports_whether_it_did(self, blob_store: BlobStore) -> None:
        """``delete`` answers True once, then False; afterwards the blob is gone.

        A second True means the adapter does not check for existence; a blob that
        still reads back means the delete went to another key than ``put`` used.
        """
        key = _key("tenant-a", "delete")
        await blob_store.put(key, b"gone soon", content_type=TEXT)
        assert await blob_store.delete(key) is True
        assert await blob_store.delete(key) is False
        assert await blob_store.stat(key) is None
        with pytest.raises(BlobNotFound):
            await blob_store.get(key)

    async def test_delete_of_a_missing_blob_is_false(self, blob_store: BlobStore) -> None:
        """Deleting a key never written answers False and raises nothing."""
        assert await blob_store.delete(_key("tenant-a", "never-written")) is False

    async def test_a_deleted_key_can_be_written_again(self, blob_store: BlobStore) -> None:
        """After a delete, a new ``put`` under the same key is readable as usual."""
        key = _key("tenant-a", "rewrite")
        await blob_store.put(key, b"first", content_type=TEXT)
        await blob_store.delete(key)
        await blob_store.put(key, b"second", content_type=JSON)
        assert await blob_store.get(key) == b"second"
        assert await blob_store.stat(key) == BlobInfo(key=key, size=6, content_type=JSON)

    async def test_overwrite_replaces_bytes_and_content_type(self, blob_store: BlobStore) -> None:
        """A second ``put`` replaces the whole blob: no stale tail, new content type.

        Writing a shorter blob over a longer one must not leave the old bytes after
        it (a write without truncation), and ``stat`` must report the new size and type.
        """
        key = _key("tenant-a", "overwrite")
        await blob_store.put(key, b"a much longer first version", content_type=TEXT)
        await blob_store.put(key, b"short", content_type=JSON)
        assert await blob_store.get(key) == b"short"
        assert await blob_store.stat(key) == BlobInfo(key=key, size=5, content_type=JSON)

    # --- below the port ----------------------------------------------------------------

    async def test_raw_storage_shows_a_blob_and_loses_it_on_delete(
        self, blob_store: BlobStore
    ) -> None:
        """``raw_storage()`` holds a written blob's bytes, and none of them after ``delete``.

        Every BlobStore implements ``psych_runtime.adapters.RawStorage``. A delete that
        only hides the blob (a marker, a kept older version, a renamed file) fails
        here; so does a raw view that shows nothing at all.
        """
        key = _key("tenant-a", "raw")
        marker = f"raw-blob-{uuid.uuid4().hex}"
        kept = f"kept-blob-{uuid.uuid4().hex}"
        other = _key("tenant-a", "raw-kept")
        await blob_store.put(key, f"first {marker}".encode(), content_type=TEXT)
        await blob_store.put(key, f"second {marker}".encode(), content_type=TEXT)
        await blob_store.put(other, kept.encode(), content_type=TEXT)
        assert mentions(await raw_items(blob_store, "BlobStore"), [marker]), (
            "a stored blob is not raw"
        )
        assert await blob_store.delete(key) is True
        items = await raw_items(blob_store, "BlobStore")
        assert mentions(items, [marker]) == [], "a deleted blob's bytes are still stored"
        assert mentions(items, [kept]), "deleting one blob took another's bytes too"

    async def test_run_blobs_are_deleted_together_and_only_theirs(
        self, blob_store: BlobStore
    ) -> None:
        """``delete_run_blobs`` deletes every blob of one Run of one tenant, and no other.

        Every BlobStore implements ``psych_runtime.adapters.RunBlobDeletion``: retention
        deletes a Run's blobs, including any no log names. Another tenant's blobs of the
        same run id, and a Run whose id merely starts the same, stay.
        """
        assert isinstance(blob_store, RunBlobDeletion), (
            f"{type(blob_store).__name__} does not implement delete_run_blobs"
        )
        run = data.new_run_id("doomed")
        doomed = [BlobKey("tenant-a", run, ToolCallId(c)) for c in ("c1", "c2.stdout", "c/3")]
        kept = [
            BlobKey("tenant-b", run, ToolCallId("c1")),
            BlobKey("Tenant-A", run, ToolCallId("c1")),
            BlobKey("tenant-a", RunId(f"{run}0"), ToolCallId("c1")),
            BlobKey("tenant-a", RunId(f"{run}/x"), ToolCallId("c1")),
        ]
        for key in (*doomed, *kept):
            await blob_store.put(key, repr(key).encode(), content_type=TEXT)
        assert await blob_store.delete_run_blobs("tenant-a", run) == len(doomed)
        for key in doomed:
            assert await blob_store.stat(key) is None, key
        for key in kept:
            assert await blob_store.get(key) == repr(key).encode(), key
        assert await blob_store.delete_run_blobs("tenant-a", run) == 0

    # --- second instances and readers during writes -----------------------------------

    async def test_a_second_instance_sees_writes_and_deletes(
        self, blob_store: BlobStore, peer_blob_store: BlobStore
    ) -> None:
        """What one instance puts, overwrites or deletes, another on the backend sees at once."""
        key = _key("tenant-a", "shared")
        await blob_store.put(key, b"first", content_type=TEXT)
        assert await peer_blob_store.get(key) == b"first"
        await peer_blob_store.put(key, b"second, longer", content_type=JSON)
        assert await blob_store.get(key) == b"second, longer"
        assert await blob_store.stat(key) == BlobInfo(key=key, size=14, content_type=JSON)
        assert await peer_blob_store.delete(key) is True
        assert await blob_store.stat(key) is None

    async def test_reads_during_overwrites_are_never_torn(
        self, blob_store: BlobStore, blob_readers: list[BlobStore]
    ) -> None:
        """Readers running while a blob is overwritten get one whole version, never a mix.

        Readers on this instance (and on ``peer_blob_store`` unless the store is single
        process) read in a loop while the key is overwritten again and again. Write to
        a temporary object and move or commit it into place, never in place.
        """
        readers = blob_readers
        key = _key("tenant-a", "torn")
        versions = [bytes([index]) * 100_000 for index in range(1, 9)]
        await blob_store.put(key, versions[0], content_type=BINARY)
        done = asyncio.Event()
        seen: list[bytes] = []

        async def read_until_done(store: BlobStore) -> None:
            while not done.is_set():
                seen.append(await store.get(key))
                await asyncio.sleep(0)

        tasks = [asyncio.create_task(read_until_done(store)) for store in readers for _ in (0, 1)]
        try:
            for version in versions[1:]:
                await blob_store.put(key, version, content_type=BINARY)
                await asyncio.sleep(0)
        finally:
            done.set()
            await asyncio.gather(*tasks)
        torn = [len(blob) for blob in seen if blob not in versions]
        assert not torn, f"{len(torn)} of {len(seen)} reads were a mix of versions"
        assert seen, "no read ran"

    # --- isolation ---------------------------------------------------------------------

    async def test_tenants_are_isolated(self, blob_store: BlobStore) -> None:
        """The same run and call ids under two tenants are two separate blobs.

        If one tenant reads the other's bytes, the tenant is missing from the object
        name or path. Deleting one must leave the other in place.
        """
        run = data.new_run_id("shared")
        call = ToolCallId("call-1")
        first = BlobKey("tenant-a", run, call)
        second = BlobKey("tenant-b", run, call)
        await blob_store.put(first, b"belongs to a", content_type=TEXT)
        await blob_store.put(second, b"belongs to b", content_type=JSON)
        assert await blob_store.get(first) == b"belongs to a"
        assert await blob_store.get(second) == b"belongs to b"
        assert await blob_store.delete(first) is True
        assert await blob_store.get(second) == b"belongs to b"
        assert await blob_store.stat(first) is None

    async def test_awkward_key_parts_stay_isolated(self, blob_store: BlobStore) -> None:
        """Slashes, ``..``, percent escapes, case, unicode and long parts never alias.

        Each awkward string is used in turn as the tenant, the run id and the call id,
        and every resulting key gets its own bytes; all must read back as written. A
        failure names the key that read someone else's bytes: look for a path join or
        object name built from the raw part instead of an escaped one, a
        case-insensitive filesystem, or a shortening of long names without a digest.
        """
        run = data.new_run_id("awkward")
        keys: list[BlobKey] = []
        for part in AWKWARD_PARTS:
            keys.append(BlobKey(part, run, ToolCallId("call")))
            keys.append(BlobKey("tenant-a", data.new_run_id(part), ToolCallId("call")))
            keys.append(BlobKey("tenant-a", run, ToolCallId(part)))
        # Two keys a naive "/".join(parts) would map to the same name: a/b/<run>/d.
        keys.append(BlobKey("a", RunId(f"b/{run}"), ToolCallId("d")))
        keys.append(BlobKey("a/b", run, ToolCallId("d")))
        payloads = {key: f"blob {index} for {key!r}".encode() for index, key in enumerate(keys)}
        for key, payload in payloads.items():
            await blob_store.put(key, payload, content_type=TEXT)
        for key, payload in payloads.items():
            assert await blob_store.get(key) == payload, f"{key!r} read another key's bytes"
            info = await blob_store.stat(key)
            assert info is not None and info.size == len(payload), repr(key)
        for key in keys:
            assert await blob_store.delete(key) is True, f"{key!r} was already gone"

    # --- concurrency -------------------------------------------------------------------

    async def test_concurrent_puts_of_distinct_keys_all_land(self, blob_store: BlobStore) -> None:
        """Many writers at once, each to its own key under one run: every blob lands.

        A lost blob suggests a shared temporary name, or a directory created and
        removed by racing writers.
        """
        run = data.new_run_id("fan-out")
        keys = [BlobKey("tenant-a", run, ToolCallId(f"call-{i}")) for i in range(self.concurrency)]
        payloads = [_bytes(50_000 + i, seed=100 + i) for i in range(self.concurrency)]
        await asyncio.gather(
            *(
                blob_store.put(key, payload, content_type=BINARY)
                for key, payload in zip(keys, payloads, strict=True)
            )
        )
        for key, payload in zip(keys, payloads, strict=True):
            assert await blob_store.get(key) == payload

    async def test_concurrent_puts_of_one_key_leave_one_whole_blob(
        self, blob_store: BlobStore
    ) -> None:
        """Racing writers of the same key leave exactly one writer's bytes, never a mix.

        A torn result means the write is not atomic: write to a temporary object and
        rename or commit it, rather than writing in place.
        """
        key = _key("tenant-a", "race")
        payloads = [_bytes(200_000, seed=200 + i) for i in range(self.concurrency)]
        await asyncio.gather(
            *(blob_store.put(key, payload, content_type=BINARY) for payload in payloads)
        )
        assert await blob_store.get(key) in payloads
        info = await blob_store.stat(key)
        assert info is not None and info.size == 200_000


__all__ = ["AWKWARD_PARTS", "BlobStoreContract"]
