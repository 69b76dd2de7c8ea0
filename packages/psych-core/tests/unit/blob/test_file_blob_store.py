"""The directory-backed BlobStore: the shared suite, plus what only a filesystem can get wrong."""

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from hypothesis import given
from hypothesis import strategies as st

from psych_contract import BlobStoreContract
from psych_contract.blob import AWKWARD_PARTS
from psych_contract.lifecycle import closing
from psych_runtime.blob.filesystem import FileBlobStore
from psych_runtime.blob.filesystem import encode_segment
from psych_runtime.blob.port import BlobKey
from psych_runtime.blob.port import BlobNotFound
from psych_runtime.blob.port import BlobStore
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import ToolCallId


class TestFileBlobStore(BlobStoreContract):
    @pytest_asyncio.fixture
    async def blob_store(self, tmp_path: Path) -> AsyncIterator[FileBlobStore]:
        async with closing(FileBlobStore(tmp_path / "blobs")) as blobs:
            yield blobs

    @pytest_asyncio.fixture
    async def peer_blob_store(self, blob_store: BlobStore) -> AsyncIterator[FileBlobStore]:
        # Another instance on the same root: another process, as far as files can tell.
        assert isinstance(blob_store, FileBlobStore)
        async with closing(FileBlobStore(blob_store.root)) as peer:
            yield peer


def _files(root: Path) -> list[Path]:
    return sorted(path for path in root.rglob("*") if path.is_file())


async def test_awkward_keys_never_write_outside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "inner" / "blobs"
    blobs = FileBlobStore(root)
    for index, part in enumerate(AWKWARD_PARTS):
        key = BlobKey(part, RunId(part), ToolCallId(part))
        await blobs.put(key, b"%d" % index, content_type="x/y")
    _assert_only_inside(tmp_path, root, expected_files=2 * len(AWKWARD_PARTS))


def _assert_only_inside(tmp_path: Path, root: Path, *, expected_files: int) -> None:
    # Nothing appeared beside the root or above it, and everything inside is ours.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["inner"]
    assert sorted(p.name for p in (tmp_path / "inner").iterdir()) == ["blobs"]
    written = _files(root)
    assert len(written) == expected_files
    for path in written:
        assert path.resolve().is_relative_to(root.resolve())
        assert path.suffix in {".blob", ".type"}


async def test_one_file_per_blob_plus_its_content_type(tmp_path: Path) -> None:
    blobs = FileBlobStore(tmp_path)
    key = BlobKey("acme", RunId("run-1"), ToolCallId("call-1"))
    await blobs.put(key, b"payload", content_type="application/json")
    assert [p.relative_to(tmp_path).as_posix() for p in _files(tmp_path)] == [
        "acme/run-1/call-1.blob",
        "acme/run-1/call-1.type",
    ]
    assert (tmp_path / "acme/run-1/call-1.blob").read_bytes() == b"payload"
    assert (tmp_path / "acme/run-1/call-1.type").read_text() == "application/json"


async def test_writes_leave_no_temporary_files(tmp_path: Path) -> None:
    blobs = FileBlobStore(tmp_path)
    key = BlobKey("acme", RunId("r"), ToolCallId("c"))
    for size in (10, 1000, 5):
        await blobs.put(key, b"x" * size, content_type="text/plain")
    assert [p.name for p in _files(tmp_path)] == ["c.blob", "c.type"]


async def test_a_failed_write_keeps_the_previous_blob_and_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blobs = FileBlobStore(tmp_path)
    key = BlobKey("acme", RunId("r"), ToolCallId("c"))
    await blobs.put(key, b"old", content_type="text/plain")

    def broken_replace(source: str, target: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        await blobs.put(key, b"new and longer", content_type="text/plain")
    monkeypatch.undo()
    assert await blobs.get(key) == b"old"
    assert [p.name for p in _files(tmp_path)] == ["c.blob", "c.type"]


async def test_a_relative_root_is_fixed_when_the_store_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    blobs = FileBlobStore("relative")
    assert blobs.root == tmp_path / "relative"
    monkeypatch.chdir("/")
    key = BlobKey("t", RunId("r"), ToolCallId("c"))
    await blobs.put(key, b"here", content_type="text/plain")
    assert (tmp_path / "relative/t/r/c.blob").read_bytes() == b"here"


async def test_a_blob_missing_its_content_type_file_still_reads(tmp_path: Path) -> None:
    # Only a delete racing a stat can produce this; the bytes must not become unreadable.
    blobs = FileBlobStore(tmp_path)
    key = BlobKey("t", RunId("r"), ToolCallId("c"))
    await blobs.put(key, b"bytes", content_type="text/plain")
    (tmp_path / "t/r/c.type").unlink()
    info = await blobs.stat(key)
    assert info is not None and info.size == 5
    assert info.content_type == "application/octet-stream"
    assert await blobs.get(key) == b"bytes"


async def test_reading_a_window_of_a_missing_blob_is_blob_not_found(tmp_path: Path) -> None:
    blobs = FileBlobStore(tmp_path)
    with pytest.raises(BlobNotFound):
        await blobs.get(BlobKey("t", RunId("r"), ToolCallId("c")), offset=3, length=2)


@given(st.text(min_size=1, max_size=300), st.text(min_size=1, max_size=300))
def test_distinct_parts_never_share_a_file_name_even_ignoring_case(first: str, second: str) -> None:
    if first != second:
        assert encode_segment(first).casefold() != encode_segment(second).casefold()


@given(st.text(min_size=1, max_size=600))
def test_a_segment_is_one_short_safe_file_name(part: str) -> None:
    segment = encode_segment(part)
    assert segment not in {".", ".."}
    assert "/" not in segment and "\\" not in segment and "\x00" not in segment
    assert not segment.startswith(".")
    assert len(segment.encode()) <= 200


def test_long_parts_that_share_a_prefix_stay_distinct() -> None:
    first = "x" * 300 + "a"
    second = "x" * 300 + "b"
    assert encode_segment(first) != encode_segment(second)
    assert encode_segment(first).startswith("x" * 100 + "~")
