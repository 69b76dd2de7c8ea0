"""The core's own plugin: the in-memory Store.

psych-runtime reaches this module through its own ``psych_runtime`` entry point, the
same path a third-party plugin takes, so the built-in backend has no privileges a
third party lacks and turning autoload off removes it too.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING

from psych_runtime.plugins.backends import DoctorCheck, DoctorResult, StoreBackend
from psych_runtime.plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    from psych_runtime.store.port import Store

PSYCH_PLUGIN_API = 1

_PACKAGE = "psych-runtime"


async def open_memory_store(url: str, **options: object) -> "Store":
    """Return a new, empty in-memory Store.

    Every call gets its own store: nothing is shared between two ``memory://`` URLs
    and nothing outlives the process, which is what tests and demos want.

    Raises:
        TypeError: options were given; this store has none.
    """
    if options:
        raise TypeError(f"the memory store takes no options, got: {', '.join(sorted(options))}")
    from psych_runtime.store.memory import InMemoryStore  # deferred: keep plugin loading cheap

    return InMemoryStore()


def _memory_store_importable() -> DoctorResult:
    try:
        from psych_runtime.store.memory import InMemoryStore  # noqa: F401
    except ImportError as exc:
        return DoctorResult(False, f"cannot import the in-memory store: {exc}")
    return DoctorResult(True, "available (in-process only: nothing survives a restart)")


@hookimpl
def psych_register_stores(register: Callable[[StoreBackend], None]) -> None:
    """Offer the in-memory Store under ``memory://``."""
    register(
        StoreBackend(
            name="memory",
            schemes=("memory",),
            open=open_memory_store,
            package=_PACKAGE,
            description="In-process store for tests and demos; not durable.",
        )
    )


@hookimpl
def psych_doctor_checks(register: Callable[[DoctorCheck], None]) -> None:
    """Report whether the in-memory Store can be imported."""
    register(DoctorCheck("memory store", _memory_store_importable))
