"""Plugin registration, for whoever packages an adapter.

The hook marker, the backend descriptions each hook registers, the ``offer_*`` helpers,
lazy exports for a plugin module, the doctor checks, and the plugin manager's switches.
"""

from psych_runtime.plugins import (
    PLUGIN_API_VERSION as PLUGIN_API_VERSION,
    BlobStoreBackend as BlobStoreBackend,
    DoctorCheck as DoctorCheck,
    DoctorResult as DoctorResult,
    IncompatiblePlugin as IncompatiblePlugin,
    PluginError as PluginError,
    StoreBackend as StoreBackend,
    UnknownStoreScheme as UnknownStoreScheme,
    hookimpl as hookimpl,
    offer as _offer,
    register_plugin as register_plugin,
)
from psych_runtime.plugins.backends import (
    MemoryStoreBackend as MemoryStoreBackend,
    SandboxBackend as SandboxBackend,
    TelemetryBackend as TelemetryBackend,
    ToolSourceFactory as ToolSourceFactory,
    import_check as import_check,
)
from psych_runtime.plugins.errors import (
    UnknownBlobStoreScheme as UnknownBlobStoreScheme,
    UnknownMemoryStoreScheme as UnknownMemoryStoreScheme,
)
from psych_runtime.plugins.installed import (
    installed_telemetry as installed_telemetry,
    sandbox_backends as sandbox_backends,
    telemetry_backends as telemetry_backends,
)
from psych_runtime.plugins.manager import (
    AUTOLOAD_ENV as AUTOLOAD_ENV,
    reset_plugin_manager as reset_plugin_manager,
)
from psych_runtime.plugins.offer import *  # noqa: F403
from psych_runtime.plugins.urls import (
    blob_store_backends as blob_store_backends,
    memory_store_backends as memory_store_backends,
    store_backends as store_backends,
)

# The ``offer_*`` helpers and ``lazy_exports`` are listed once, in their own module.
__all__ = [
    *_offer.__all__,
    "AUTOLOAD_ENV",
    "PLUGIN_API_VERSION",
    "BlobStoreBackend",
    "DoctorCheck",
    "DoctorResult",
    "IncompatiblePlugin",
    "MemoryStoreBackend",
    "PluginError",
    "SandboxBackend",
    "StoreBackend",
    "TelemetryBackend",
    "ToolSourceFactory",
    "UnknownBlobStoreScheme",
    "UnknownMemoryStoreScheme",
    "UnknownStoreScheme",
    "blob_store_backends",
    "hookimpl",
    "import_check",
    "installed_telemetry",
    "memory_store_backends",
    "register_plugin",
    "reset_plugin_manager",
    "sandbox_backends",
    "store_backends",
    "telemetry_backends",
]
