"""Open a BlobStore from a URL by asking the installed plugins who handles its scheme."""

from psych_runtime.blob.port import BlobStore
from psych_runtime.plugins.collect import blob_store_backends
from psych_runtime.plugins.errors import UnknownBlobStoreScheme
from psych_runtime.plugins.schemes import backend_for, url_scheme

FIRST_PARTY_BLOB_PACKAGES: dict[str, str] = {
    "s3": "psych-store-dynamo",
}
"""Blob schemes our own adapter packages serve, so an error can say what to install."""


def blob_store_scheme(url: str) -> str:
    """The lower-cased scheme of a blob store URL.

    Raises:
        InvalidStoreUrl: the URL does not start with ``scheme:``.
    """
    return url_scheme(url, what="blob store", examples="memory:// or file:///var/lib/psych/blobs")


async def open_blob_store(url: str, **options: object) -> BlobStore:
    """Open a BlobStore for ``url`` with the backend registered for its scheme.

    The core provides ``memory://`` (in-process) and ``file:///absolute/dir``; other
    schemes come from installed plugins, so moving blobs to object storage is a
    ``pip install`` and a different URL. ``options`` go to the backend unchanged.

    Example::

        blobs = await psych_runtime.open_blob_store("file:///var/lib/psych/blobs")

    Raises:
        InvalidStoreUrl: the URL has no scheme, or the backend cannot read it.
        UnknownBlobStoreScheme: no loaded plugin claims the scheme; the message names
            the package to install when the scheme belongs to a first-party adapter.
        IncompatiblePlugin: an installed plugin was built for another plugin API.
    """
    scheme = blob_store_scheme(url)
    backends = blob_store_backends()
    backend = backend_for(backends, scheme, FIRST_PARTY_BLOB_PACKAGES, UnknownBlobStoreScheme)
    return await backend.open(url, **options)


__all__ = ["FIRST_PARTY_BLOB_PACKAGES", "blob_store_scheme", "open_blob_store"]
