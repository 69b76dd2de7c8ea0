"""A BlobStore on a local (or mounted) directory.

Layout: ``<root>/<tenant>/<run>/<call>.blob`` holds the bytes and ``<call>.type`` next to
it holds the content type. Each path segment is an encoding of the key part that keeps
only lower-case letters, digits, ``-`` and ``_`` and writes every other character as
``%XX`` escapes of its UTF-8 bytes. That encoding is what keeps tenants apart:

* no segment can be ``.``, ``..`` or contain a separator, so no key can climb out of
  its tenant's directory (and the resolved path is checked against the root anyway);
* upper-case letters are escaped too, so ``Acme`` and ``acme`` stay two directories on
  a case-insensitive filesystem;
* a segment too long for a file name is shortened and suffixed with a SHA-256 of the
  original, so long keys still map to distinct files.

Writes go to a temporary file in the same directory and are moved into place with
``os.replace``, so a reader sees the old blob or the new one, never a torn mix. The
content type is written before the bytes, making the ``.blob`` file the commit point:
a blob whose bytes are visible always has its content type beside it. Every filesystem
call runs in a worker thread so a slow disk does not stall the event loop other Runs
share. A crash mid-write can leave a ``.tmp-*`` file behind; it is never read.
"""

import asyncio
import contextlib
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from psych_runtime.blob.checks import check_content_type
from psych_runtime.blob.checks import check_window
from psych_runtime.blob.checks import coerce_bytes
from psych_runtime.blob.port import BlobInfo
from psych_runtime.blob.port import BlobKey
from psych_runtime.blob.port import BlobNotFound
from psych_runtime.blob.port import InvalidBlobKey
from psych_runtime.core.ids import RunId
from psych_runtime.core.raw import RawItem

_KEPT = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
_MAX_SEGMENT = 200
"""Longest encoded segment kept verbatim; file names are limited to 255 bytes."""
_SHORTENED_PREFIX = 100
_DATA_SUFFIX = ".blob"
_TYPE_SUFFIX = ".type"
_TEMP_PREFIX = ".tmp-"
_FALLBACK_TYPE = "application/octet-stream"


