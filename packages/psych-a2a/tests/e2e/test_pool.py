"""``A2APool`` and ``A2ATools(pool, ...)`` as the reference API writes them.

One pool per process serves every source and tenant; isolation comes from the key.
"""

import inspect
from typing import Any

import pytest

from psych_a2a import A2APool
from psych_a2a import A2APoolKey
from psych_a2a import A2ATools
from psych_runtime import EgressPolicy
from psych_runtime import HttpTransport
from psych_runtime import Scope
from psych_runtime import StaticSecretResolver
from psych_runtime.adapters import SourceCallFailed
from psych_runtime.adapters import ToolSource
from psych_runtime.spec import A2APeer

from ..conftest import LOOPBACK
from ..peer import running_peer
from .test_outbound import ACME
from .test_outbound import GLOBEX
from .test_outbound import PerTenant
from .test_outbound import _call
from .test_outbound import _spec


async def test_the_reference_constructors_work_as_written() -> None:
    async with running_peer() as (base, seen), HttpTransport(policy=LOOPBACK) as http:
        pool = A2APool(transport=http, secrets=StaticSecretResolver({}), card_ttl_seconds=300.0)
        tools = A2ATools(pool, tenant_policy=None)
        assert isinstance(tools, ToolSource) and tools.pool is pool
        spec = _spec(A2APeer(name="echo", url=base, allow=("echo",)))
        [echo] = (await tools.resolve(spec, ACME, permitted=None)).tools
        result = await _call(tools, spec, echo, message="echo as written")
        await pool.close()
    assert result["text"] == "as written"
    assert seen.texts == ["echo as written"]


async def test_the_card_is_kept_five_minutes_by_default() -> None:
    assert inspect.signature(A2APool).parameters["card_ttl_seconds"].default == 300.0
    async with running_peer() as (base, seen), A2ATools(egress=LOOPBACK) as tools:
        assert tools.pool.ttl_seconds == 300.0
        spec = _spec(A2APeer(name="echo", url=base))
        await tools.resolve(spec, ACME, permitted=None)
        await tools.resolve(spec, ACME, permitted=None)
    assert [h[":path"] for h in seen.headers].count("/.well-known/agent-card.json") == 1


async def test_one_pool_serves_every_source_and_tenant_apart() -> None:
    pool = A2APool(egress=LOOPBACK, secrets=PerTenant())
    async with running_peer() as (base, seen), pool:
        spec = _spec(A2APeer(name="echo", url=base, credential="echo-token", allow=("echo",)))
        first, second = A2ATools(pool), A2ATools(pool)
        await first.resolve(spec, ACME, permitted=None)
        await second.resolve(spec, ACME, permitted=None)
        assert len(pool.open_connections) == 1
        [echo] = (await second.resolve(spec, GLOBEX, permitted=None)).tools
        await _call(first, spec, echo, GLOBEX, message="echo hi")
        keys = pool.open_connections
    assert all(isinstance(key, A2APoolKey) for key in keys)
    assert sorted(key.tenant for key in keys) == ["acme", "globex"]
    assert len({key.credential for key in keys}) == 2
    assert {h.get("authorization") for h in seen.headers} == {
        "Bearer tok-acme",
        "Bearer tok-globex",
    }


async def test_the_tenant_policy_narrows_the_offer_and_the_call() -> None:
    class OnlyShout:
        def permitted(self, scope: Scope) -> tuple[str, ...]:
            return ("echo__shout",)

    async with running_peer() as (base, seen), A2APool(egress=LOOPBACK) as pool:
        spec = _spec(A2APeer(name="echo", url=base))
        everything = await A2ATools(pool).resolve(spec, ACME, permitted=None)
        narrowed = A2ATools(pool, tenant_policy=OnlyShout())
        assert [t.name for t in (await narrowed.resolve(spec, ACME, permitted=None)).tools] == [
            "echo__shout"
        ]
        echo = next(t for t in everything.tools if t.name == "echo__echo")
        with pytest.raises(SourceCallFailed) as refused:
            await _call(narrowed, spec, echo, message="echo no")
        assert refused.value.kind == "excluded"
    assert seen.texts == []


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: A2ATools(A2APool(), egress=EgressPolicy()), TypeError, "pass them to A2APool"),
        (lambda: A2ATools(A2APool(), poll_seconds=1), TypeError, "poll_seconds configure"),
        (lambda: A2ATools("pool"), TypeError, "pool must be an A2APool, not str"),  # type: ignore[arg-type]
        (lambda: A2ATools(tenant_policy=["echo__*"]), TypeError, "permitted"),  # type: ignore[arg-type]
        (lambda: A2APool(card_ttl_seconds=-5), ValueError, "card_ttl_seconds"),
        (lambda: A2APool(card_ttl_seconds=False), ValueError, "card_ttl_seconds"),
        (lambda: A2APool(poll_seconds=0), ValueError, "poll_seconds"),
        (lambda: A2APool(poll_seconds="1"), ValueError, "poll_seconds"),  # type: ignore[arg-type]
        (lambda: A2APool(transport=LOOPBACK), TypeError, "HttpTransport"),  # type: ignore[arg-type]
    ],
)
def test_bad_settings_are_refused_with_our_errors(
    build: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        build()
