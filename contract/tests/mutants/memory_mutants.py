"""Deliberately wrong MemoryStores, each breaking one promise the way real adapters have.

A mutant is a thin wrapper around a correct store (an ``InMemoryMemoryStore`` or a
``SqliteMemoryStore``) or a subclass of one. Each names the contract cases that must
fail against it; ``test_memory_mutants`` checks that they do.
"""

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from psych_runtime.adapters import InMemoryMemoryStore
from psych_runtime.adapters import Memory
from psych_runtime.adapters import MemoryKey
from psych_runtime.adapters import MemoryStore
from psych_runtime.adapters import RawItem
from psych_runtime.adapters import RawStorage
from psych_runtime.adapters import check_memory_key
from psych_store_sqlite import SqliteMemoryStore
from psych_store_sqlite import _queries as ops


class ForwardingMemory:
    """Passes every call to ``inner``; a mutant overrides the call it breaks."""

    def __init__(self, inner: MemoryStore) -> None:
        self.inner = inner

    async def remember(self, key: MemoryKey, content: str) -> Memory:
        return await self.inner.remember(key, content)

    async def forget(self, key: MemoryKey, memory_id: str) -> bool:
        return await self.inner.forget(key, memory_id)

    async def recall(self, key: MemoryKey, *, limit: int | None = None) -> tuple[Memory, ...]:
        return await self.inner.recall(key, limit=limit)

    async def erase(self, key: MemoryKey) -> int:
        return await self.inner.erase(key)

    async def raw_storage(self) -> list[RawItem]:
        assert isinstance(self.inner, RawStorage)
        return await self.inner.raw_storage()

    async def close(self) -> None:
        await self.inner.close()


class EraseOnlyHides(ForwardingMemory):
    """Erase marks the facts hidden and filters them out; their rows stay."""

    def __init__(self, inner: MemoryStore) -> None:
        super().__init__(inner)
        self._hidden: set[str] = set()

    async def forget(self, key: MemoryKey, memory_id: str) -> bool:
        if memory_id in self._hidden:
            return False
        return await self.inner.forget(key, memory_id)

    async def recall(self, key: MemoryKey, *, limit: int | None = None) -> tuple[Memory, ...]:
        facts = [f for f in await self.inner.recall(key) if f.id not in self._hidden]
        return tuple(facts if limit is None else facts[-limit:]) if limit != 0 else ()

    async def erase(self, key: MemoryKey) -> int:
        facts = await self.recall(key)
        self._hidden.update(fact.id for fact in facts)
        return len(facts)


class WildcardEndUser(ForwardingMemory):
    """Matches end users as glob or LIKE patterns (``%`` as ``*``, ``_`` as ``?``)."""

    def __init__(self, inner: MemoryStore) -> None:
        super().__init__(inner)
        self._users: dict[str, set[str]] = {}

    async def remember(self, key: MemoryKey, content: str) -> Memory:
        self._users.setdefault(key.tenant, set()).add(key.end_user_id)
        return await self.inner.remember(key, content)

    def _matching(self, key: MemoryKey) -> list[MemoryKey]:
        pattern = key.end_user_id.replace("%", "*").replace("_", "?")
        users = sorted(self._users.get(key.tenant, set()))
        return [
            MemoryKey(tenant=key.tenant, end_user_id=u)
            for u in users
            if fnmatch.fnmatchcase(u, pattern)
        ]

    async def recall(self, key: MemoryKey, *, limit: int | None = None) -> tuple[Memory, ...]:
        check_memory_key(key)
        facts = [f for k in self._matching(key) for f in await self.inner.recall(k)]
        facts.sort(key=lambda fact: fact.created_at)
        return tuple(facts if limit is None else facts[-limit:])


class CaseInsensitiveKeys(ForwardingMemory):
    """Folds the case of both key parts, as a case-insensitive collation would."""

    @staticmethod
    def _folded(key: MemoryKey) -> MemoryKey:
        return MemoryKey.model_construct(
            tenant=key.tenant.lower(), end_user_id=key.end_user_id.lower()
        )

    async def remember(self, key: MemoryKey, content: str) -> Memory:
        fact = await self.inner.remember(self._folded(key), content)
        return fact.model_copy(update={"key": key})

    async def forget(self, key: MemoryKey, memory_id: str) -> bool:
        return await self.inner.forget(self._folded(key), memory_id)

    async def recall(self, key: MemoryKey, *, limit: int | None = None) -> tuple[Memory, ...]:
        facts = await self.inner.recall(self._folded(key), limit=limit)
        return tuple(fact.model_copy(update={"key": key}) for fact in facts)

    async def erase(self, key: MemoryKey) -> int:
        return await self.inner.erase(self._folded(key))


class SqliteEraseWithoutScrub(SqliteMemoryStore):
    """Deletes the rows but leaves the write-ahead log as it is."""

    async def erase(self, key: MemoryKey) -> int:
        check_memory_key(key)
        return await self._lanes.write(lambda conn: ops.erase(conn, key))


@dataclass(frozen=True)
class MemoryMutant:
    """One broken behaviour, how to build it on each base, and the cases that catch it.

    Attributes:
        name: a short id, used in test ids and the ``PSYCH_MUTANT`` variable.
        caught_by: contract cases that must each fail against this mutant.
        memory: builds it on ``InMemoryMemoryStore`` (None: not applicable there).
        sqlite: builds it on a SQLite file (None: not applicable there).
    """

    name: str
    caught_by: tuple[str, ...]
    memory: Callable[[], MemoryStore] | None
    sqlite: Callable[[Path], MemoryStore] | None


def _wrap(
    kind: type[ForwardingMemory],
) -> tuple[Callable[[], MemoryStore], Callable[[Path], MemoryStore]]:
    return (
        lambda: kind(InMemoryMemoryStore()),
        lambda path: kind(SqliteMemoryStore(f"sqlite:///{path}")),
    )


MEMORY_MUTANTS: tuple[MemoryMutant, ...] = (
    MemoryMutant(
        "erase-only-hides",
        ("test_erase_leaves_no_byte_of_the_facts",),
        *_wrap(EraseOnlyHides),
    ),
    MemoryMutant(
        "wildcard-end-user",
        ("test_scoped_calls_refuse_look_alike_keys",),
        *_wrap(WildcardEndUser),
    ),
    MemoryMutant(
        "case-insensitive-keys",
        ("test_scoped_calls_refuse_look_alike_keys", "test_keys_are_case_sensitive"),
        *_wrap(CaseInsensitiveKeys),
    ),
    MemoryMutant(
        "sqlite-erase-without-scrub",
        ("test_erase_leaves_no_byte_of_the_facts",),
        None,
        lambda path: SqliteEraseWithoutScrub(f"sqlite:///{path}"),
    ),
)
"""Every memory mutant; a new way a memory store was found to be wrong belongs here."""

MEMORY_CONTROL = MemoryMutant(
    "control",
    tuple(sorted({case for mutant in MEMORY_MUTANTS for case in mutant.caught_by})),
    *_wrap(ForwardingMemory),
)
"""No fault at all: every case the mutants are checked with must pass against it."""


def memory_mutant(name: str) -> MemoryMutant:
    """The memory mutant called ``name`` (or the fault-free ``control``)."""
    for mutant in (*MEMORY_MUTANTS, MEMORY_CONTROL):
        if mutant.name == name:
            return mutant
    raise KeyError(name)


__all__ = ["MEMORY_CONTROL", "MEMORY_MUTANTS", "ForwardingMemory", "MemoryMutant", "memory_mutant"]