def encode_segment(part: str) -> str:
    """The file name one key part is stored under: safe on every filesystem, case included.

    Distinct parts always give distinct segments: kept characters map to themselves,
    everything else to ``%XX`` escapes (and ``%`` itself is escaped), and a shortened
    segment carries a digest of the whole part after a ``~`` that no verbatim segment
    can contain.
    """
    pieces: list[str] = []
    for char in part:
        if char in _KEPT:
            pieces.append(char)
        else:
            pieces.extend(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
    encoded = "".join(pieces)
    if len(encoded) <= _MAX_SEGMENT:
        return encoded
    digest = hashlib.sha256(part.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{encoded[:_SHORTENED_PREFIX]}~{digest}"


class FileBlobStore:
    """A BlobStore that keeps one file per blob under a root directory.

    Opened by URL as ``file:///absolute/dir`` through ``open_blob_store``. The root is
    created on the first write. Several processes may share one root: writes are atomic
    renames, so concurrent writers of one key leave exactly one complete blob.

    Args:
        root: the directory that holds every tenant's blobs. A relative path is made
            absolute against the current directory once, here.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._root = Path(os.path.abspath(root))

    @property
    def root(self) -> Path:
        """The directory every blob lives under."""
        return self._root

    # --- the port --------------------------------------------------------------------

    async def put(self, key: BlobKey, data: bytes, *, content_type: str) -> None:
        """Write ``data`` under ``key`` atomically, replacing any earlier blob."""
        check_content_type(content_type)
        payload = coerce_bytes(data)
        await asyncio.to_thread(self._put, key, payload, content_type)

    async def get(self, key: BlobKey, *, offset: int = 0, length: int | None = None) -> bytes:
        """Read the blob, or the window ``[offset, offset + length)`` of it.

        Raises:
            BlobNotFound: nothing is stored under ``key``.
            ValueError: ``offset`` or ``length`` is negative.
        """
        check_window(offset, length)
        return await asyncio.to_thread(self._get, key, offset, length)

    async def stat(self, key: BlobKey) -> BlobInfo | None:
        """Size and content type without reading the bytes; None when absent."""
        return await asyncio.to_thread(self._stat, key)

    async def delete(self, key: BlobKey) -> bool:
        """Remove the blob and its content type; False when there was none."""
        return await asyncio.to_thread(self._delete, key)

    async def delete_run_blobs(self, tenant: str, run_id: RunId) -> int:
        """Delete the Run's directory of blobs; returns how many blobs it held."""
        return await asyncio.to_thread(self._delete_run, tenant, run_id)

    async def raw_storage(self) -> list[RawItem]:
        """See ``RawStorage.raw_storage``: every file under the root, temporary ones too."""
        return await asyncio.to_thread(self._raw)

    async def close(self) -> None:
        """Nothing to release: every call opens and closes its own files."""

    def __repr__(self) -> str:
        return f"FileBlobStore({str(self._root)!r})"

    # --- blocking halves, run in a worker thread --------------------------------------

    def _delete_run(self, tenant: str, run_id: RunId) -> int:
        if not tenant or not run_id:
            raise InvalidBlobKey("a Run's blobs are named by a non-empty tenant and run id")
        folder = self._root / encode_segment(tenant) / encode_segment(run_id)
        if not folder.is_dir():
            return 0
        count = sum(1 for path in folder.iterdir() if path.name.endswith(_DATA_SUFFIX))
        shutil.rmtree(folder)
        return count

    def _raw(self) -> list[RawItem]:
        if not self._root.exists():
            return []
        return [
            RawItem(f"file {path.relative_to(self._root)}", path.read_bytes())
            for path in sorted(self._root.rglob("*"))
            if path.is_file()
        ]

    def _paths(self, key: BlobKey) -> tuple[Path, Path]:
        folder = self._root / encode_segment(key.tenant) / encode_segment(key.run_id)
        name = encode_segment(key.call_id)
        data = folder / f"{name}{_DATA_SUFFIX}"
        # The encoding already rules out escaping the root; this check keeps that true
        # even if the encoding is changed one day, or the tree holds a stray symlink.
        if not data.resolve().is_relative_to(self._root.resolve()):
            raise InvalidBlobKey(f"blob key {key} resolves outside the store's root")
        return data, folder / f"{name}{_TYPE_SUFFIX}"

    def _put(self, key: BlobKey, data: bytes, content_type: str) -> None:
        data_path, type_path = self._paths(key)
        data_path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(type_path, content_type.encode("utf-8"))
        _write_atomically(data_path, data)

    def _get(self, key: BlobKey, offset: int, length: int | None) -> bytes:
        data_path, _ = self._paths(key)
        try:
            with data_path.open("rb") as handle:
                handle.seek(offset)
                return handle.read(-1 if length is None else length)
        except FileNotFoundError:
            raise BlobNotFound(key) from None

    def _stat(self, key: BlobKey) -> BlobInfo | None:
        data_path, type_path = self._paths(key)
        try:
            size = data_path.stat().st_size
        except FileNotFoundError:
            return None
        try:
            content_type = type_path.read_text("utf-8") or _FALLBACK_TYPE
        except FileNotFoundError:
            # Only reachable when a delete races this stat; the bytes are what count.
            content_type = _FALLBACK_TYPE
        return BlobInfo(key=key, size=size, content_type=content_type)

    def _delete(self, key: BlobKey) -> bool:
        data_path, type_path = self._paths(key)
        try:
            data_path.unlink()
        except FileNotFoundError:
            existed = False
        else:
            existed = True
        type_path.unlink(missing_ok=True)
        return existed


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so a reader sees the old file or the whole new one."""
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=_TEMP_PREFIX)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    _sync_directory(path.parent)


def _sync_directory(folder: Path) -> None:
    """Make the rename itself durable where the platform allows syncing a directory."""
    flags = getattr(os, "O_DIRECTORY", None)
    if flags is None:
        return
    descriptor = os.open(folder, os.O_RDONLY | flags)
    try:
        os.fsync(descriptor)
    except OSError:
        pass  # some filesystems refuse to sync a directory; the data is still written
    finally:
        os.close(descriptor)


__all__ = ["FileBlobStore", "encode_segment"]
