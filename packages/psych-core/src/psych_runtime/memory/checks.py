"""The rules every MemoryStore applies before it touches its backend.

Kept public and in one place, like ``psych_runtime.store.checks``, so that the
in-process store, the first-party adapters and a third party's refuse the same input
with the same ``ValueError``, and mint facts the same way.
"""

import secrets
import threading
from abc import ABC
from abc import abstractmethod
from datetime import UTC
from datetime import datetime
from datetime import timedelta

from psych_runtime.core.storable import key_problem
from psych_runtime.memory.port import MAX_MEMORY_CHARS
from psych_runtime.memory.port import Memory
from psych_runtime.memory.port import MemoryKey

_clock_lock = threading.Lock()
_last_minted = datetime.min.replace(tzinfo=UTC)


def check_memory_content(content: str) -> str:
    """Return ``content`` if every store can keep it as a fact, else raise ``ValueError``."""
    if not isinstance(content, str):
        raise ValueError(f"a memory is text, not {type(content).__name__}")
    if not content.strip():
        raise ValueError("a memory cannot be empty")
    if len(content) > MAX_MEMORY_CHARS:
        raise ValueError(f"a memory is at most {MAX_MEMORY_CHARS} characters, got {len(content)}")
    problem = key_problem(content)
    if problem is not None:
        raise ValueError(f"a memory cannot be stored: {problem}")
    return content


def check_memory_key(key: MemoryKey) -> MemoryKey:
    """Refuse a key that no store could index (a NUL or lone surrogate in either part)."""
    if not isinstance(key, MemoryKey):
        raise ValueError(f"expected a MemoryKey, got {type(key).__name__}")
    for part, value in (("tenant", key.tenant), ("end_user_id", key.end_user_id)):
        problem = key_problem(value)
        if problem is not None:
            raise ValueError(f"memory key {part} cannot be stored: {problem}")
    return key


def no_memory_can_match(key: MemoryKey, memory_id: object) -> bool:
    """Check ``forget``'s key, and say whether no fact can have ``memory_id``.

    Ids are minted by ``mint_memory``: never empty, and free of the NUL character and
    of lone surrogates, which not every backend can even compare. A store calls this
    first in ``forget`` and returns False when it holds, without asking its backend.

    Raises:
        ValueError: the key cannot be stored.
    """
    check_memory_key(key)
    return not isinstance(memory_id, str) or not memory_id or key_problem(memory_id) is not None


def check_recall_limit(limit: int | None) -> int | None:
    """Refuse a recall limit that is not a positive int (None means every fact)."""
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive int or None, got {limit!r}")
    return limit


def _next_instant() -> datetime:
    """Now, but strictly after every instant this process minted before.

    Facts are recalled in ``created_at`` order, so two facts remembered one after the
    other in the same microsecond must still come back in that order.
    """
    global _last_minted
    with _clock_lock:
        now = datetime.now(UTC)
        if now <= _last_minted:
            now = _last_minted + timedelta(microseconds=1)
        _last_minted = now
        return now


def mint_memory(key: MemoryKey, content: str) -> Memory:
    """Check ``key`` and ``content`` and build the fact a store is about to keep.

    The id sorts by creation time, then by a random tail that keeps it unique.
    """
    check_memory_key(key)
    check_memory_content(content)
    at = _next_instant()
    stamp = int(at.timestamp() * 1_000_000)
    return Memory(
        id=f"mem_{stamp:014x}{secrets.token_hex(6)}", key=key, content=content, created_at=at
    )


def newest_facts(facts: list[Memory], limit: int | None) -> tuple[Memory, ...]:
    """Facts already in oldest-first order, cut to the newest ``limit`` (all if None)."""
    kept = facts if limit is None else facts[-limit:] if limit < len(facts) else facts
    return tuple(kept)


class CheckedMemoryStore(ABC):
    """The four ``MemoryStore`` calls, each checking its input before the backend sees it.

    A memory store subclasses it (beside its database base class) and writes the four
    backend steps below; the checks, and the answers given without the backend (a
    ``forget`` of an id no store ever issued is False), are then those of every store.
    """

    async def remember(self, key: MemoryKey, content: str) -> Memory:
        """Keep a new fact of ``key`` and return it as kept.

        Raises:
            ValueError: the key or the content cannot be stored (nothing is written).
        """
        return await self._keep(mint_memory(key, content))

    async def forget(self, key: MemoryKey, memory_id: str) -> bool:
        """Delete the fact ``memory_id`` of ``key``; False when ``key`` has no such fact.

        Raises:
            ValueError: the key cannot be stored.
        """
        if no_memory_can_match(key, memory_id):
            return False
        return await self._forget(key, memory_id)

    async def recall(self, key: MemoryKey, *, limit: int | None = None) -> tuple[Memory, ...]:
        """The facts of ``key``, oldest first; only the newest ``limit`` when given.

        Raises:
            ValueError: the key cannot be stored, or ``limit`` is not a positive int.
        """
        check_memory_key(key)
        check_recall_limit(limit)
        return await self._recall(key, limit)

    async def erase(self, key: MemoryKey) -> int:
        """Delete every fact of ``key`` for good; returns how many there were.

        Raises:
            ValueError: the key cannot be stored.
        """
        check_memory_key(key)
        return await self._erase(key)

    @abstractmethod
    async def _keep(self, fact: Memory) -> Memory:
        """Write ``fact``, just minted, and return the fact as kept."""

    @abstractmethod
    async def _forget(self, key: MemoryKey, memory_id: str) -> bool:
        """Delete the fact ``memory_id`` of ``key``, both checked; False when there is none."""

    @abstractmethod
    async def _recall(self, key: MemoryKey, limit: int | None) -> tuple[Memory, ...]:
        """Read the facts of ``key``, oldest first, the newest ``limit`` when not None."""

    @abstractmethod
    async def _erase(self, key: MemoryKey) -> int:
        """Delete every fact of ``key`` (checked) for good; return how many there were."""


__all__ = [
    "CheckedMemoryStore",
    "check_memory_content",
    "check_memory_key",
    "check_recall_limit",
    "mint_memory",
    "newest_facts",
    "no_memory_can_match",
]
