"""Opening a BlobStore by URL through the plugins, and what the errors tell the user."""

from pathlib import Path

import pytest

from psych_runtime.blob.filesystem import FileBlobStore
from psych_runtime.blob.memory import InMemoryBlobStore
from psych_runtime.blob.port import BlobKey
from psych_runtime.blob.port import BlobStore
from psych_runtime.core.errors import PsychError
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.plugins import BlobStoreBackend
from psych_runtime.plugins import UnknownBlobStoreScheme
from psych_runtime.plugins import blob_store_backends
from psych_runtime.plugins import blob_store_scheme
from psych_runtime.plugins import hookimpl
from psych_runtime.plugins import open_blob_store
from psych_runtime.plugins import register_plugin
from psych_runtime.store.errors import InvalidStoreUrl

# Installed plugins must not change these answers, so only hand-registered ones count.
pytestmark = pytest.mark.usefixtures("autoload_off")


async def test_the_core_offers_memory_and_file_blob_stores():
    backends = blob_store_backends()
    assert sorted(backends) == ["file", "memory"]
    assert {backend.package for backend in backends.values()} == {"psych-runtime"}


async def test_memory_urls_open_a_fresh_store_each_time():
    first = await open_blob_store("memory://")
    second = await open_blob_store("memory://")
    assert isinstance(first, InMemoryBlobStore)
    assert isinstance(first, BlobStore)
    key = BlobKey("t", RunId("r"), ToolCallId("c"))
    await first.put(key, b"only in the first", content_type="text/plain")
    assert await second.stat(key) is None


async def test_a_file_url_opens_a_store_rooted_at_its_directory(tmp_path: Path):
    root = tmp_path / "with space" / "blobs"
    blobs = await open_blob_store(root.as_uri())
    assert isinstance(blobs, FileBlobStore)
    assert blobs.root == root
    await blobs.put(BlobKey("t", RunId("r"), ToolCallId("c")), b"x", content_type="text/plain")
    assert (root / "t" / "r" / "c.blob").read_bytes() == b"x"


async def test_file_localhost_is_the_local_machine(tmp_path: Path):
    blobs = await open_blob_store(f"file://localhost{tmp_path}")
    assert isinstance(blobs, FileBlobStore) and blobs.root == tmp_path


@pytest.mark.parametrize(
    "url",
    ["file://fileserver/share/blobs", "file:relative/dir", "file:///tmp/blobs?x=1", "file:///a#b"],
)
async def test_file_urls_must_name_a_local_absolute_directory(url: str):
    with pytest.raises(InvalidStoreUrl):
        await open_blob_store(url)


async def test_the_builtin_blob_stores_take_no_options(tmp_path: Path):
    with pytest.raises(TypeError, match="no options"):
        await open_blob_store("memory://", bucket="x")
    with pytest.raises(TypeError, match="no options"):
        await open_blob_store(tmp_path.as_uri(), fsync=False)


async def test_s3_names_the_package_and_how_to_load_it():
    with pytest.raises(UnknownBlobStoreScheme) as caught:
        await open_blob_store("s3://bucket/prefix")
    assert "psych-store-dynamo is installed but not loaded" in str(caught.value)
    assert "psych_store_dynamo.plugin" in str(caught.value)
    assert caught.value.package == "psych-store-dynamo"
    assert isinstance(caught.value, PsychError) and isinstance(caught.value, ValueError)


async def test_an_unknown_scheme_lists_the_blob_schemes_available():
    with pytest.raises(UnknownBlobStoreScheme) as caught:
        await open_blob_store("gcs://bucket")
    assert caught.value.package is None
    assert caught.value.available == ("file", "memory")
    assert "file, memory" in str(caught.value)
    assert "PSYCH_DISABLE_PLUGIN_AUTOLOAD" in str(caught.value)


@pytest.mark.parametrize("url", ["", "/var/blobs", "://host"])
async def test_a_blob_url_without_a_scheme_is_invalid(url: str):
    with pytest.raises(InvalidStoreUrl, match="no scheme"):
        await open_blob_store(url)


def test_blob_schemes_are_matched_case_insensitively():
    assert blob_store_scheme("S3://bucket") == "s3"


async def test_a_third_party_blob_backend_is_opened_with_its_options():
    opened: list[tuple[str, dict[str, object]]] = []

    async def _open(url: str, **options: object) -> BlobStore:
        opened.append((url, options))
        return InMemoryBlobStore()

    class Plugin:
        PSYCH_PLUGIN_API = 1

        @hookimpl
        def psych_register_blob_stores(self, register):
            register(BlobStoreBackend(name="gcs", schemes=("gcs",), open=_open, package="acme"))

    register_plugin(Plugin(), name="acme")
    blobs = await open_blob_store("gcs://bucket/x", region="eu")
    assert isinstance(blobs, InMemoryBlobStore)
    assert opened == [("gcs://bucket/x", {"region": "eu"})]
