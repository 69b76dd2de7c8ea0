"""The core's own plugin: the in-memory Store and the in-memory and file BlobStores.

It is written exactly like a third-party plugin (hooks, backend descriptions, a
declared plugin API), so it has no privileges a third party lacks. The manager
registers it always, before any installed plugin and whatever
``PSYCH_DISABLE_PLUGIN_AUTOLOAD`` says, the way pytest and llm register their
built-ins: ``open_store("memory://")`` works in a test that turned discovery off.
"""

from collections.abc import Awaitable
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import unquote
from urllib.parse import urlsplit

from psych_runtime.plugins.backends import BlobStoreBackend
from psych_runtime.plugins.backends import DoctorCheck
from psych_runtime.plugins.backends import MemoryStoreBackend
from psych_runtime.plugins.backends import StoreBackend
from psych_runtime.plugins.backends import import_check
from psych_runtime.plugins.hookspecs import hookimpl
from psych_runtime.store.errors import InvalidStoreUrl

if TYPE_CHECKING:
    from psych_runtime.blob.port import BlobStore
    from psych_runtime.memory.port import MemoryStore
    from psych_runtime.store.port import Store

PSYCH_PLUGIN_API = 1

NAME = "builtin"
"""The name the built-in plugin is registered under."""

_PACKAGE = "psych-runtime"


def _refuse_options(what: str, options: dict[str, object]) -> None:
    """Reject options given to a backend that takes none, naming every one of them."""
    if options:
        raise TypeError(f"{what} takes no options, got: {', '.join(sorted(options))}")


async def open_memory_store(url: str, **options: object) -> "Store":
    """Return a new, empty in-memory Store.

    Every call gets its own store: nothing is shared between two ``memory://`` URLs
    and nothing outlives the process, which is what tests and demos want. It has no
    schema, so ``open_store("memory://", migrate=True)`` has nothing to migrate.

    Args:
        url: ``memory://``.
        **options: none are accepted.

    Raises:
        TypeError: options were given.
    """
    _refuse_options("the memory store", options)
    from psych_runtime.store.memory import InMemoryStore  # deferred: keep plugin loading cheap

    return InMemoryStore()


async def open_memory_blob_store(url: str, **options: object) -> "BlobStore":
    """Return a new, empty in-memory BlobStore (one per call, like ``memory://`` stores).

    Raises:
        TypeError: options were given; this blob store has none.
    """
    _refuse_options("the memory blob store", options)
    from psych_runtime.blob.memory import InMemoryBlobStore  # deferred: keep loading cheap

    return InMemoryBlobStore()


def file_blob_root(url: str) -> str:
    """The directory a ``file:///absolute/dir`` URL names.

    Only local absolute paths are accepted: a host part or a relative path would make
    where the bytes land depend on something other than the URL itself.

    Raises:
        InvalidStoreUrl: the URL names a host, a relative path, a query or a fragment.
    """
    parts = urlsplit(url)
    if parts.scheme.lower() != "file":
        raise InvalidStoreUrl(f"not a file:// URL: {url!r}")
    if parts.netloc not in ("", "localhost"):
        raise InvalidStoreUrl(
            f"file blob store URL {url!r} names host {parts.netloc!r}; "
            "write a local directory as file:///absolute/dir"
        )
    if parts.query or parts.fragment:
        raise InvalidStoreUrl(f"file blob store URL {url!r} cannot carry a query or fragment")
    path = unquote(parts.path)
    if not path.startswith("/"):
        raise InvalidStoreUrl(
            f"file blob store URL {url!r} needs an absolute directory: file:///absolute/dir"
        )
    return path


async def open_file_blob_store(url: str, **options: object) -> "BlobStore":
    """Return a FileBlobStore rooted at the directory the URL names.

    Raises:
        InvalidStoreUrl: see ``file_blob_root``.
        TypeError: options were given; this blob store has none.
    """
    _refuse_options("the file blob store", options)
    root = file_blob_root(url)
    from psych_runtime.blob.filesystem import FileBlobStore  # deferred: keep loading cheap

    return FileBlobStore(root)


def _ours[B](
    kind: Callable[..., B],
    scheme: str,
    open: Callable[..., Awaitable[object]],
    description: str,
    *,
    single_process: bool = False,
) -> B:
    """A backend of ``kind`` that the core ships, named after the one scheme it opens."""
    return kind(
        name=scheme,
        schemes=(scheme,),
        open=open,
        package=_PACKAGE,
        description=description,
        single_process=single_process,
    )


def _in_process[B](kind: Callable[..., B], open: Callable[..., Awaitable[object]], what: str) -> B:
    """A backend of ``kind`` whose data lives in this process only, under ``memory://``.

    Each of the core's stores has one; they are described alike so that ``psych doctor``
    and the contract tests treat them alike (not durable, not shared between processes).
    """
    description = f"{what} for tests and demos; not durable."
    return _ours(kind, "memory", open, description, single_process=True)


@hookimpl
def psych_register_stores(register: Callable[[StoreBackend], None]) -> None:
    """Offer the in-memory Store under ``memory://``."""
    register(_in_process(StoreBackend, open_memory_store, "In-process store"))


@hookimpl
def psych_register_blob_stores(register: Callable[[BlobStoreBackend], None]) -> None:
    """Offer the in-memory BlobStore under ``memory://`` and a directory under ``file://``."""
    register(_in_process(BlobStoreBackend, open_memory_blob_store, "In-process blob store"))
    description = "One file per blob under a local or mounted directory."
    register(_ours(BlobStoreBackend, "file", open_file_blob_store, description))


async def open_local_memory(url: str, **options: object) -> "MemoryStore":
    """Return a new, empty MemoryStore kept in this process (one per call).

    Raises:
        TypeError: options were given; this memory store has none.
    """
    _refuse_options("the in-process memory store", options)
    from psych_runtime.memory.local import InMemoryMemoryStore  # deferred: keep loading cheap

    return InMemoryMemoryStore()


@hookimpl
def psych_register_memory_stores(register: Callable[[MemoryStoreBackend], None]) -> None:
    """Offer facts kept in this process under ``memory://``."""
    register(_in_process(MemoryStoreBackend, open_local_memory, "Facts kept in this process"))


@hookimpl
def psych_doctor_checks(register: Callable[[DoctorCheck], None]) -> None:
    """Report whether the in-memory Store can be imported."""
    register(
        import_check(
            "memory store",
            "psych_runtime.store.memory",
            ok="available (in-process only: nothing survives a restart)",
            missing="cannot import the in-memory store: {error}",
        )
    )
