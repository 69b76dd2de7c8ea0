"""Helpers an adapter's own tests use around the stores they open by hand."""

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


__all__ = ["Closable", "closing"]
