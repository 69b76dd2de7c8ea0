"""Open stores and blob stores by URL, with the backend an installed plugin registered.

The URL's scheme picks the backend, so moving to another database is a ``pip install``
and a different URL rather than a code change. Stores and blob stores are looked up
the same way; only the wording of the errors and the table of first-party packages
differ. ``open_store(url, migrate=True)`` migrates here, once for every backend, so a
backend's factory only has to open its store.
"""

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from psych_runtime.blob.port import BlobStore
from psych_runtime.memory.port import MemoryStore
from psych_runtime.plugins import builtin
from psych_runtime.plugins.backends import (
    BlobStoreBackend,
    MemoryStoreBackend,
    StoreBackend,
)
from psych_runtime.plugins.errors import (
    DuplicateBackend,
    UnknownBlobStoreScheme,
    UnknownMemoryStoreScheme,
    UnknownStoreScheme,
    _UnknownScheme,
)
from psych_runtime.plugins.manager import (
    Registered,
    autoload_enabled,
    broken_plugins,
    registrations,
    unloaded_plugins,
)
from psych_runtime.store.errors import InvalidStoreUrl
from psych_runtime.store.port import Migratable, Store

log = logging.getLogger(__name__)

FIRST_PARTY_STORE_PACKAGES: dict[str, str] = {
    "sqlite": "psych-store-sqlite",
    "postgresql": "psych-store-postgres",
    "postgres": "psych-store-postgres",
    "mysql": "psych-store-mysql",
    "mariadb": "psych-store-mysql",
    "dynamodb": "psych-store-dynamo",
}
"""Schemes our own adapter packages serve, so an error can say what to install."""

FIRST_PARTY_BLOB_PACKAGES: dict[str, str] = {
    "s3": "psych-store-dynamo",
}
"""Blob schemes our own adapter packages serve, so an error can say what to install."""

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
    found = registrations("psych_register_stores", StoreBackend)
    return _by_scheme(found, "store scheme", FIRST_PARTY_STORE_PACKAGES)


def blob_store_backends() -> dict[str, BlobStoreBackend]:
    """Every installed blob store backend, keyed by each URL scheme it claims.

    Contested schemes are settled as for ``store_backends``.
    """
    found = registrations("psych_register_blob_stores", BlobStoreBackend)
    return _by_scheme(found, "blob store scheme", FIRST_PARTY_BLOB_PACKAGES)


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
    if not isinstance(migrate, bool):
        raise TypeError(f"option 'migrate' must be a bool, got {type(migrate).__name__}")
    scheme = store_scheme(url)
    backends = store_backends()
    if scheme not in backends:
        _refuse_ambiguous(
            "psych_register_stores",
            StoreBackend,
            "store scheme",
            scheme,
            FIRST_PARTY_STORE_PACKAGES,
        )
    backend = _backend_for(backends, scheme, FIRST_PARTY_STORE_PACKAGES, UnknownStoreScheme)
    store = await backend.open(url, **options)
    if migrate and isinstance(store, Migratable):
        try:
            await store.migrate()
        except BaseException:
            await store.close()
            raise
    return store


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
    if scheme not in backends:
        _refuse_ambiguous(
            "psych_register_blob_stores",
            BlobStoreBackend,
            "blob store scheme",
            scheme,
            FIRST_PARTY_BLOB_PACKAGES,
        )
    backend = _backend_for(backends, scheme, FIRST_PARTY_BLOB_PACKAGES, UnknownBlobStoreScheme)
    return await backend.open(url, **options)


def memory_store_backends() -> dict[str, MemoryStoreBackend]:
    """Every installed MemoryStore backend, keyed by each URL scheme it claims.

    Contested schemes are settled as for ``store_backends``.
    """
    found = registrations("psych_register_memory_stores", MemoryStoreBackend)
    return _by_scheme(found, "memory store scheme", FIRST_PARTY_STORE_PACKAGES)


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
    if not isinstance(migrate, bool):
        raise TypeError(f"option 'migrate' must be a bool, got {type(migrate).__name__}")
    scheme = _url_scheme(url, what="memory store", examples="memory:// or sqlite:///runs.db")
    backends = memory_store_backends()
    if scheme not in backends:
        _refuse_ambiguous(
            "psych_register_memory_stores",
            MemoryStoreBackend,
            "memory store scheme",
            scheme,
            FIRST_PARTY_STORE_PACKAGES,
        )
    backend = _backend_for(backends, scheme, FIRST_PARTY_STORE_PACKAGES, UnknownMemoryStoreScheme)
    memory = await backend.open(url, **options)
    if migrate and isinstance(memory, Migratable):
        try:
            await memory.migrate()
        except BaseException:
            await memory.close()
            raise
    return memory


def _url_scheme(url: str, *, what: str, examples: str) -> str:
    """The lower-cased scheme of ``url``; ``what`` and ``examples`` word the error."""
    match = _SCHEME.match(url)
    if match is None:
        raise InvalidStoreUrl(
            f"{what} URL {url!r} has no scheme; write it as scheme://..., for example {examples}"
        )
    return match.group(1).lower()


