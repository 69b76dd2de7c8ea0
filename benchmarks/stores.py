"""The stores the benchmarks run against, each a factory of fresh, empty stores."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from psych_runtime.store.memory import InMemoryStore
from psych_runtime.store.port import Store


class StoreFactory:
    """Builds a fresh store per benchmark; says when its backend is unreachable."""

    def __init__(self, build: Callable[[], contextlib.AbstractAsyncContextManager[Store]]) -> None:
        self._build = build
        self.unavailable_reason = ""

    async def available(self) -> bool:
        try:
            async with self._build():
                return True
        except Exception as error:
            self.unavailable_reason = f"{type(error).__name__}: {error}"
            return False

    def __call__(self) -> contextlib.AbstractAsyncContextManager[Store]:
        return self._build()


@contextlib.asynccontextmanager
async def _memory() -> AsyncIterator[Store]:
    yield InMemoryStore()


STORE_FACTORIES: dict[str, Any] = {"memory": StoreFactory(_memory)}
