"""The subprocess sandbox, at the path the product description imports it from.

An alias of ``psych_sandbox.process``, which the ``psych-sandbox`` package installs.
"""

from typing import Any

from psych_runtime._adapter_alias import load

_ADAPTER = load("psych_sandbox.process", "psych-sandbox", __name__)
__all__: list[str] = [name for name in getattr(_ADAPTER, "__all__", ()) if name != "__version__"]


def __getattr__(name: str) -> Any:
    return getattr(_ADAPTER, name)
