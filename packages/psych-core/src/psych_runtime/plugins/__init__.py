"""Plugin system: pluggy hooks over the ``psych_runtime`` entry-point group.

A plugin is a module that declares the plugin API it was built for and implements
registration hooks; an installed distribution exposes it with one entry point::

    [project.entry-points.psych_runtime]
    acme = "acme_psych_store"

Stores are then opened by URL, whatever plugin provides them::

    store = await open_store("memory://")
    blobs = await open_blob_store("file:///var/lib/psych/blobs")

The modules: ``hookspecs`` (the hooks and their markers), ``backends`` (what a hook
registers), ``manager`` (loading and asking plugins), ``urls`` (opening by URL),
``builtin`` (the core's own backends, always registered) and ``errors``.
Set ``PSYCH_DISABLE_PLUGIN_AUTOLOAD=1`` to skip discovery of installed plugins and
call ``register_plugin`` yourself; the built-in backends stay available.
"""

from psych_runtime.plugins.backends import BlobStoreBackend
from psych_runtime.plugins.backends import DoctorCheck
from psych_runtime.plugins.backends import DoctorResult
from psych_runtime.plugins.backends import StoreBackend
from psych_runtime.plugins.backends import import_check
from psych_runtime.plugins.errors import DuplicateBackend
from psych_runtime.plugins.errors import IncompatiblePlugin
from psych_runtime.plugins.errors import InvalidPlugin
from psych_runtime.plugins.errors import PluginError
from psych_runtime.plugins.errors import PluginLoadError
from psych_runtime.plugins.errors import UnknownBlobStoreScheme
from psych_runtime.plugins.errors import UnknownStoreScheme
from psych_runtime.plugins.hookspecs import hookimpl
from psych_runtime.plugins.hookspecs import hookspec
from psych_runtime.plugins.manager import AUTOLOAD_ENV
from psych_runtime.plugins.manager import PLUGIN_API_VERSION
from psych_runtime.plugins.manager import BrokenPlugin
from psych_runtime.plugins.manager import LoadedPlugin
from psych_runtime.plugins.manager import Registered
from psych_runtime.plugins.manager import autoload_disabled
from psych_runtime.plugins.manager import autoload_enabled
from psych_runtime.plugins.manager import broken_plugins
from psych_runtime.plugins.manager import canonical_distribution
from psych_runtime.plugins.manager import doctor_checks
from psych_runtime.plugins.manager import get_plugin_manager
from psych_runtime.plugins.manager import loaded_plugins
from psych_runtime.plugins.manager import register_plugin
from psych_runtime.plugins.manager import registrations
from psych_runtime.plugins.manager import reset_plugin_manager
from psych_runtime.plugins.manager import unloaded_plugins
from psych_runtime.plugins.schemes import SchemeConflict
from psych_runtime.plugins.schemes import scheme_conflicts
from psych_runtime.plugins.urls import blob_store_backends
from psych_runtime.plugins.urls import blob_store_scheme
from psych_runtime.plugins.urls import open_blob_store
from psych_runtime.plugins.urls import open_store
from psych_runtime.plugins.urls import store_backends
from psych_runtime.plugins.urls import store_scheme

__all__ = [
    "AUTOLOAD_ENV",
    "PLUGIN_API_VERSION",
    "BlobStoreBackend",
    "BrokenPlugin",
    "DoctorCheck",
    "DoctorResult",
    "DuplicateBackend",
    "IncompatiblePlugin",
    "InvalidPlugin",
    "LoadedPlugin",
    "PluginError",
    "PluginLoadError",
    "Registered",
    "SchemeConflict",
    "StoreBackend",
    "UnknownBlobStoreScheme",
    "UnknownStoreScheme",
    "autoload_disabled",
    "autoload_enabled",
    "blob_store_backends",
    "blob_store_scheme",
    "broken_plugins",
    "canonical_distribution",
    "doctor_checks",
    "get_plugin_manager",
    "hookimpl",
    "hookspec",
    "import_check",
    "loaded_plugins",
    "open_blob_store",
    "open_store",
    "register_plugin",
    "registrations",
    "reset_plugin_manager",
    "scheme_conflicts",
    "store_backends",
    "store_scheme",
    "unloaded_plugins",
]
