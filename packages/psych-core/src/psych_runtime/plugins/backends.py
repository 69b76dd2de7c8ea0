"""Descriptions of what a plugin can provide, and a ready-made health check.

Registration hooks hand these to their ``register`` callback instead of live objects:
describing a backend costs nothing, so installing a plugin never opens a connection or
imports a database driver until somebody actually asks for that backend.
"""

import importlib
import re
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from psych_runtime.blob.port import BlobStore
from psych_runtime.memory.port import MemoryStore
from psych_runtime.sandbox.port import Sandbox
from psych_runtime.store.port import Store
from psych_runtime.telemetry.port import Telemetry

_SCHEME = re.compile(r"[a-z][a-z0-9+.\-]*")


def _check_name(kind: str, name: str) -> None:
    """Reject an empty name at registration time, when the fault points at the plugin."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"a {kind} needs a non-empty name")


def _check_factory(
    kind: str, name: str, field: str, factory: object, package: object, *, is_async: bool
) -> None:
    """Reject, at registration, a factory that cannot be called or a package left unnamed."""
    if not callable(factory):
        what = "an async callable" if is_async else "callable"
        raise ValueError(f"{kind} {name!r}: {field} must be {what}")
    if not isinstance(package, str) or not package:
        raise ValueError(f"{kind} {name!r}: package must name the distribution that ships it")


def _checked_schemes(kind: str, name: str, schemes: Iterable[str]) -> tuple[str, ...]:
    """Validate the schemes a backend claims and return them as a tuple.

    A bad scheme is reported while the plugin registers, naming the backend; otherwise it
    would only surface later as a puzzling "unknown scheme" for the user's URL.
    """
    if isinstance(schemes, str):
        raise ValueError(f"{kind} {name!r}: schemes must be a tuple of strings, not one string")
    claimed = tuple(schemes)
    if not claimed:
        raise ValueError(f"{kind} {name!r}: claims no URL schemes")
    for scheme in claimed:
        if not isinstance(scheme, str) or not _SCHEME.fullmatch(scheme):
            raise ValueError(
                f"{kind} {name!r}: {scheme!r} is not a lower-case URL scheme "
                "(a letter, then letters, digits, '+', '-' or '.')"
            )
    return claimed


@dataclass(frozen=True, slots=True, kw_only=True)
class _SchemeBackend[T]:
    """The fields and registration checks of a backend that is picked by URL scheme.

    ``T`` is what ``open`` produces; each subclass fixes it and names its kind for
    error messages.
    """

    _kind: ClassVar[str]

    name: str
    schemes: tuple[str, ...]
    open: Callable[..., Awaitable[T]]
    package: str
    description: str = ""
    single_process: bool = False

    def __post_init__(self) -> None:
        _check_name(self._kind, self.name)
        if not isinstance(self.single_process, bool):
            raise ValueError(f"{self._kind} {self.name!r}: single_process must be a bool")
        schemes = _checked_schemes(self._kind, self.name, self.schemes)
        object.__setattr__(self, "schemes", schemes)
        _check_factory(self._kind, self.name, "open", self.open, self.package, is_async=True)
        if not isinstance(self.description, str):
            raise ValueError(f"{self._kind} {self.name!r}: description must be a string")


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreBackend(_SchemeBackend[Store]):
    """A Store implementation a plugin offers, keyed by the URL schemes it opens.

    Attributes:
        name: a short label for the backend, shown by ``psych doctor``.
        schemes: URL schemes this backend opens, lower case, e.g. ``("postgresql",)``.
        open: async factory called as ``await open(url, **options)``. Import the
            database driver inside it, not at module level. It only opens the store:
            ``open_store(url, migrate=True)`` runs ``migrate()`` afterwards (and
            closes the store when that fails), so ``migrate`` never reaches it.
        package: the distribution that ships the backend; shown in diagnostics so a
            user knows what to upgrade or remove.
        description: one line for humans.
        single_process: the store's data lives in the opening process only, so no
            second instance or process can share it (``memory://``). ``psych doctor``
            shows it; the contract then runs without a second instance.
    """

    _kind = "store backend"


@dataclass(frozen=True, slots=True, kw_only=True)
class BlobStoreBackend(_SchemeBackend[BlobStore]):
    """A BlobStore implementation a plugin offers, keyed by the URL schemes it opens.

    Attributes:
        name: a short label for the backend.
        schemes: URL schemes this backend opens, lower case, e.g. ``("s3",)``.
        open: async factory called as ``await open(url, **options)``; it returns a
            ``psych_runtime.blob.port.BlobStore``. Import the driver inside it.
        package: the distribution that ships the backend.
        description: one line for humans.
    """

    _kind = "blob store backend"


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryStoreBackend(_SchemeBackend[MemoryStore]):
    """A MemoryStore implementation a plugin offers, keyed by the URL schemes it opens.

    Attributes:
        name: a short label for the backend.
        schemes: URL schemes this backend opens; a store adapter uses its store's, so
            one URL opens both the Runs and the facts of one database.
        open: async factory called as ``await open(url, **options)``; it returns a
            ``psych_runtime.memory.port.MemoryStore``. Import the driver inside it.
            ``open_memory_store(url, migrate=True)`` migrates afterwards.
        package: the distribution that ships the backend.
        description: one line for humans.
    """

    _kind = "memory store backend"


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxBackend:
    """A sandbox backend a plugin offers for ``run_code``.

    Attributes:
        name: the backend's name, which deployments map profiles to
            (``subprocess``, ``namespaces``, ``oci``).
        open: async factory called as ``await open(**options)``; it checks what the
            machine allows (a missing binary, no user namespaces) and raises a clear
            error when the backend cannot run here.
        package: the distribution that ships it.
        description: one line for humans.
    """

    name: str
    open: Callable[..., Awaitable[Sandbox]]
    package: str
    description: str = ""

    def __post_init__(self) -> None:
        _check_name("sandbox backend", self.name)
        _check_factory("sandbox backend", self.name, "open", self.open, self.package, is_async=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSourceFactory:
    """A source of remote tools a plugin offers (MCP servers, A2A peers...).

    Installing the plugin is what lets Specs that name such tools publish: the factory's
    ``capability`` is the Spec field it makes runnable. A ``Runtime`` built without
    explicit ``tool_sources`` builds one source per installed factory.

    Attributes:
        name: a short label, shown by ``psych doctor``.
        capability: the Spec field this source runs (``"mcp_servers"``, ``"a2a_peers"``).
        build: called as ``build(http=..., secrets=...)`` with the Runtime's
            ``HttpTransport`` (or None) and ``SecretResolver`` (or None), and also
            ``sandbox=`` (the Runtime's default sandbox, or None) when
            ``takes_sandbox`` is set; returns a
            ``psych_runtime.tools.sources.ToolSource``. Import heavy modules inside it.
        package: the distribution that ships it.
        description: one line for humans.
        takes_sandbox: ``build`` accepts ``sandbox=``, to start what it runs (an MCP
            server's process, say) inside the Runtime's sandbox.
    """

    name: str
    capability: str
    build: Callable[..., object]
    package: str
    description: str = ""
    takes_sandbox: bool = False

    def __post_init__(self) -> None:
        _check_name("tool source", self.name)
        if not isinstance(self.capability, str) or not self.capability:
            raise ValueError(f"tool source {self.name!r}: capability must name a Spec field")
        _check_factory("tool source", self.name, "build", self.build, self.package, is_async=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class TelemetryBackend:
    """A telemetry adapter a plugin offers (OpenTelemetry, say).

    A ``Runtime`` or ``Worker`` built without ``telemetry=`` uses the first installed
    one, and ``dispatch`` asks it for the caller's trace context.

    Attributes:
        name: a short label, shown by ``psych doctor``.
        build: called with no arguments; returns the ``Telemetry``. It should take its
            providers from the process-wide configuration the consumer set up.
        package: the distribution that ships it.
        description: one line for humans.
    """

    name: str
    build: Callable[[], Telemetry]
    package: str
    description: str = ""

    def __post_init__(self) -> None:
        _check_name("telemetry backend", self.name)
        _check_factory(
            "telemetry backend", self.name, "build", self.build, self.package, is_async=False
        )


@dataclass(frozen=True, slots=True)
class DoctorResult:
    """The outcome of one health check.

    Attributes:
        ok: whether the check passed; any failure makes ``psych doctor`` exit 1.
        detail: what was found, in one line; say what to do when ``ok`` is False.
    """

    ok: bool
    detail: str


@dataclass(frozen=True, slots=True)
class DoctorCheck:
    """A health check a plugin contributes to ``psych doctor``.

    Attributes:
        name: a short label shown next to the result.
        run: performs the check synchronously. It must not start a Worker and should
            stay off the network unless that is the whole point of the check; an
            exception counts as a failed check rather than crashing the report.
    """

    name: str
    run: Callable[[], DoctorResult]

    def __post_init__(self) -> None:
        _check_name("doctor check", self.name)
        if not callable(self.run):
            raise ValueError(f"doctor check {self.name!r}: run must be callable")


def import_check(name: str, module: str, *, ok: str, missing: str) -> DoctorCheck:
    """A health check that passes when ``module`` can be imported.

    Most adapters only need to say whether their driver imports; this builds that check
    from the module name and two messages instead of a try/except in every plugin. The
    module is imported only when the check runs, never when the plugin registers it,
    so loading a plugin stays cheap.

    Example::

        @hookimpl
        def psych_doctor_checks(register):
            register(
                import_check(
                    "acme store",
                    "acme_driver",
                    ok="acme_driver {version} available",
                    missing="cannot import acme_driver ({error}); pip install acme-psych",
                )
            )

    Args:
        name: the label ``psych doctor`` shows next to the result.
        module: the dotted name of the module to import.
        ok: the detail when the import works; ``{version}`` in it is replaced by the
            module's ``__version__`` (``unknown`` when it has none).
        missing: the detail when the import fails; ``{error}`` in it is replaced by
            the ``ImportError``'s message. Say what to install.

    Returns:
        A ``DoctorCheck`` to pass to ``register``.
    """

    def run() -> DoctorResult:
        try:
            imported = importlib.import_module(module)
        except ImportError as exc:
            return DoctorResult(False, missing.format(error=exc))
        version = getattr(imported, "__version__", "unknown")
        return DoctorResult(True, ok.format(version=version))

    return DoctorCheck(name, run)


__all__ = [
    "BlobStoreBackend",
    "DoctorCheck",
    "DoctorResult",
    "MemoryStoreBackend",
    "SandboxBackend",
    "StoreBackend",
    "TelemetryBackend",
    "ToolSourceFactory",
    "import_check",
]
