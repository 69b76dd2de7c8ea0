"""An example Store adapter for Psych Runtime: named in-process databases.

``example://NAME`` opens a database kept in this process under ``NAME``; two stores
opened on the same name share it, the way two connections share a database server.
It exists to show how an adapter is put together (see the guide, "Writing a store
adapter"), not to be deployed: nothing survives the process.
"""

from typing import TYPE_CHECKING

from psych_runtime.adapters.plugins import lazy_exports
from psych_store_example._version import __version__

if TYPE_CHECKING:
    from psych_store_example.settings import ExampleSettings as ExampleSettings
    from psych_store_example.store import ExampleStore as ExampleStore

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ExampleStore": "psych_store_example.store",
        "ExampleSettings": "psych_store_example.settings",
    },
)

__all__ = ["ExampleSettings", "ExampleStore", "__version__"]
