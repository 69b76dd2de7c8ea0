"""What the installed plugins offer beyond stores opened by URL.

Tool sources (MCP servers, A2A peers), telemetry adapters and sandbox backends are not
picked by a URL's scheme: a ``Runtime`` builds one tool source per installed factory,
uses the first telemetry adapter that builds, and knows every sandbox backend by name.
These lookups are here; opening stores by URL is ``urls.py``.
"""

import logging

from psych_runtime.plugins.backends import SandboxBackend
from psych_runtime.plugins.backends import TelemetryBackend
from psych_runtime.plugins.backends import ToolSourceFactory
from psych_runtime.plugins.errors import DuplicateBackend
from psych_runtime.plugins.manager import get_plugin_manager
from psych_runtime.plugins.manager import loaded_plugins
from psych_runtime.plugins.manager import registrations
from psych_runtime.telemetry.port import NO_TELEMETRY
from psych_runtime.telemetry.port import Telemetry

log = logging.getLogger(__name__)


def tool_source_factories() -> tuple[ToolSourceFactory, ...]:
    """Every installed tool source factory, in plugin order."""
    return tuple(
        entry.item for entry in registrations("psych_register_tool_sources", ToolSourceFactory)
    )


def telemetry_backends() -> tuple[TelemetryBackend, ...]:
    """Every installed telemetry backend, in plugin order."""
    return tuple(
        entry.item for entry in registrations("psych_register_telemetry", TelemetryBackend)
    )


_installed: list[tuple[tuple[object, int], Telemetry]] = []


def installed_telemetry() -> Telemetry:
    """The telemetry of the first installed backend, or ``NO_TELEMETRY`` when none is.

    Built once per set of registered plugins (``reset_plugin_manager`` forgets it). A backend
    whose ``build`` raises is logged and skipped: telemetry never stops a program.
    """
    # A plugin registered by hand since the last look changes the answer.
    manager = (get_plugin_manager(), len(loaded_plugins()))
    if _installed and _installed[0][0] == manager:
        return _installed[0][1]
    chosen: Telemetry = NO_TELEMETRY
    for backend in telemetry_backends():
        try:
            chosen = backend.build()
        except Exception:
            log.exception(
                "telemetry backend %r from %s failed to build", backend.name, backend.package
            )
            continue
        break
    _installed[:] = [(manager, chosen)]
    return chosen


def sandbox_backends() -> dict[str, SandboxBackend]:
    """Every installed sandbox backend, by name.

    Raises:
        DuplicateBackend: two plugins offer a backend of the same name.
    """
    table: dict[str, SandboxBackend] = {}
    for entry in registrations("psych_register_sandboxes", SandboxBackend):
        if entry.item.name in table:
            raise DuplicateBackend(
                f"sandbox backend {entry.item.name!r} is offered twice (the second by "
                f"{entry.item.package}); uninstall one of them"
            )
        table[entry.item.name] = entry.item
    return table


def installed_capabilities() -> frozenset[str]:
    """The Spec fields installed plugins make runnable (``"mcp_servers"``...).

    Tool sources name theirs; any installed sandbox backend makes ``code_execution``
    runnable.
    """
    found = {factory.capability for factory in tool_source_factories()}
    if sandbox_backends():
        found.add("code_execution")
    return frozenset(found)


__all__ = [
    "installed_capabilities",
    "installed_telemetry",
    "sandbox_backends",
    "telemetry_backends",
    "tool_source_factories",
]