def _backend_for[B](
    backends: Mapping[str, B],
    scheme: str,
    first_party: Mapping[str, str],
    unknown: type[_UnknownScheme],
) -> B:
    """The backend registered for ``scheme``, or ``unknown`` naming what to install.

    Args:
        backends: every loaded backend, keyed by scheme.
        scheme: the scheme asked for, lower case.
        first_party: which of our own distributions serves which scheme.
        unknown: the error to raise when no backend claims the scheme.
    """
    backend = backends.get(scheme)
    if backend is None:
        # ``postgresql+asyncpg`` style schemes still get the base scheme's hint.
        package = first_party.get(scheme.split("+", 1)[0])
        broken = tuple(
            (entry.plugin.name, entry.plugin.project, str(entry.error))
            for entry in broken_plugins()
        )
        unloaded = tuple(
            (record.name, record.project, record.source) for record in unloaded_plugins()
        )
        raise unknown(
            scheme,
            tuple(sorted(backends)),
            package,
            autoload=autoload_enabled(),
            broken=broken,
            unloaded=unloaded,
        )
    return backend


class _Described(Protocol):
    """What every backend description carries, as far as conflict messages need."""

    @property
    def name(self) -> str: ...

    @property
    def package(self) -> str: ...

    @property
    def schemes(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class SchemeConflict:
    """A URL scheme more than one plugin claims, and what became of each claim.

    The core's own backends keep their schemes (``memory``, ``file``), and a scheme's
    first-party package keeps it (``psych-store-sqlite`` keeps ``sqlite``); every
    other claim of that scheme is set aside and named. When no claimant has that
    right, the scheme is refused (``DuplicateBackend``) and every other keeps working.

    Attributes:
        what: the kind of scheme (``store scheme``, ``blob store scheme``...).
        scheme: the contested scheme.
        kept: the claim that serves the scheme, or None when none could be chosen.
        set_aside: the claims that do not serve it.
    """

    what: str
    scheme: str
    kept: str | None
    set_aside: tuple[str, ...]

    @property
    def message(self) -> str:
        """A sentence for errors and ``psych doctor``."""
        aside = " and ".join(self.set_aside)
        if self.kept is None:
            return (
                f"{self.what} {self.scheme!r} is claimed by {aside}; none can be chosen, "
                "so the scheme is refused: uninstall all but one of them"
            )
        return (
            f"{self.what} {self.scheme!r} is served by {self.kept}; set aside the claim of "
            f"{aside}: uninstall it, or ask its authors to use a scheme of their own"
        )


def _claim(registered: "Registered[_Described]") -> str:
    item = registered.item
    return f"plugin {registered.plugin!r} (backend {item.name!r} from {item.package})"


def _rightful[B: _Described](
    claims: list[Registered[B]], scheme: str, first_party: Mapping[str, str]
) -> Registered[B] | None:
    for claim in claims:
        if claim.plugin == builtin.NAME:
            return claim
    owner = first_party.get(scheme)
    rightful = [c for c in claims if owner is not None and c.item.package == owner]
    return rightful[0] if len(rightful) == 1 else None


def _resolve[B: _Described](
    found: list[Registered[B]], what: str, first_party: Mapping[str, str]
) -> tuple[dict[str, B], dict[str, SchemeConflict]]:
    """Key the backends by scheme; a scheme claimed twice goes to its rightful owner."""
    claims: dict[str, list[Registered[B]]] = {}
    for registered in found:
        for key in registered.item.schemes:
            claims.setdefault(key, []).append(registered)
    table: dict[str, B] = {}
    conflicts: dict[str, SchemeConflict] = {}
    for key, claimants in claims.items():
        if len(claimants) == 1:
            table[key] = claimants[0].item
            continue
        winner = _rightful(claimants, key, first_party)
        losers = tuple(_claim(c) for c in claimants if c is not winner)
        kept = None if winner is None else _claim(winner)
        conflicts[key] = SchemeConflict(what, key, kept, losers)
        if winner is not None:
            table[key] = winner.item
    return table, conflicts


def _by_scheme[B: _Described](
    found: list[Registered[B]], what: str, first_party: Mapping[str, str]
) -> dict[str, B]:
    """The backends by scheme; contested schemes are logged, ambiguous ones left out."""
    table, conflicts = _resolve(found, what, first_party)
    for conflict in conflicts.values():
        log.warning("%s", conflict.message)
    return table


def scheme_conflicts() -> list[SchemeConflict]:
    """Every URL scheme that more than one plugin claims, for ``psych doctor``."""
    kinds: list[tuple[str, type[_Described], str, Mapping[str, str]]] = [
        ("psych_register_stores", StoreBackend, "store scheme", FIRST_PARTY_STORE_PACKAGES),
        (
            "psych_register_blob_stores",
            BlobStoreBackend,
            "blob store scheme",
            FIRST_PARTY_BLOB_PACKAGES,
        ),
        (
            "psych_register_memory_stores",
            MemoryStoreBackend,
            "memory store scheme",
            FIRST_PARTY_STORE_PACKAGES,
        ),
    ]
    found: list[SchemeConflict] = []
    for hook, kind, what, first_party in kinds:
        _, conflicts = _resolve(registrations(hook, kind), what, first_party)
        found.extend(conflicts[key] for key in sorted(conflicts))
    return found


def _refuse_ambiguous(
    hook: str, kind: type[_Described], what: str, scheme: str, first_party: Mapping[str, str]
) -> None:
    _, conflicts = _resolve(registrations(hook, kind), what, first_party)
    conflict = conflicts.get(scheme)
    if conflict is not None and conflict.kept is None:
        raise DuplicateBackend(conflict.message)


__all__ = [
    "FIRST_PARTY_BLOB_PACKAGES",
    "FIRST_PARTY_STORE_PACKAGES",
    "SchemeConflict",
    "blob_store_backends",
    "blob_store_scheme",
    "memory_store_backends",
    "open_blob_store",
    "open_memory_store",
    "open_store",
    "scheme_conflicts",
    "store_backends",
    "store_scheme",
]
