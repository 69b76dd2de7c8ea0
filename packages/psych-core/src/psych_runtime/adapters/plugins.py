"""Plugin registration, for whoever packages an adapter.

The hook marker, the backend descriptions each hook registers, the ``offer_*`` helpers,
lazy exports for a plugin module, the doctor checks, and the plugin manager's switches.
"""

from psych_runtime.plugins import PLUGIN_API_VERSION as PLUGIN_API_VERSION
from psych_runtime.plugins import BlobStoreBackend as BlobStoreBackend
from psych_runtime.plugins import DoctorCheck as DoctorCheck
from psych_runtime.plugins import DoctorResult as DoctorResult
from psych_runtime.plugins import IncompatiblePlugin as IncompatiblePlugin
from psych_runtime.plugins import PluginError as PluginError
from psych_runtime.plugins import StoreBackend as StoreBackend
from psych_runtime.plugins import UnknownStoreScheme as UnknownStoreScheme
from psych_runtime.plugins import hookimpl as hookimpl
from psych_runtime.plugins import offer as _offer
from psych_runtime.plugins import register_plugin as register_plugin
from psych_runtime.plugins.backends import MemoryStoreBackend as MemoryStoreBackend
from psych_runtime.plugins.backends import SandboxBackend as SandboxBackend
from psych_runtime.plugins.backends import TelemetryBackend as TelemetryBackend
from psych_runtime.plugins.backends import ToolSourceFactory as ToolSourceFactory
from psych_runtime.plugins.backends import import_check as import_check
from psych_runtime.plugins.errors import UnknownBlobStoreScheme as UnknownBlobStoreScheme
from psych_runtime.plugins.errors import UnknownMemoryStoreScheme as UnknownMemoryStoreScheme
from psych_runtime.plugins.installed import installed_telemetry as installed_telemetry
from psych_runtime.plugins.installed import sandbox_backends as sandbox_backends
from psych_runtime.plugins.installed import telemetry_backends as telemetry_backends
from psych_runtime.plugins.manager import AUTOLOAD_ENV as AUTOLOAD_ENV
from psych_runtime.plugins.manager import reset_plugin_manager as reset_plugin_manager
from psych_runtime.plugins.offer import *  # noqa: F403
from psych_runtime.plugins.urls import blob_store_backends as blob_store_backends
from psych_runtime.plugins.urls import memory_store_backends as memory_store_backends
from psych_runtime.plugins.urls import store_backends as store_backends

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
