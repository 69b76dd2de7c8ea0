"""Errors raised while finding, loading and asking plugins.

Each message names the plugin (its entry point and the distribution that ships it) so
the person reading a traceback knows which package to upgrade, fix or uninstall.
"""

from typing import ClassVar

from psych_runtime.core.errors import PsychError


class PluginError(PsychError):
    """A plugin could not be loaded or misbehaved while registering its backends."""


class IncompatiblePlugin(PluginError):
    """A plugin was built for a plugin API other than the one this release speaks.

    Raised before the plugin is registered, so none of its hooks ever run.

    Attributes:
        plugin: the plugin's name (its entry-point name, for an installed plugin).
        distribution: the distribution and version that ship it, when known.
        declared: the ``PSYCH_PLUGIN_API`` value the plugin declares, or None when it
            declares none.
        expected: the plugin API version this release of psych-runtime speaks.
    """

    def __init__(
        self,
        plugin: str,
        distribution: str | None,
        declared: object,
        expected: int,
    ) -> None:
        where = f" from {distribution}" if distribution else ""
        if declared is None:
            problem = "does not declare PSYCH_PLUGIN_API"
        else:
            problem = f"declares PSYCH_PLUGIN_API = {declared!r}"
        super().__init__(
            f"plugin {plugin!r}{where} {problem}, but this psych-runtime speaks plugin API "
            f"{expected}; install a release of the plugin built for plugin API {expected}"
        )
        self.plugin = plugin
        self.distribution = distribution
        self.declared = declared
        self.expected = expected


class PluginLoadError(PluginError):
    """Importing a plugin's entry point failed; the original error is the cause."""


class InvalidPlugin(PluginError):
    """A plugin does not fit the hook specifications.

    Typical causes: a misspelled hook name, a hook argument no specification offers, or
    a ``register`` call with something that is not a backend description.
    """


class DuplicateBackend(PluginError):
    """Two plugins claim the same URL scheme, so neither can be picked silently."""


class _UnknownScheme(PsychError, ValueError):
    """No installed plugin opens URLs with this scheme; the wording is set per subclass.

    Attributes:
        scheme: the scheme that was asked for.
        package: the first-party distribution that provides it, when one does.
        available: the schemes the loaded plugins do provide.
        broken: installed plugins that were set aside, each as ``name (origin): why``;
            one of them may be the one that provides this scheme.
        unloaded: installed plugins left unloaded because autoload is off, each as
            ``name (distribution): entry point``.
    """

    _what: ClassVar[str]
    """What the URL opens, as the message names it: ``store`` or ``blob store``."""
    _urls: ClassVar[str]
    """How the install hint names the URLs: ``URLs`` or ``blob URLs``."""
    _listing: ClassVar[str]
    """How the list of schemes on offer is introduced."""

    def __init__(
        self,
        scheme: str,
        available: tuple[str, ...],
        package: str | None,
        *,
        autoload: bool = True,
        broken: tuple[tuple[str, str | None, str], ...] = (),
        unloaded: tuple[tuple[str, str | None, str], ...] = (),
    ) -> None:
        mine = [entry for entry in broken if package is not None and entry[1] == package]
        idle = [entry for entry in unloaded if package is not None and entry[1] == package]
        if idle and not mine:
            name, _, source = idle[0]
            module = source.split(":", 1)[0]
            hint = (
                f"{package} is installed but not loaded, because PSYCH_DISABLE_PLUGIN_AUTOLOAD "
                f"is set; load it explicitly with "
                f"psych_runtime.adapters.register_plugin(importlib.import_module({module!r}), "
                f"name={name!r}), or unset PSYCH_DISABLE_PLUGIN_AUTOLOAD"
            )
        elif mine:
            name, _, why = mine[0]
            hint = f"{package} is installed but its plugin {name!r} could not be used: {why}"
        elif package is not None:
            hint = f"install {package} (pip install {package}) to open {scheme}:// {self._urls}"
        else:
            listing = ", ".join(available) if available else "none"
            hint = f"no installed plugin provides it; {self._listing} available: {listing}"
        others = [entry for entry in broken if entry not in mine]
        if others:
            hint += "; these installed plugins could not be used and may provide it: " + "; ".join(
                f"{name} ({origin or 'unknown distribution'}): {why}"
                for name, origin, why in others
            )
        if not autoload and not idle:
            hint += (
                "; note that PSYCH_DISABLE_PLUGIN_AUTOLOAD is set, so installed plugins "
                "are only used once registered by hand"
            )
        super().__init__(f"unknown {self._what} scheme {scheme!r}: {hint}")
        self.scheme = scheme
        self.package = package
        self.available = available
        self.broken = tuple(f"{name} ({origin}): {why}" for name, origin, why in broken)
        self.unloaded = tuple(f"{name} ({origin}): {source}" for name, origin, source in unloaded)


class UnknownStoreScheme(_UnknownScheme):
    """No installed plugin opens store URLs with this scheme.

    Attributes:
        scheme: the scheme that was asked for.
        package: the first-party distribution that provides it, when one does.
        available: the schemes the loaded plugins do provide.
    """

    _what = "store"
    _urls = "URLs"
    _listing = "schemes"


class UnknownBlobStoreScheme(_UnknownScheme):
    """No installed plugin opens blob store URLs with this scheme.

    Its attributes are those of ``UnknownStoreScheme``.
    """

    _what = "blob store"
    _urls = "blob URLs"
    _listing = "blob store schemes"


class UnknownMemoryStoreScheme(_UnknownScheme):
    """No installed plugin opens memory store URLs with this scheme.

    Its attributes are those of ``UnknownStoreScheme``.
    """

    _what = "memory store"
    _urls = "memory URLs"
    _listing = "memory store schemes"


__all__ = [
    "DuplicateBackend",
    "IncompatiblePlugin",
    "InvalidPlugin",
    "PluginError",
    "PluginLoadError",
    "UnknownBlobStoreScheme",
    "UnknownMemoryStoreScheme",
    "UnknownStoreScheme",
]
