"""``S3BlobStore``: the BlobStore port on S3 objects under one bucket prefix.

Each blob is one object named ``<prefix>/<tenant>/<run id>/<call id>``, every part
percent-encoded (as ``str(BlobKey)`` does) and with dots escaped as well, so a part
such as ``..`` can never be read as a path step by a client, proxy or console along
the way. A name that would exceed S3's 1024-byte limit is replaced by a SHA-256 digest
of the key under ``<prefix>/~sha256/``, a folder no escaped key can produce.

S3 writes a whole object or nothing, so concurrent puts of one key leave exactly one
writer's bytes; the content type is the object's ``ContentType``; windows are ranged
GETs.
"""

import hashlib
from contextlib import AsyncExitStack
from urllib.parse import quote

from psych_runtime import RunId
from psych_runtime import StoreError
from psych_runtime.adapters.blob import BlobInfo
from psych_runtime.adapters.blob import BlobKey
from psych_runtime.adapters.blob import BlobNotFound
from psych_runtime.adapters.blob import InvalidBlobKey
from psych_runtime.adapters.blob import check_content_type
from psych_runtime.adapters.blob import check_window
from psych_runtime.adapters.blob import coerce_bytes
from psych_runtime.adapters.store import RawItem
from psych_runtime.adapters.store import settings_from
from psych_runtime.records import ToolCallId
from psych_store_dynamo import _connection
from psych_store_dynamo import errors
from psych_store_dynamo._connection import S3Client
from psych_store_dynamo.settings import S3Settings

_SERVICE = "S3"
_MAX_NAME_BYTES = 1024
_MISSING = frozenset({"404", "NoSuchKey", "NotFound"})


