"""Helpers an adapter's own tests and fixtures use around the stores they open by hand."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Protocol


class Closable(Protocol):
    """Anything released by ``await close()``: a store, a memory store, a blob store."""

    async def close(self) -> None:
        """Release what the object holds."""
        ...


@asynccontextmanager
async def closing[C: Closable](resource: C) -> AsyncIterator[C]:
    """Yield ``resource`` and close it on the way out, whether the block failed or not.

    ``contextlib.aclosing`` calls ``aclose()``; the ports name it ``close()``.
    """
    try:
        yield resource
    finally:
        await resource.close()


class MigratableClosable(Closable, Protocol):
    """A store with a schema: migrated before use, closed after."""

    async def migrate(self) -> list[int]:
        """Bring the schema up to date; the versions applied."""
        ...


@asynccontextmanager
async def migrated[M: MigratableClosable](resource: M) -> AsyncIterator[M]:
    """Migrate ``resource``, yield it, and close it on the way out (also when migrating fails).

    The body of most adapter fixtures: ``async with migrated(MyStore(url)) as store:
    yield store``.
    """
    async with closing(resource):
        await resource.migrate()
        yield resource


__all__ = ["Closable", "MigratableClosable", "closing", "migrated"]
