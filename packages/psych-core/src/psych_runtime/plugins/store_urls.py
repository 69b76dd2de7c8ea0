"""Open a Store from a URL by asking the installed plugins who handles its scheme."""

import re

from psych_runtime.plugins.collect import store_backends
from psych_runtime.plugins.errors import UnknownStoreScheme
from psych_runtime.plugins.manager import autoload_enabled
from psych_runtime.store.errors import InvalidStoreUrl
from psych_runtime.store.port import Store

FIRST_PARTY_STORE_PACKAGES: dict[str, str] = {
    "sqlite": "psych-store-sqlite",
    "postgresql": "psych-store-postgres",
    "postgres": "psych-store-postgres",
    "mysql": "psych-store-mysql",
    "mariadb": "psych-store-mysql",
    "dynamodb": "psych-store-dynamo",
}
"""Schemes our own adapter packages serve, so an error can say what to install."""

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")


def store_scheme(url: str) -> str:
    """The lower-cased scheme of a store URL.

    Raises:
        InvalidStoreUrl: the URL does not start with ``scheme:``.
    """
    match = _SCHEME.match(url)
    if match is None:
        raise InvalidStoreUrl(
            f"store URL {url!r} has no scheme; write it as scheme://..., "
            "for example memory:// or postgresql://host/db"
        )
    return match.group(1).lower()


async def open_store(url: str, **options: object) -> Store:
    """Open a Store for ``url`` with the backend registered for its scheme.

    The backend comes from whichever installed plugin claims the scheme, so adding a
    database is a ``pip install`` rather than a code change. ``options`` go to the
    backend's factory unchanged.

    Example::

        store = await psych_runtime.open_store("memory://")

    Raises:
        InvalidStoreUrl: the URL has no scheme.
        UnknownStoreScheme: no loaded plugin claims the scheme; the message names the
            package to install when the scheme belongs to a first-party adapter.
        IncompatiblePlugin: an installed plugin was built for another plugin API.
    """
    scheme = store_scheme(url)
    backends = store_backends()
    backend = backends.get(scheme)
    if backend is None:
        # ``postgresql+asyncpg`` style schemes still get the base scheme's hint.
        package = FIRST_PARTY_STORE_PACKAGES.get(scheme.split("+", 1)[0])
        raise UnknownStoreScheme(
            scheme, tuple(sorted(backends)), package, autoload=autoload_enabled()
        )
    return await backend.open(url, **options)


__all__ = ["FIRST_PARTY_STORE_PACKAGES", "open_store", "store_scheme"]
