"""Which installed backend serves a URL scheme, for each kind of store a URL can open.

A kind (Run stores, blob stores, memory stores) is one row of a table: the hook its
plugins register through, the backend description they register, how errors name its
schemes, and which of our own distributions serves which scheme. Every lookup reads
that row, so the rules for a contested or missing scheme are written once for all kinds.
"""

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from psych_runtime.plugins import builtin
from psych_runtime.plugins.backends import BlobStoreBackend
from psych_runtime.plugins.backends import MemoryStoreBackend
from psych_runtime.plugins.backends import StoreBackend
from psych_runtime.plugins.errors import DuplicateBackend
from psych_runtime.plugins.errors import UnknownBlobStoreScheme
from psych_runtime.plugins.errors import UnknownMemoryStoreScheme
from psych_runtime.plugins.errors import UnknownStoreScheme
from psych_runtime.plugins.errors import _UnknownScheme
from psych_runtime.plugins.manager import Registered
from psych_runtime.plugins.manager import autoload_enabled
from psych_runtime.plugins.manager import broken_plugins
from psych_runtime.plugins.manager import registrations
from psych_runtime.plugins.manager import unloaded_plugins

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


class _Described(Protocol):
    """What every backend description carries, as far as conflict messages need."""

    @property
    def name(self) -> str: ...

    @property
    def package(self) -> str: ...

    @property
    def schemes(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class BackendKind[B: _Described]:
    """One kind of store a URL opens, and how its backends are found and refused.

    Attributes:
        hook: the plugin hook its backends are registered through.
        backend: the description those registrations carry.
        what: how messages name its schemes (``store scheme``...).
        first_party: which of our own distributions serves which scheme.
        unknown: the error raised when no loaded backend claims a scheme.
    """

    hook: str
    backend: type[B]
    what: str
    first_party: Mapping[str, str]
    unknown: type[_UnknownScheme]


STORES = BackendKind(
    "psych_register_stores",
    StoreBackend,
    "store scheme",
    FIRST_PARTY_STORE_PACKAGES,
    UnknownStoreScheme,
)
BLOB_STORES = BackendKind(
    "psych_register_blob_stores",
    BlobStoreBackend,
    "blob store scheme",
    FIRST_PARTY_BLOB_PACKAGES,
    UnknownBlobStoreScheme,
)
MEMORY_STORES = BackendKind(
    "psych_register_memory_stores",
    MemoryStoreBackend,
    "memory store scheme",
    FIRST_PARTY_STORE_PACKAGES,
    UnknownMemoryStoreScheme,
)
KINDS: tuple[
    BackendKind[StoreBackend] | BackendKind[BlobStoreBackend] | BackendKind[MemoryStoreBackend], ...
] = (
    STORES,
    BLOB_STORES,
    MEMORY_STORES,
)
"""Every kind, in the order ``psych doctor`` reports their conflicts."""


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


def backends[B: _Described](kind: BackendKind[B]) -> dict[str, B]:
    """Every installed backend of ``kind``, keyed by each URL scheme it claims.

    A scheme claimed twice is served by its rightful owner (see ``SchemeConflict``),
    and the conflict is logged; one no claimant owns is left out.
    """
    table, conflicts = _resolve(kind)
    for conflict in conflicts.values():
        log.warning("%s", conflict.message)
    return table


def backend_for[B: _Described](kind: BackendKind[B], scheme: str) -> B:
    """The backend of ``kind`` that serves ``scheme``.

    Raises:
        DuplicateBackend: several plugins claim the scheme and none has the right to it.
        _UnknownScheme: (the kind's subclass) no loaded plugin claims the scheme; the
            message names the package to install when one of ours serves it.
    """
    table = backends(kind)
    backend = table.get(scheme)
    if backend is not None:
        return backend
    conflict = _resolve(kind)[1].get(scheme)
    if conflict is not None and conflict.kept is None:
        raise DuplicateBackend(conflict.message)
    # ``postgresql+asyncpg`` style schemes still get the base scheme's hint.
    package = kind.first_party.get(scheme.split("+", 1)[0])
    broken = tuple(
        (entry.plugin.name, entry.plugin.project, str(entry.error)) for entry in broken_plugins()
    )
    unloaded = tuple((record.name, record.project, record.source) for record in unloaded_plugins())
    raise kind.unknown(
        scheme,
        tuple(sorted(table)),
        package,
        autoload=autoload_enabled(),
        broken=broken,
        unloaded=unloaded,
    )


def scheme_conflicts() -> list[SchemeConflict]:
    """Every URL scheme that more than one plugin claims, for ``psych doctor``."""
    found: list[SchemeConflict] = []
    for kind in KINDS:
        conflicts = _resolve(kind)[1]
        found.extend(conflicts[key] for key in sorted(conflicts))
    return found


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
    kind: BackendKind[B],
) -> tuple[dict[str, B], dict[str, SchemeConflict]]:
    """Key the backends by scheme; a scheme claimed twice goes to its rightful owner."""
    claims: dict[str, list[Registered[B]]] = {}
    for registered in registrations(kind.hook, kind.backend):
        for key in registered.item.schemes:
            claims.setdefault(key, []).append(registered)
    table: dict[str, B] = {}
    conflicts: dict[str, SchemeConflict] = {}
    for key, claimants in claims.items():
        if len(claimants) == 1:
            table[key] = claimants[0].item
            continue
        winner = _rightful(claimants, key, kind.first_party)
        losers = tuple(_claim(c) for c in claimants if c is not winner)
        kept = None if winner is None else _claim(winner)
        conflicts[key] = SchemeConflict(kind.what, key, kept, losers)
        if winner is not None:
            table[key] = winner.item
    return table, conflicts


__all__ = [
    "BLOB_STORES",
    "FIRST_PARTY_BLOB_PACKAGES",
    "FIRST_PARTY_STORE_PACKAGES",
    "KINDS",
    "MEMORY_STORES",
    "STORES",
    "BackendKind",
    "SchemeConflict",
    "backend_for",
    "backends",
    "scheme_conflicts",
]
