"""Ask the registered plugins what they offer, remembering which plugin offered what.

Each registration hook is called once per implementing plugin with a ``register``
callback bound to that plugin. Attributing every description to its plugin is what
lets a scheme conflict name both plugins and lets ``psych doctor`` show which plugin
provides which scheme.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from psych_runtime.plugins.backends import (
    BlobStoreBackend,
    DoctorCheck,
    SandboxBackend,
    StoreBackend,
    TelemetryBackend,
    ToolSourceBackend,
)
from psych_runtime.plugins.errors import DuplicateBackend, InvalidPlugin, PluginError
from psych_runtime.plugins.manager import get_plugin_manager


@dataclass(frozen=True, slots=True)
class Registered[T]:
    """One description a plugin handed to ``register``.

    Attributes:
        plugin: the registered name of the plugin that offered it.
        item: the description itself.
    """

    plugin: str
    item: T


def registrations[T](hook_name: str, kind: type[T]) -> list[Registered[T]]:
    """Call one registration hook on every plugin and collect what each registers.

    Wrapper implementations are skipped: a registration hook has no result to wrap.

    Raises:
        InvalidPlugin: a plugin registered something other than a ``kind``.
        PluginError: a plugin's hook raised; the original error is the cause.
    """
    caller = getattr(get_plugin_manager().hook, hook_name)
    found: list[Registered[T]] = []
    for impl in caller.get_hookimpls():
        if impl.hookwrapper or impl.wrapper:
            continue
        arguments = {"register": _collector(found, kind, impl.plugin_name, hook_name)}
        try:
            impl.function(*(arguments[name] for name in impl.argnames))
        except PluginError:
            raise
        except Exception as exc:
            raise PluginError(
                f"plugin {impl.plugin_name!r} failed in {hook_name}: {type(exc).__name__}: {exc}"
            ) from exc
    return found


def store_backends() -> dict[str, StoreBackend]:
    """Every installed Store backend, keyed by each URL scheme it claims.

    Raises:
        DuplicateBackend: two plugins claim the same scheme.
    """
    found = registrations("psych_register_stores", StoreBackend)
    return _by_key(found, "store scheme", lambda backend: backend.schemes)


def blob_store_backends() -> dict[str, BlobStoreBackend]:
    """Every installed blob store backend, keyed by each URL scheme it claims.

    Raises:
        DuplicateBackend: two plugins claim the same scheme.
    """
    found = registrations("psych_register_blob_stores", BlobStoreBackend)
    return _by_key(found, "blob store scheme", lambda backend: backend.schemes)


def sandbox_backends() -> dict[str, SandboxBackend]:
    """Every installed sandbox, keyed by name.

    Raises:
        DuplicateBackend: two plugins register a sandbox under the same name.
    """
    found = registrations("psych_register_sandboxes", SandboxBackend)
    return _by_key(found, "sandbox", lambda backend: (backend.name,))


def telemetry_backends() -> dict[str, TelemetryBackend]:
    """Every installed telemetry sink, keyed by name.

    Raises:
        DuplicateBackend: two plugins register a sink under the same name.
    """
    found = registrations("psych_register_telemetry", TelemetryBackend)
    return _by_key(found, "telemetry backend", lambda backend: (backend.name,))


def tool_source_backends() -> dict[str, ToolSourceBackend]:
    """Every installed kind of tool source, keyed by name.

    Raises:
        DuplicateBackend: two plugins register the same kind.
    """
    found = registrations("psych_register_tool_sources", ToolSourceBackend)
    return _by_key(found, "tool source", lambda backend: (backend.name,))


def doctor_checks() -> list[Registered[DoctorCheck]]:
    """Every health check the plugins contribute, with the plugin that offered it."""
    return registrations("psych_doctor_checks", DoctorCheck)


def _collector[T](
    found: list[Registered[T]], kind: type[T], plugin: str, hook_name: str
) -> Callable[[T], None]:
    def register(item: T) -> None:
        if not isinstance(item, kind):
            raise InvalidPlugin(
                f"plugin {plugin!r} passed a {type(item).__name__} to register() in "
                f"{hook_name}; it takes a {kind.__name__}"
            )
        found.append(Registered(plugin, item))

    return register


class _Described(Protocol):
    """What every backend description carries, as far as conflict messages need."""

    @property
    def name(self) -> str: ...

    @property
    def package(self) -> str: ...


def _by_key[B: _Described](
    found: list[Registered[B]], what: str, keys: Callable[[B], tuple[str, ...]]
) -> dict[str, B]:
    table: dict[str, B] = {}
    owners: dict[str, Registered[B]] = {}
    for registered in found:
        for key in keys(registered.item):
            earlier = owners.get(key)
            if earlier is not None:
                raise DuplicateBackend(
                    f"{what} {key!r} is claimed twice: by plugin {earlier.plugin!r} "
                    f"(backend {earlier.item.name!r} from {earlier.item.package}) and by "
                    f"plugin {registered.plugin!r} (backend {registered.item.name!r} from "
                    f"{registered.item.package}); uninstall one of them"
                )
            owners[key] = registered
            table[key] = registered.item
    return table


__all__ = [
    "Registered",
    "blob_store_backends",
    "doctor_checks",
    "registrations",
    "sandbox_backends",
    "store_backends",
    "telemetry_backends",
    "tool_source_backends",
]
