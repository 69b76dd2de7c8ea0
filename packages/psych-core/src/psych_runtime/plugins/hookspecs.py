"""The hooks a Psych plugin may implement.

There is one registration hook per port that exists, plus the ``psych doctor`` check
hook. Each receives a ``register`` callback and returns nothing: the plugin calls
``register`` once per backend it offers, passing a description (see
``psych_runtime.plugins.backends``) rather than an instance, so merely having a plugin
installed never costs a connection or a driver import.

Plugin API 1 promises only these hooks. A port that arrives later (sandboxes,
telemetry, remote tool sources) brings its hook with it, in the same release as the
port, so no hook is ever declared for something the runtime cannot use yet.

A plugin module looks like this::

    import psych_runtime
    from psych_runtime.plugins import StoreBackend, hookimpl

    PSYCH_PLUGIN_API = 1

    @hookimpl
    def psych_register_stores(register):
        register(StoreBackend(name="acme", schemes=("acme",), open=_open, package="acme-store"))
"""

from collections.abc import Callable

import pluggy

from psych_runtime.plugins.backends import BlobStoreBackend
from psych_runtime.plugins.backends import DoctorCheck
from psych_runtime.plugins.backends import MemoryStoreBackend
from psych_runtime.plugins.backends import SandboxBackend
from psych_runtime.plugins.backends import StoreBackend
from psych_runtime.plugins.backends import TelemetryBackend
from psych_runtime.plugins.backends import ToolSourceFactory

PROJECT_NAME = "psych_runtime"
"""The pluggy project name, which is also the entry-point group plugins register under."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def psych_register_stores(register: Callable[[StoreBackend], None]) -> None:
    """Offer Store backends, each keyed by the URL schemes ``open_store`` matches.

    Args:
        register: call once per ``StoreBackend`` the plugin provides.
    """


@hookspec
def psych_register_blob_stores(register: Callable[[BlobStoreBackend], None]) -> None:
    """Offer blob store backends, each keyed by URL scheme.

    Args:
        register: call once per ``BlobStoreBackend`` the plugin provides.
    """


@hookspec
def psych_register_memory_stores(register: Callable[[MemoryStoreBackend], None]) -> None:
    """Offer MemoryStore backends (durable facts per end user), each keyed by URL scheme.

    Args:
        register: call once per ``MemoryStoreBackend`` the plugin provides.
    """


@hookspec
def psych_register_tool_sources(register: Callable[[ToolSourceFactory], None]) -> None:
    """Offer sources of remote tools (MCP servers, A2A peers), one factory each.

    Args:
        register: call once per ``ToolSourceFactory`` the plugin provides.
    """


@hookspec
def psych_register_sandboxes(register: Callable[[SandboxBackend], None]) -> None:
    """Offer sandbox backends that run ``run_code`` programs, one description each.

    Args:
        register: call once per ``SandboxBackend`` the plugin provides.
    """


@hookspec
def psych_register_telemetry(register: Callable[[TelemetryBackend], None]) -> None:
    """Offer telemetry adapters that receive every Run's spans and metrics.

    Args:
        register: call once per ``TelemetryBackend`` the plugin provides.
    """


@hookspec
def psych_doctor_checks(register: Callable[[DoctorCheck], None]) -> None:
    """Offer health checks that ``psych doctor`` runs and reports.

    A plugin knows best what it needs (a driver importable, a credential configured),
    so it checks that itself instead of the core guessing.

    Args:
        register: call once per ``DoctorCheck``.
    """


__all__ = [
    "PROJECT_NAME",
    "hookimpl",
    "hookspec",
    "psych_doctor_checks",
    "psych_register_blob_stores",
    "psych_register_memory_stores",
    "psych_register_sandboxes",
    "psych_register_stores",
    "psych_register_telemetry",
    "psych_register_tool_sources",
]
