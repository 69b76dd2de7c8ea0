"""Open a Store from a URL by asking the installed plugins who handles its scheme."""

from psych_runtime.plugins.collect import store_backends
from psych_runtime.plugins.errors import UnknownStoreScheme
from psych_runtime.plugins.schemes import backend_for, url_scheme
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


def store_scheme(url: str) -> str:
    """The lower-cased scheme of a store URL.

    Raises:
        InvalidStoreUrl: the URL does not start with ``scheme:``.
    """
    return url_scheme(url, what="store", examples="memory:// or postgresql://host/db")


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
    backend = backend_for(backends, scheme, FIRST_PARTY_STORE_PACKAGES, UnknownStoreScheme)
    return await backend.open(url, **options)


__all__ = ["FIRST_PARTY_STORE_PACKAGES", "open_store", "store_scheme"]
