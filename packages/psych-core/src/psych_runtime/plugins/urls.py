"""Open stores and blob stores by URL, with the backend an installed plugin registered.

The URL's scheme picks the backend, so moving to another database is a ``pip install``
and a different URL rather than a code change. Which backend serves a scheme is
decided in ``schemes``, alike for every kind of store. ``open_store(url, migrate=True)``
migrates here, once for every backend, so a backend's factory only has to open its store.
"""

import re

from psych_runtime.blob.port import BlobStore
from psych_runtime.memory.port import MemoryStore
from psych_runtime.plugins.backends import BlobStoreBackend
from psych_runtime.plugins.backends import MemoryStoreBackend
from psych_runtime.plugins.backends import StoreBackend
from psych_runtime.plugins.schemes import BLOB_STORES
from psych_runtime.plugins.schemes import MEMORY_STORES
from psych_runtime.plugins.schemes import STORES
from psych_runtime.plugins.schemes import backend_for
from psych_runtime.plugins.schemes import backends
from psych_runtime.store.errors import InvalidStoreUrl
from psych_runtime.store.port import Migratable
from psych_runtime.store.port import Store

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")


def store_scheme(url: str) -> str:
    """The lower-cased scheme of a store URL.

    Raises:
        InvalidStoreUrl: the URL does not start with ``scheme:``.
    """
    return _url_scheme(url, what="store", examples="memory:// or postgresql://host/db")


def blob_store_scheme(url: str) -> str:
    """The lower-cased scheme of a blob store URL.

    Raises:
        InvalidStoreUrl: the URL does not start with ``scheme:``.
    """
    return _url_scheme(url, what="blob store", examples="memory:// or file:///var/lib/psych/blobs")


def store_backends() -> dict[str, StoreBackend]:
    """Every installed Store backend, keyed by each URL scheme it claims.

    A scheme claimed twice is served by its rightful owner (see ``SchemeConflict``);
    one no claimant owns is left out, and ``open_store`` refuses it by name.
    """
    return backends(STORES)


def blob_store_backends() -> dict[str, BlobStoreBackend]:
    """Every installed blob store backend, keyed by each URL scheme it claims.

    Contested schemes are settled as for ``store_backends``.
    """
    return backends(BLOB_STORES)


async def open_store(url: str, *, migrate: bool = False, **options: object) -> Store:
    """Open a Store for ``url`` with the backend registered for its scheme.

    The backend comes from whichever installed plugin claims the scheme, so adding a
    database is a ``pip install`` rather than a code change. ``options`` go to the
    backend's factory unchanged.

    Migrating is opt-in because it needs rights (creating tables) that a Worker's
    database account may rightly lack: run it once per deployment, from a process that
    has them, or pass ``migrate=True`` where one process owns the database (a test, a
    demo, a single-process service). Without it, a store whose schema is missing or
    older raises ``SchemaNotMigrated`` on first use.

    Example::

        store = await psych_runtime.open_store("sqlite:///runs.db", migrate=True)

    Args:
        url: the store's URL; its scheme picks the backend.
        migrate: call ``await store.migrate()`` before returning the store, and close
            it again when that fails. A store without a schema (``memory://``) has
            nothing to migrate.
        **options: passed to the backend's factory.

    Raises:
        TypeError: ``migrate`` is not a bool, or the backend refuses an option.
        InvalidStoreUrl: the URL has no scheme, or the backend cannot read it.
        UnknownStoreScheme: no loaded plugin claims the scheme; the message names the
            package to install when the scheme belongs to a first-party adapter.
        IncompatiblePlugin: an installed plugin was built for another plugin API.
        SchemaTooNew: ``migrate=True`` and a newer release migrated the database.
        StoreUnavailable: the database cannot be reached.
    """
    _check_migrate(migrate)
    backend = backend_for(STORES, store_scheme(url))
    return await _migrated(await backend.open(url, **options), migrate)


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
    backend = backend_for(BLOB_STORES, blob_store_scheme(url))
    return await backend.open(url, **options)


def memory_store_backends() -> dict[str, MemoryStoreBackend]:
    """Every installed MemoryStore backend, keyed by each URL scheme it claims.

    Contested schemes are settled as for ``store_backends``.
    """
    return backends(MEMORY_STORES)


async def open_memory_store(url: str, *, migrate: bool = False, **options: object) -> MemoryStore:
    """Open a MemoryStore for ``url`` with the backend registered for its scheme.

    A store adapter serves its own scheme here too, so the URL of a Run store opens the
    facts kept in the same database. ``memory://`` keeps them in this process only.

    Example::

        memory = await psych_runtime.open_memory_store("sqlite:///runs.db", migrate=True)

    Args:
        url: the database's URL; its scheme picks the backend.
        migrate: create or upgrade the schema first (see ``open_store``).
        **options: passed to the backend's factory.

    Raises:
        TypeError: ``migrate`` is not a bool, or the backend refuses an option.
        InvalidStoreUrl: the URL has no scheme, or the backend cannot read it.
        UnknownMemoryStoreScheme: no loaded plugin claims the scheme.
        StoreUnavailable: the database cannot be reached.
    """
    _check_migrate(migrate)
    scheme = _url_scheme(url, what="memory store", examples="memory:// or sqlite:///runs.db")
    backend = backend_for(MEMORY_STORES, scheme)
    return await _migrated(await backend.open(url, **options), migrate)


def _url_scheme(url: str, *, what: str, examples: str) -> str:
    """The lower-cased scheme of ``url``; ``what`` and ``examples`` word the error."""
    match = _SCHEME.match(url)
    if match is None:
        raise InvalidStoreUrl(
            f"{what} URL {url!r} has no scheme; write it as scheme://..., for example {examples}"
        )
    return match.group(1).lower()


def _check_migrate(migrate: object) -> None:
    if not isinstance(migrate, bool):
        raise TypeError(f"option 'migrate' must be a bool, got {type(migrate).__name__}")


async def _migrated[S: (Store, MemoryStore)](opened: S, migrate: bool) -> S:
    """``opened``, migrated first when asked and it has a schema; closed if that fails."""
    if migrate and isinstance(opened, Migratable):
        try:
            await opened.migrate()
        except BaseException:
            await opened.close()
            raise
    return opened


__all__ = [
    "blob_store_backends",
    "blob_store_scheme",
    "memory_store_backends",
    "open_blob_store",
    "open_memory_store",
    "open_store",
    "store_backends",
    "store_scheme",
]
