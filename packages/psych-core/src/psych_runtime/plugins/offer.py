"""Helpers that keep an adapter package's plugin and ``__init__`` modules a few lines long.

A plugin module states what it offers instead of writing a hook function per port::

    psych_register_stores = offer_stores(StoreBackend(name="acme", ...))
    psych_doctor_checks = offer_doctor_checks(import_check("acme store", "acme_driver", ...))

The attribute's name is the hook's name, which is how pluggy matches an implementation
to its specification. And a package whose heavy modules should load on first use
writes ``__getattr__, __dir__ = lazy_exports(__name__, {...})``.
"""

import importlib
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping

from psych_runtime.memory.port import MemoryStore
from psych_runtime.plugins.backends import BlobStoreBackend
from psych_runtime.plugins.backends import DoctorCheck
from psych_runtime.plugins.backends import MemoryStoreBackend
from psych_runtime.plugins.backends import SandboxBackend
from psych_runtime.plugins.backends import StoreBackend
from psych_runtime.plugins.backends import TelemetryBackend
from psych_runtime.plugins.backends import ToolSourceFactory
from psych_runtime.plugins.hookspecs import hookimpl

type Offer[T] = Callable[[Callable[[T], None]], None]
"""A registration hook's implementation: it calls ``register`` once per ``T`` it offers."""


def _offer[T](items: tuple[T, ...], what: str) -> Offer[T]:
    def offer(register: Callable[[T], None]) -> None:
        for item in items:
            register(item)

    offer.__doc__ = f"Offer {len(items)} {what}."
    marked: Offer[T] = hookimpl(offer)
    return marked


def offer_stores(*backends: StoreBackend) -> Offer[StoreBackend]:
    """A ``psych_register_stores`` implementation registering ``backends``."""
    return _offer(backends, "store backend(s)")


def offer_blob_stores(*backends: BlobStoreBackend) -> Offer[BlobStoreBackend]:
    """A ``psych_register_blob_stores`` implementation registering ``backends``."""
    return _offer(backends, "blob store backend(s)")


def offer_memory_stores(*backends: MemoryStoreBackend) -> Offer[MemoryStoreBackend]:
    """A ``psych_register_memory_stores`` implementation registering ``backends``."""
    return _offer(backends, "memory store backend(s)")


def offer_store_and_memory(
    store: StoreBackend, *, memory: Callable[..., Awaitable[MemoryStore]], memory_description: str
) -> tuple[Offer[StoreBackend], Offer[MemoryStoreBackend]]:
    """The two hooks of a store adapter whose memory store lives beside its Runs.

    The memory backend takes the store's name, schemes and package, so one URL opens
    both the Runs and the facts of one database, and the two can never drift apart.
    Assign the pair to ``psych_register_stores, psych_register_memory_stores``.

    Args:
        store: the store backend.
        memory: the memory store's async factory, called as ``await memory(url, **options)``.
        memory_description: one line for humans about the memory backend.
    """
    beside = MemoryStoreBackend(
        name=store.name,
        schemes=store.schemes,
        open=memory,
        package=store.package,
        description=memory_description,
    )
    return offer_stores(store), offer_memory_stores(beside)


def offer_tool_sources(*factories: ToolSourceFactory) -> Offer[ToolSourceFactory]:
    """A ``psych_register_tool_sources`` implementation registering ``factories``."""
    return _offer(factories, "tool source(s)")


def offer_sandboxes(*backends: SandboxBackend) -> Offer[SandboxBackend]:
    """A ``psych_register_sandboxes`` implementation registering ``backends``."""
    return _offer(backends, "sandbox backend(s)")


def offer_telemetry(*backends: TelemetryBackend) -> Offer[TelemetryBackend]:
    """A ``psych_register_telemetry`` implementation registering ``backends``."""
    return _offer(backends, "telemetry backend(s)")


def offer_doctor_checks(*checks: DoctorCheck) -> Offer[DoctorCheck]:
    """A ``psych_doctor_checks`` implementation registering ``checks``."""
    return _offer(checks, "doctor check(s)")


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` that import each export on first access.

    Importing an adapter package then costs nothing beyond the package itself: the
    store module and its database driver load when a program first names the class.

    Args:
        package: the package's ``__name__``, for error messages.
        exports: each lazily loaded name mapped to the module that defines it.
    """

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        loaded = vars(importlib.import_module(package))
        return sorted(set(loaded) | set(exports))

    return __getattr__, __dir__


__all__ = [
    "lazy_exports",
    "offer_blob_stores",
    "offer_doctor_checks",
    "offer_memory_stores",
    "offer_sandboxes",
    "offer_store_and_memory",
    "offer_stores",
    "offer_telemetry",
    "offer_tool_sources",
]
