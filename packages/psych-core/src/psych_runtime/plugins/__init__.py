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

from psych_runtime.plugins.backends import (
    BlobStoreBackend,
    DoctorCheck,
    DoctorResult,
    StoreBackend,
    import_check,
)
from psych_runtime.plugins.errors import (
    DuplicateBackend,
    IncompatiblePlugin,
    InvalidPlugin,
    PluginError,
    PluginLoadError,
    UnknownBlobStoreScheme,
    UnknownStoreScheme,
)
from psych_runtime.plugins.hookspecs import hookimpl, hookspec
from psych_runtime.plugins.manager import (
    AUTOLOAD_ENV,
    PLUGIN_API_VERSION,
    BrokenPlugin,
    LoadedPlugin,
    Registered,
    autoload_disabled,
    autoload_enabled,
    broken_plugins,
    canonical_distribution,
    doctor_checks,
    get_plugin_manager,
    loaded_plugins,
    register_plugin,
    registrations,
    reset_plugin_manager,
    unloaded_plugins,
)
from psych_runtime.plugins.urls import (
    SchemeConflict,
    blob_store_backends,
    blob_store_scheme,
    open_blob_store,
    open_store,
    scheme_conflicts,
    store_backends,
    store_scheme,
)

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
