"""A Version belongs to the tenant that published it, on every store.

Through the public API only: tenant B can neither dispatch tenant A's Version (by
object or by hash) nor tell it exists, a shared Version works for everyone, and two
tenants publishing the same Spec each hold their own copy.
"""

from collections.abc import Awaitable
from collections.abc import Callable
from datetime import UTC
from datetime import datetime

import pytest

import psych_runtime
from psych_runtime.testing import FakeModel

from .conftest import EVERY

ACME = psych_runtime.Scope(tenant="acme")
GLOBEX = psych_runtime.Scope(tenant="globex")
UrlFor = Callable[[str], Awaitable[str]]


def _spec(name: str, instructions: str) -> psych_runtime.AgentSpec:
    return psych_runtime.AgentSpec(
        name=name,
        instructions=instructions,
        model=psych_runtime.ModelRef(model="fake-standard"),
    )


async def _answered(
    store: psych_runtime.Store, scope: psych_runtime.Scope, version: psych_runtime.Version
) -> psych_runtime.RunReport:
    """Run ``version`` for ``scope`` to its answer and return the Run's report."""
    model = FakeModel().turn(text="done")
    async with psych_runtime.session(model, store=store, scope=scope) as s:
        view = await s.ask(version, "go", timeout=30)
    assert view.finished
    return await psych_runtime.report(store, view.run_id, scope=scope)


async def _refused(
    store: psych_runtime.Store,
    version: psych_runtime.Version | psych_runtime.VersionHash,
    scope: psych_runtime.Scope,
) -> psych_runtime.VersionNotFound:
    with pytest.raises(psych_runtime.VersionNotFound) as caught:
        await psych_runtime.dispatch(store, version, "hi", scope=scope)
    return caught.value


@pytest.mark.parametrize("kind", EVERY)
async def test_another_tenants_version_cannot_be_dispatched_or_read(
    kind: str, store_url_for: UrlFor
) -> None:
    store = await psych_runtime.open_store(await store_url_for(kind))
    try:
        secret = _spec("pricing", "Acme's negotiated discount is 37%.")
        owned = await psych_runtime.publish(store, secret, scope=ACME)
        unknown = psych_runtime.VersionHash("sha256:" + "1" * 64)

        # Refused by object and by hash, with exactly what an unknown hash gets.
        by_object = await _refused(store, owned, GLOBEX)
        by_hash = await _refused(store, owned.hash, GLOBEX)
        never_published = await _refused(store, unknown, GLOBEX)
        assert str(by_object) == str(by_hash) == str(never_published).replace(unknown, owned.hash)

        # The owner runs it and reads its report; the other tenant reads nothing.
        acme_report = await _answered(store, ACME, owned)
        assert acme_report.spec_name == "pricing"
        runs = await psych_runtime.dispatch(store, owned, "again", scope=ACME)
        with pytest.raises(psych_runtime.AccessDenied):
            await psych_runtime.report(store, runs.run_id, scope=GLOBEX)
    finally:
        await store.close()


@pytest.mark.parametrize("kind", EVERY)
async def test_a_shared_version_serves_every_tenant(kind: str, store_url_for: UrlFor) -> None:
    store = await psych_runtime.open_store(await store_url_for(kind))
    try:
        catalogue = await psych_runtime.publish(
            store, _spec("catalogue", "Answer from the public catalogue."), shared=True
        )
        for scope in (ACME, GLOBEX):
            report = await _answered(store, scope, catalogue)
            assert report.spec_name == "catalogue"
        with pytest.raises(psych_runtime.SharedVersionScope):
            await psych_runtime.publish(store, _spec("x", "y"), scope=ACME, shared=True)
    finally:
        await store.close()


@pytest.mark.parametrize("kind", EVERY)
async def test_two_tenants_publishing_one_spec_each_own_it(
    kind: str, store_url_for: UrlFor
) -> None:
    store = await psych_runtime.open_store(await store_url_for(kind))
    try:
        spec = _spec("triage", "Sort tickets by urgency.")
        mine = await psych_runtime.publish(store, spec, scope=ACME)
        before_theirs = datetime.now(UTC)
        theirs = await psych_runtime.publish(store, spec, scope=GLOBEX)
        assert theirs.hash == mine.hash
        # Globex's copy carries its own publication time, so it learns nothing of Acme's.
        assert theirs.published_at >= before_theirs
        again = await psych_runtime.publish(store, spec, scope=ACME)
        assert again.published_at == mine.published_at
        for scope in (ACME, GLOBEX):
            assert (await _answered(store, scope, mine)).spec_name == "triage"
        assert (await _refused(store, mine, psych_runtime.Scope(tenant="initech"))) is not None
    finally:
        await store.close()


@pytest.mark.parametrize("kind", EVERY)
async def test_publishing_without_a_scope_is_for_the_default_tenant(
    kind: str, store_url_for: UrlFor
) -> None:
    store = await psych_runtime.open_store(await store_url_for(kind))
    try:
        version = await psych_runtime.publish(store, _spec("solo", "Help the one user."))
        report = await _answered(store, psych_runtime.Scope(tenant="default"), version)
        assert report.spec_name == "solo"
        await _refused(store, version, ACME)
    finally:
        await store.close()


@pytest.mark.parametrize("kind", EVERY)
async def test_publishing_for_a_tenant_no_store_can_hold_is_refused(
    kind: str, store_url_for: UrlFor
) -> None:
    store = await psych_runtime.open_store(await store_url_for(kind))
    try:
        for tenant in ("acme\x00", "\x00"):
            with pytest.raises(psych_runtime.UnstorableValue):
                await psych_runtime.publish(
                    store, _spec("x", "y"), scope=psych_runtime.Scope(tenant=tenant)
                )
    finally:
        await store.close()
