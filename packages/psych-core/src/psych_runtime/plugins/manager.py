"""Find, check and register plugins; build the one cached ``PluginManager``; ask it.

The core's own plugin (``psych_runtime.plugins.builtin``) is registered first and
always, like pytest's and llm's built-ins. Installed plugins are then discovered
through the ``psych_runtime`` entry-point group, unless ``PSYCH_DISABLE_PLUGIN_AUTOLOAD``
is set.

Entry points are walked by hand rather than with pluggy's
``load_setuptools_entrypoints`` so that each plugin's declared API version is checked
before the plugin is registered: a plugin built for another API never gets a hook
called. ``check_pending()`` then makes a misspelled hook fail loudly. Loading happens
once, on first use, and the result is cached until ``reset_plugin_manager()``.

``registrations`` calls a registration hook on every plugin, remembering which plugin
offered what, so a conflict can name both plugins and ``psych doctor`` can show who
provides which scheme.

A broken installed plugin fails small: one that cannot be imported, declares another
plugin API, implements a hook that does not exist, reuses another plugin's name, or
raises (or registers the wrong thing) in a registration hook is set aside and recorded
(``broken_plugins``). Every other plugin and the built-in backends keep working; asking
for a scheme nobody provides names the broken plugins, and ``psych doctor`` reports
them and fails. A plugin registered by hand with ``register_plugin`` still fails loudly:
the program asked for it.
"""

import importlib.metadata
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

import pluggy

from psych_runtime._version import __version__
from psych_runtime.plugins import builtin
from psych_runtime.plugins import hookspecs
from psych_runtime.plugins.backends import DoctorCheck
from psych_runtime.plugins.errors import IncompatiblePlugin
from psych_runtime.plugins.errors import InvalidPlugin
from psych_runtime.plugins.errors import PluginError
from psych_runtime.plugins.errors import PluginLoadError

PLUGIN_API_VERSION = 1
"""The plugin API this release speaks; a plugin declares it as ``PSYCH_PLUGIN_API``."""

API_ATTRIBUTE = "PSYCH_PLUGIN_API"
"""The module-level name through which a plugin declares its plugin API version."""

AUTOLOAD_ENV = "PSYCH_DISABLE_PLUGIN_AUTOLOAD"
"""Set to ``1`` to skip entry-point discovery; plugins are then registered by hand."""

_FALSY = frozenset({"", "0", "false", "no", "off"})


def canonical_distribution(name: str) -> str:
    """A distribution name as package indexes compare it: runs of ``-_.`` as ``-``, lower case."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True, slots=True)
class LoadedPlugin:
    """A plugin the manager registered, with where it came from.

    Attributes:
        name: the name the plugin is registered under (its entry-point name when it
            was discovered).
        source: the entry point's target (``module`` or ``module:attr``), or a
            description of the object for a plugin registered by hand.
        distribution: the distribution that ships it; None when registered by hand.
        version: that distribution's version; None when registered by hand.
    """

    name: str
    source: str
    distribution: str | None = None
    version: str | None = None

    @property
    def project(self) -> str | None:
        """The distribution's name in canonical form (``psych_store_x`` is ``psych-store-x``)."""
        return None if self.distribution is None else canonical_distribution(self.distribution)

    @property
    def origin(self) -> str | None:
        """``distribution version`` for messages, or None for a hand-registered plugin."""
        if self.distribution is None:
            return None
        return f"{self.distribution} {self.version}" if self.version else self.distribution


@dataclass(frozen=True, slots=True)
class BrokenPlugin:
    """An installed plugin that was set aside, and why.

    Attributes:
        plugin: where it came from (name, entry-point target, distribution).
        error: what went wrong, a ``PluginError`` naming the plugin and the cause.
    """

    plugin: LoadedPlugin
    error: PluginError


@dataclass(slots=True)
class _Cache:
    manager: pluggy.PluginManager | None = None
    loaded: list[LoadedPlugin] = field(default_factory=list)
    broken: list[BrokenPlugin] = field(default_factory=list)
    autoload: bool = True


_lock = threading.RLock()
_cache = _Cache()


