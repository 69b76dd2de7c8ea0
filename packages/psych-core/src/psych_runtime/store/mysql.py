"""The MySQL and MariaDB store, at the path the product description imports it from.

An alias of ``psych_store_mysql``, which the ``psych-store-mysql`` package installs.
"""

from typing import Any

from psych_runtime._adapter_alias import load

_ADAPTER = load("psych_store_mysql", "psych-store-mysql", __name__)
__all__: list[str] = [name for name in getattr(_ADAPTER, "__all__", ()) if name != "__version__"]


def __getattr__(name: str) -> Any:
    return getattr(_ADAPTER, name)
