"""Dispatch looks a Version up once per store and tenant, and never trusts an absence."""

import pytest

import psych_runtime
from psych_runtime import AgentSpec
from psych_runtime import InMemoryStore
from psych_runtime import Scope
from psych_runtime import VersionNotFound
from psych_runtime.core.ids import VersionHash
from psych_runtime.core.version import Version
from psych_runtime.testing import ForwardingStore

ACME = Scope(tenant="acme")
GLOBEX = Scope(tenant="globex")


class Lookups(ForwardingStore):
    def __init__(self) -> None:
        super().__init__(InMemoryStore())
        self.lookups: list[tuple[str, str | None]] = []

    async def get_version(
        self, version_hash: VersionHash, *, tenant: str | None = None
    ) -> Version | None:
        self.lookups.append((version_hash, tenant))
        return await super().get_version(version_hash, tenant=tenant)


async def test_repeated_dispatches_of_a_visible_version_look_it_up_once() -> None:
    store = Lookups()
    version = await psych_runtime.publish(store, AgentSpec(name="a", model="m"), scope=ACME)
    for _ in range(3):
        await psych_runtime.dispatch(store, version, "hi", scope=ACME)
    assert store.lookups == [(version.hash, "acme")]


async def test_another_tenant_is_still_asked_about_and_refused() -> None:
    store = Lookups()
    version = await psych_runtime.publish(store, AgentSpec(name="a", model="m"), scope=ACME)
    await psych_runtime.dispatch(store, version, "hi", scope=ACME)
    with pytest.raises(VersionNotFound):
        await psych_runtime.dispatch(store, version, "hi", scope=GLOBEX)
    assert store.lookups == [(version.hash, "acme"), (version.hash, "globex")]


async def test_a_version_not_found_is_looked_up_again_once_published() -> None:
    store = Lookups()
    spec = AgentSpec(name="a", model="m")
    version = await psych_runtime.publish(store, spec, scope=ACME)
    with pytest.raises(VersionNotFound):
        await psych_runtime.dispatch(store, version, "hi", scope=GLOBEX)
    await psych_runtime.publish(store, spec, scope=GLOBEX)
    await psych_runtime.dispatch(store, version, "hi", scope=GLOBEX)
    assert store.lookups == [(version.hash, "globex"), (version.hash, "globex")]