def autoload_disabled() -> bool:
    """Whether the environment asks for entry-point discovery to be skipped.

    Any value other than empty, ``0``, ``false``, ``no`` or ``off`` disables it, the
    way pytest treats its own switch.
    """
    return os.environ.get(AUTOLOAD_ENV, "").strip().lower() not in _FALSY


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager, loading installed plugins on first call.

    An installed plugin that cannot be used is set aside (see ``broken_plugins``)
    rather than raised here, so one bad package cannot take every backend down.
    """
    with _lock:
        if _cache.manager is None:
            manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
            manager.add_hookspecs(hookspecs)
            loaded = [_register_builtin(manager)]
            broken: list[BrokenPlugin] = []
            autoload = not autoload_disabled()
            if autoload:
                loaded += _load_entry_points(manager, loaded, broken)
                loaded = _set_aside_unfit(manager, loaded, broken)
            _cache.manager, _cache.loaded, _cache.autoload = manager, loaded, autoload
            _cache.broken = broken
        return _cache.manager


def register_plugin(plugin: object, name: str | None = None) -> str:
    """Register a plugin object or module by hand and return its registered name.

    This is how tests and embedding applications add plugins when autoload is off.
    The plugin must declare ``PSYCH_PLUGIN_API`` like an installed one.

    Raises:
        IncompatiblePlugin: the plugin declares another plugin API version, or none.
        InvalidPlugin: its hooks do not match the hook specifications; it is left
            unregistered.
        PluginError: the name, or the object itself, is already registered.
    """
    with _lock:
        manager = get_plugin_manager()
        plugin_name = name or _default_name(plugin)
        _check_api(plugin, plugin_name, None)
        if manager.get_plugin(plugin_name) is not None:
            raise PluginError(f"a plugin named {plugin_name!r} is already registered")
        _register(manager, plugin, plugin_name, None)
        record = LoadedPlugin(name=plugin_name, source=_describe(plugin))
        try:
            _check_pending(manager, [record])
        except InvalidPlugin:
            manager.unregister(name=plugin_name)
            raise
        _cache.loaded.append(record)
        return plugin_name


def loaded_plugins() -> tuple[LoadedPlugin, ...]:
    """Every registered plugin in registration order: the built-in one, then the rest."""
    with _lock:
        get_plugin_manager()
        return tuple(_cache.loaded)


def broken_plugins() -> tuple[BrokenPlugin, ...]:
    """Installed plugins that were set aside, each with the error that explains why."""
    with _lock:
        get_plugin_manager()
        return tuple(_cache.broken)


def unloaded_plugins() -> tuple[LoadedPlugin, ...]:
    """Installed plugins left unloaded because autoload is off, without importing them.

    Empty when autoload is on. A plugin registered by hand under its entry-point name,
    or from its distribution's plugin module, counts as loaded.
    """
    with _lock:
        get_plugin_manager()
        if _cache.autoload:
            return ()
        names = {record.name for record in _cache.loaded}
        sources = {record.source for record in _cache.loaded}
        found: list[LoadedPlugin] = []
        for entry_point in importlib.metadata.entry_points(group=hookspecs.PROJECT_NAME):
            module = entry_point.value.split(":", 1)[0]
            if entry_point.name in names or module in sources or entry_point.value in sources:
                continue
            dist = entry_point.dist
            found.append(
                LoadedPlugin(
                    name=entry_point.name,
                    source=entry_point.value,
                    distribution=dist.name if dist is not None else None,
                    version=dist.version if dist is not None else None,
                )
            )
        return tuple(sorted(found, key=lambda record: record.name))


def autoload_enabled() -> bool:
    """Whether the current manager was built with entry-point discovery on."""
    with _lock:
        get_plugin_manager()
        return _cache.autoload


def reset_plugin_manager() -> None:
    """Forget the cached manager so the next use rediscovers plugins.

    Meant for tests, which change the environment or ``sys.path`` between cases.
    Modules already imported stay imported.
    """
    with _lock:
        _cache.manager = None
        _cache.loaded = []
        _cache.broken = []
        _cache.autoload = True


def _register_builtin(manager: pluggy.PluginManager) -> LoadedPlugin:
    """Register the core's own backends, which no switch turns off."""
    manager.register(builtin, name=builtin.NAME)
    return LoadedPlugin(
        name=builtin.NAME,
        source=builtin.__name__,
        distribution="psych-runtime",
        version=__version__,
    )


def _load_entry_points(
    manager: pluggy.PluginManager, taken: list[LoadedPlugin], broken: list[BrokenPlugin]
) -> list[LoadedPlugin]:
    """Import, check and register every installed plugin; set aside the ones that fail."""
    loaded: list[LoadedPlugin] = []
    found = importlib.metadata.entry_points(group=hookspecs.PROJECT_NAME)
    for entry_point in sorted(found, key=lambda ep: (ep.name, ep.value)):
        dist = entry_point.dist
        record = LoadedPlugin(
            name=entry_point.name,
            source=entry_point.value,
            distribution=dist.name if dist is not None else None,
            version=dist.version if dist is not None else None,
        )
        try:
            _load_one(manager, entry_point, record, [*taken, *loaded])
        except PluginError as error:
            broken.append(BrokenPlugin(record, error))
            continue
        loaded.append(record)
    return loaded


def _load_one(
    manager: pluggy.PluginManager,
    entry_point: importlib.metadata.EntryPoint,
    record: LoadedPlugin,
    taken: list[LoadedPlugin],
) -> None:
    earlier = next((p for p in taken if p.name == record.name), None)
    if earlier is not None:
        raise PluginError(
            f"two installed plugins use the entry-point name {record.name!r}: "
            f"{_where(earlier)} and {_where(record)}; uninstall one of them"
        )
    try:
        plugin = entry_point.load()
    except Exception as exc:
        raise PluginLoadError(
            f"could not import plugin {record.name!r} ({record.source}) from "
            f"{_where(record)}: {type(exc).__name__}: {exc}"
        ) from exc
    _check_api(plugin, record.name, record.origin)
    _register(manager, plugin, record.name, record.origin)


