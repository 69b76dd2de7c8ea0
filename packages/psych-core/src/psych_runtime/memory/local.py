"""A MemoryStore that keeps facts in this process; gone when the process exits.

For tests, demos and single-process tools. Facts that must outlive the process belong
in a durable MemoryStore from a store adapter (SQLite, PostgreSQL, MySQL, DynamoDB).
"""

import asyncio

from psych_runtime.core.raw import RawItem
from psych_runtime.memory.checks import check_memory_key
from psych_runtime.memory.checks import check_recall_limit
from psych_runtime.memory.checks import mint_memory
from psych_runtime.memory.checks import newest_facts
from psych_runtime.memory.checks import no_memory_can_match
from psych_runtime.memory.port import Memory
from psych_runtime.memory.port import MemoryKey


class InMemoryMemoryStore:
    """Facts in a dict keyed by ``MemoryKey``, guarded by one lock."""

    def __init__(self) -> None:
        self._facts: dict[MemoryKey, list[Memory]] = {}
        self._lock = asyncio.Lock()
        self._closed = False

    def _open(self) -> None:
        if self._closed:
            raise RuntimeError("this memory store is closed")

    async def remember(self, key: MemoryKey, content: str) -> Memory:
        """Keep a new fact of ``key``."""
        self._open()
        fact = mint_memory(key, content)
        async with self._lock:
            self._facts.setdefault(key, []).append(fact)
        return fact

    async def forget(self, key: MemoryKey, memory_id: str) -> bool:
        """Remove one fact of ``key``; False when it has no such fact."""
        self._open()
        if no_memory_can_match(key, memory_id):
            return False
        async with self._lock:
            facts = self._facts.get(key, [])
            for index, fact in enumerate(facts):
                if fact.id == memory_id:
                    del facts[index]
                    return True
        return False

    async def recall(self, key: MemoryKey, *, limit: int | None = None) -> tuple[Memory, ...]:
        """The facts of ``key``, oldest first."""
        self._open()
        check_memory_key(key)
        check_recall_limit(limit)
        async with self._lock:
            return newest_facts(list(self._facts.get(key, [])), limit)

    async def erase(self, key: MemoryKey) -> int:
        """Delete every fact of ``key``."""
        self._open()
        check_memory_key(key)
        async with self._lock:
            return len(self._facts.pop(key, []))

    async def raw_storage(self) -> list[RawItem]:
        """See ``RawStorage.raw_storage``: every fact held, as JSON."""
        return [
            RawItem(f"fact {fact.id}", fact.model_dump_json().encode())
            for facts in self._facts.values()
            for fact in facts
        ]

    async def close(self) -> None:
        """Forget everything; the store refuses calls afterwards."""
        self._closed = True
        self._facts.clear()


__all__ = ["InMemoryMemoryStore"]
