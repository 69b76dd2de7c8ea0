"""Checks an adapter's own migration tests make of a store they have just upgraded.

The suites in this package start from an empty, migrated store; what a real database
brings from an older release (rows written before a table or column existed) only an
adapter's tests can set up. These helpers say what the store must then answer.
"""

from psych_contract import _data as data
from psych_runtime import Store, Version


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


__all__ = ["check_versions_before_grants"]