def _set_aside_unfit(
    manager: pluggy.PluginManager, loaded: list[LoadedPlugin], broken: list[BrokenPlugin]
) -> list[LoadedPlugin]:
    """Unregister each installed plugin whose hooks do not fit the specifications."""
    while True:
        try:
            manager.check_pending()
            return loaded
        except pluggy.PluginValidationError as exc:
            error = _unfit(manager, exc, loaded)
            name = manager.get_name(exc.plugin)
            record = next((p for p in loaded if p.name == name), None)
            if record is None or record.name == builtin.NAME:
                raise error from exc
            manager.unregister(name=record.name)
            loaded = [p for p in loaded if p is not record]
            broken.append(BrokenPlugin(record, error))


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

    Each implementation gets its own ``register`` callback, bound to that plugin, so
    every description is attributed to the plugin that offered it. Wrapper
    implementations are skipped: a registration hook has no result to wrap.

    A plugin whose hook raises, or registers something other than a ``kind``, is set
    aside like one that failed to load: its registrations from that call are dropped
    and it is listed in ``broken_plugins``. The built-in plugin's failures propagate.
    """
    caller = getattr(get_plugin_manager().hook, hook_name)
    found: list[Registered[T]] = []
    for impl in caller.get_hookimpls():
        if impl.hookwrapper or impl.wrapper:
            continue
        offered: list[Registered[T]] = []
        arguments = {"register": _collector(offered, kind, impl.plugin_name, hook_name)}
        try:
            impl.function(*(arguments[name] for name in impl.argnames))
        except Exception as exc:
            error = (
                exc
                if isinstance(exc, PluginError)
                else PluginError(
                    f"plugin {impl.plugin_name!r} failed in {hook_name}: "
                    f"{type(exc).__name__}: {exc}"
                )
            )
            if error is not exc:
                error.__cause__ = exc
            if impl.plugin_name == builtin.NAME:
                raise error from exc
            _remember_broken(impl.plugin_name, error)
            continue
        found.extend(offered)
    return found


def _remember_broken(name: str, error: PluginError) -> None:
    with _lock:
        if any(entry.plugin.name == name for entry in _cache.broken):
            return
        record = next(
            (p for p in _cache.loaded if p.name == name), LoadedPlugin(name=name, source=name)
        )
        _cache.broken.append(BrokenPlugin(record, error))


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


def _check_api(plugin: object, name: str, origin: str | None) -> None:
    declared = getattr(plugin, API_ATTRIBUTE, None)
    # ``type(...) is int`` rather than isinstance: True would otherwise pass as 1.
    if type(declared) is not int or declared != PLUGIN_API_VERSION:
        raise IncompatiblePlugin(name, origin, declared, PLUGIN_API_VERSION)


def _register(manager: pluggy.PluginManager, plugin: object, name: str, origin: str | None) -> None:
    where = f" from {origin}" if origin else ""
    try:
        manager.register(plugin, name=name)
    except pluggy.PluginValidationError as exc:
        raise InvalidPlugin(
            f"plugin {name!r}{where} does not fit the hook specifications: {exc}"
        ) from exc
    except ValueError as exc:
        # pluggy refuses the same object under a second name, or a name twice.
        raise PluginError(f"plugin {name!r}{where} could not be registered: {exc}") from exc


def _check_pending(manager: pluggy.PluginManager, candidates: list[LoadedPlugin]) -> None:
    try:
        manager.check_pending()
    except pluggy.PluginValidationError as exc:
        raise _unfit(manager, exc, candidates) from exc


def _unfit(
    manager: pluggy.PluginManager,
    exc: pluggy.PluginValidationError,
    candidates: list[LoadedPlugin],
) -> InvalidPlugin:
    name = manager.get_name(exc.plugin) or _describe(exc.plugin)
    record = next((p for p in candidates if p.name == name), None)
    where = f" from {record.origin}" if record is not None and record.origin else ""
    return InvalidPlugin(
        f"plugin {name!r}{where} implements a hook Psych does not define ({exc}); "
        "hook names are listed in psych_runtime.plugins.hookspecs"
    )


def _default_name(plugin: object) -> str:
    name = getattr(plugin, "__name__", None)
    if isinstance(name, str) and name:
        return name
    return f"{type(plugin).__qualname__}-{id(plugin):x}"


def _describe(plugin: object) -> str:
    name = getattr(plugin, "__name__", None)
    if isinstance(name, str) and name:
        return name
    return f"{type(plugin).__module__}.{type(plugin).__qualname__} instance"


def _where(record: LoadedPlugin) -> str:
    return record.origin or "an unknown distribution"


__all__ = [
    "API_ATTRIBUTE",
    "AUTOLOAD_ENV",
    "PLUGIN_API_VERSION",
    "BrokenPlugin",
    "LoadedPlugin",
    "Registered",
    "autoload_disabled",
    "autoload_enabled",
    "broken_plugins",
    "canonical_distribution",
    "doctor_checks",
    "get_plugin_manager",
    "loaded_plugins",
    "register_plugin",
    "registrations",
    "reset_plugin_manager",
    "unloaded_plugins",
]
