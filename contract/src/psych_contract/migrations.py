"""Checks an adapter's own migration tests make of a store they have just upgraded.

The suites in this package start from an empty, migrated store; what a real database
brings from an older release (rows written before a table or column existed) only an
adapter's tests can set up. These helpers say what the store must then answer.
"""

from typing import Protocol

import pytest

from psych_contract import _data as data
from psych_runtime import Store
from psych_runtime import Version
from psych_runtime.adapters.memory import MemoryKey
from psych_runtime.adapters.memory import MemoryStore
from psych_runtime.adapters.store import Migratable
from psych_runtime.adapters.store import SchemaNotMigrated


class MigratableMemory(MemoryStore, Migratable, Protocol):
    """A memory store with a schema of its own to migrate."""


async def check_versions_before_grants(store: Store, legacy: Version) -> None:
    """``legacy``, stored before tenant grants existed, is every tenant's after migrating.

    Versions written by the first schema carry no grant, and no tenant may lose one it
    could read before the upgrade; a Version published after the upgrade is granted to
    its tenant alone, as on a store created new.
    """
    for tenant in ("tenant-a", "tenant-b", None):
        got = await store.get_version(legacy.hash, tenant=tenant)
        assert got is not None, tenant
        assert got.published_at == legacy.published_at
    fresh = data.version("fresh")
    await store.put_version(fresh, tenant="tenant-a")
    assert await store.get_version(fresh.hash, tenant="tenant-b") is None


async def check_unmigrated_memory_refused(
    memory: MigratableMemory, applies: list[int], *, match: str = "migrate"
) -> None:
    """A memory store on a database never migrated refuses every call until it migrates.

    Args:
        memory: the store under test, on a database nobody has migrated yet.
        applies: the schema versions its ``migrate()`` must then apply.
        match: what the first refusal's message must contain (a regular expression).
    """
    key = MemoryKey(tenant="acme", end_user_id="alice")
    with pytest.raises(SchemaNotMigrated, match=match):
        await memory.remember(key, "prefers email")
    with pytest.raises(SchemaNotMigrated):
        await memory.recall(key)
    with pytest.raises(SchemaNotMigrated):
        await memory.forget(key, "mem_x")
    with pytest.raises(SchemaNotMigrated):
        await memory.erase(key)
    assert await memory.migrate() == applies
    assert await memory.recall(key) == ()


__all__ = ["check_unmigrated_memory_refused", "check_versions_before_grants"]
