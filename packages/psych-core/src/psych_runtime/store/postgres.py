"""The PostgreSQL store, at the path the product description imports it from.

An alias of ``psych_store_postgres``, which the ``psych-store-postgres`` package installs.
"""

from typing import Any

from psych_runtime._adapter_alias import load

_ADAPTER = load("psych_store_postgres", "psych-store-postgres", __name__)
__all__: list[str] = [name for name in getattr(_ADAPTER, "__all__", ()) if name != "__version__"]


def __getattr__(name: str) -> Any:
    return getattr(_ADAPTER, name)