class S3BlobStore:
    """A BlobStore keeping each blob as one S3 object.

    Construction does no IO; the client is created on first use. The bucket must
    exist: this store never creates or deletes buckets.

    ``delete`` checks for the object before deleting it (S3's own delete succeeds
    either way), so it answers False for a blob that was never there; a delete racing
    another delete of the same key may both answer True.

    Args:
        url: ``s3://BUCKET/optional/prefix?region=...&endpoint_url=...``, or
            ``S3Settings`` already resolved. The options below override the query.
        region: AWS region (overrides the URL's).
        endpoint_url: a local endpoint such as MinIO, LocalStack or moto.
        connect_timeout: seconds to wait for a connection (default 5).
        read_timeout: seconds to wait for a response (default 10).
        max_attempts: tries per request for transient failures (default 3).
        addressing_style: ``auto``, ``path`` or ``virtual``; ``path`` by default when
            ``endpoint_url`` is set, as local servers need.

    Raises:
        InvalidStoreUrl: the URL is malformed.
        TypeError: an option has the wrong type.
        ValueError: an option value is out of range.
    """

    def __init__(self, url: str | S3Settings, /, **options: object) -> None:
        self._settings = settings_from(url, S3Settings, options)
        self._client = _connection.ClientSlot(
            self._open_client,
            f"the S3 blob store for bucket {self._settings.bucket!r} is closed",
        )

    @property
    def settings(self) -> S3Settings:
        """The resolved settings this store runs with."""
        return self._settings

    def object_name(self, key: BlobKey) -> str:
        """The S3 object name that holds ``key``'s blob."""
        parts = [quote(part, safe="").replace(".", "%2E") for part in _parts(key)]
        name = "/".join(parts)
        prefix = self._settings.prefix + "/" if self._settings.prefix else ""
        if len((prefix + name).encode()) > _MAX_NAME_BYTES:
            digest = hashlib.sha256("\x00".join(_parts(key)).encode()).hexdigest()
            return f"{prefix}~sha256/{digest}"
        return prefix + name

    async def _open_client(self, stack: AsyncExitStack) -> S3Client:
        client = await _connection.open_client(
            "s3", self._settings.aws, stack, s3_addressing=self._settings.addressing_style
        )
        return _connection.s3(client)

    async def _s3(self) -> S3Client:
        return await self._client.get()

    async def put(self, key: BlobKey, data: bytes, *, content_type: str) -> None:
        """Store ``data`` under ``key`` in one PutObject, replacing any earlier blob."""
        check_content_type(content_type)
        body = coerce_bytes(data)
        client = await self._s3()
        try:
            await client.put_object(
                Bucket=self._settings.bucket,
                Key=self.object_name(key),
                Body=body,
                ContentType=content_type,
            )
        except Exception as exc:
            raise self._fail(exc, "PutObject") from exc

    async def get(self, key: BlobKey, *, offset: int = 0, length: int | None = None) -> bytes:
        """The blob's bytes, or the window ``[offset, offset + length)`` (a ranged GET).

        A window past the end reads as ``b""``, like a slice.

        Raises:
            BlobNotFound: nothing is stored under ``key``.
            ValueError: ``offset`` or ``length`` is negative.
        """
        check_window(offset, length)
        if length == 0:
            if await self.stat(key) is None:
                raise BlobNotFound(key)
            return b""
        request: dict[str, object] = {
            "Bucket": self._settings.bucket,
            "Key": self.object_name(key),
        }
        if length is not None:
            request["Range"] = f"bytes={offset}-{offset + length - 1}"
        elif offset:
            request["Range"] = f"bytes={offset}-"
        client = await self._s3()
        try:
            response = await client.get_object(**request)
        except Exception as exc:
            failure = errors.failure_of(exc)
            if failure is not None and failure.code in _MISSING:
                raise BlobNotFound(key) from None
            if failure is not None and (failure.code == "InvalidRange" or failure.status == 416):
                # S3 answers 416 only for an object that exists: the window starts at
                # or past its end.
                return b""
            raise self._fail(exc, "GetObject") from exc
        body = response.get("Body")
        if body is None:
            raise StoreError(f"S3 GetObject for {key} returned no body")
        stream = _connection.s3_body(body)
        try:
            async with stream:
                return await stream.read()
        except Exception as exc:
            raise self._fail(exc, "GetObject") from exc

    async def stat(self, key: BlobKey) -> BlobInfo | None:
        """Size and content type from a HeadObject, or None when there is no blob."""
        client = await self._s3()
        try:
            response = await client.head_object(
                Bucket=self._settings.bucket, Key=self.object_name(key)
            )
        except Exception as exc:
            failure = errors.failure_of(exc)
            if failure is not None and failure.code in _MISSING:
                return None
            raise self._fail(exc, "HeadObject") from exc
        size = response.get("ContentLength")
        content_type = response.get("ContentType")
        if not isinstance(size, int) or not isinstance(content_type, str):
            raise StoreError(f"S3 HeadObject for {key} lacks a size or a content type")
        return BlobInfo(key=key, size=size, content_type=content_type)

    async def delete(self, key: BlobKey) -> bool:
        """Remove the blob; False when there was none (checked with a HeadObject first)."""
        if await self.stat(key) is None:
            return False
        client = await self._s3()
        try:
            await client.delete_object(Bucket=self._settings.bucket, Key=self.object_name(key))
        except Exception as exc:
            raise self._fail(exc, "DeleteObject") from exc
        return True

    async def delete_run_blobs(self, tenant: str, run_id: RunId) -> int:
        """Delete every object version under the Run's name prefix; returns the blobs.

        Every version goes, so a bucket with versioning on keeps nothing of them
        either. A blob whose name was too long for S3 is stored under a digest
        instead of its Run's prefix; only deleting its key (as ``delete_run`` does
        for every key the log names) reaches it.
        """
        if not tenant or not run_id:
            raise InvalidBlobKey("a Run's blobs are named by a non-empty tenant and run id")
        probe = self.object_name(BlobKey(tenant, run_id, ToolCallId("x")))
        hashed = (self._settings.prefix + "/" if self._settings.prefix else "") + "~sha256/"
        if probe.startswith(hashed):
            return 0
        prefix = probe[: -len("x")]
        client = await self._s3()
        request: dict[str, object] = {"Bucket": self._settings.bucket, "Prefix": prefix}
        blobs: set[str] = set()
        while True:
            try:
                page = await client.list_object_versions(**request)
            except Exception as exc:
                raise self._fail(exc, "ListObjectVersions") from exc
            for group in ("Versions", "DeleteMarkers"):
                entries = page.get(group)
                for entry in entries if isinstance(entries, list) else []:
                    name = str(entry["Key"])
                    if group == "Versions" and entry.get("IsLatest"):
                        blobs.add(name)
                    try:
                        await client.delete_object(
                            Bucket=self._settings.bucket,
                            Key=name,
                            VersionId=str(entry["VersionId"]),
                        )
                    except Exception as exc:
                        raise self._fail(exc, "DeleteObject") from exc
            if not page.get("IsTruncated"):
                return len(blobs)
            request["KeyMarker"] = page.get("NextKeyMarker")
            request["VersionIdMarker"] = page.get("NextVersionIdMarker")

    async def raw_storage(self) -> list[RawItem]:
        """See ``RawStorage.raw_storage``: every object version under this store's prefix.

        Versions, not only current objects: in a bucket with versioning on, a deleted
        blob lives on as an older version (and a delete marker), and shows up here.
        """
        client = await self._s3()
        prefix = self._settings.prefix + "/" if self._settings.prefix else ""
        request: dict[str, object] = {"Bucket": self._settings.bucket, "Prefix": prefix}
        items: list[RawItem] = []
        while True:
            try:
                page = await client.list_object_versions(**request)
            except Exception as exc:
                raise self._fail(exc, "ListObjectVersions") from exc
            versions = page.get("Versions")
            for version in versions if isinstance(versions, list) else []:
                name, version_id = str(version["Key"]), str(version["VersionId"])
                try:
                    response = await client.get_object(
                        Bucket=self._settings.bucket, Key=name, VersionId=version_id
                    )
                    stream = _connection.s3_body(response["Body"])
                    async with stream:
                        data = await stream.read()
                except Exception as exc:
                    raise self._fail(exc, "GetObject") from exc
                items.append(RawItem(f"object {name} version {version_id}", data))
            if not page.get("IsTruncated"):
                return items
            request["KeyMarker"] = page.get("NextKeyMarker")
            request["VersionIdMarker"] = page.get("NextVersionIdMarker")

    async def close(self) -> None:
        """Close the client; idempotent. The store is unusable afterwards.

        Requests already sent are waited for; any made from now on raise ``StoreError``.
        """
        await self._client.close()

    def _fail(self, exc: Exception, operation: str) -> BaseException:
        replacement = errors.translate(exc, _SERVICE, self._settings.aws)
        if replacement is not None:
            return replacement
        failure = errors.failure_of(exc)
        if failure is not None:
            if failure.code == "NoSuchBucket":
                return StoreError(
                    f"S3 bucket {self._settings.bucket!r} does not exist at "
                    f"{self._settings.aws.where()}; create it first"
                )
            return errors.unexpected(failure, _SERVICE, operation)
        return exc


def _parts(key: BlobKey) -> tuple[str, str, str]:
    return key.tenant, key.run_id, key.call_id


__all__ = ["S3BlobStore"]
