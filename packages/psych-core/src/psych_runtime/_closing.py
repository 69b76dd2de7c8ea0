"""``ClosedOnExit``: ``async with`` support for anything that has one way to close.

It sits outside the layers so that the lowest one that needs it (the egress transport)
and everything above it can share it.
"""

from abc import ABC
from abc import abstractmethod
from types import TracebackType
from typing import Self


class ClosedOnExit(ABC):
    """``async with`` closes it on the way out; ``close`` says what closing means for it."""

    @abstractmethod
    async def close(self) -> None:
        """Close what is open."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


__all__ = ["ClosedOnExit"]
