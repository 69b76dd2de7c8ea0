"""The egress check inside an SDK's own HTTP client: refusals, redirects and the notes kept."""

import httpx
import pytest

from psych_runtime import EgressDecision
from psych_runtime import EgressDenied
from psych_runtime import EgressPolicy
from psych_runtime import EgressRule
from psych_runtime import Scope
from psych_runtime.adapters import EgressTransport
from psych_runtime.adapters import RedirectRefusal
from psych_runtime.adapters import RedirectRefused
from psych_runtime.adapters import egress_client
from psych_runtime.adapters import failure_of

ACME = Scope(tenant="acme")


def _answering(seen: list[str], status: int = 200, **headers: str) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(status, headers=headers, json={})

    return httpx.MockTransport(answer)


async def test_a_refused_destination_is_never_contacted() -> None:
    seen: list[str] = []
    policy = EgressPolicy(deny=(EgressRule(host="*.evil.example"),), resolve_hostnames=False)
    client, transport = egress_client(policy, ACME, timeout=5, inner=_answering(seen))
    async with client:
        with pytest.raises(EgressDenied, match=r"a2a\.evil\.example"):
            await client.get("https://a2a.evil.example/card")
        assert isinstance(transport.failure, EgressDenied)
        assert (await client.get("https://a2a.good.example/card")).status_code == 200
    assert seen == ["https://a2a.good.example/card"]


async def test_the_policy_is_asked_with_the_clients_scope() -> None:
    asked: list[tuple[Scope, str]] = []

    async def decide(scope: Scope, url: httpx.URL) -> EgressDecision:
        asked.append((scope, str(url)))
        return EgressDecision.allow()

    client, _ = egress_client(decide, ACME, timeout=5, inner=_answering([]))
    async with client:
        await client.post("https://peer.example.com/rpc", json={})
    assert asked == [(ACME, "https://peer.example.com/rpc")]


@pytest.mark.parametrize("status", [301, 302, 307, 308])
async def test_a_redirect_is_refused_and_classified(status: int) -> None:
    seen: list[str] = []
    inner = _answering(seen, status, location="https://elsewhere.example/")
    client, transport = egress_client(
        EgressPolicy(resolve_hostnames=False), ACME, timeout=5, inner=inner
    )
    async with client:
        with pytest.raises(RedirectRefused, match="elsewhere") as refused:
            await client.get("https://peer.example.com/")
    assert isinstance(refused.value, RedirectRefusal) and isinstance(
        refused.value, httpx.TransportError
    )
    assert seen == ["https://peer.example.com/"]  # the redirect target was never asked
    assert failure_of(RuntimeError("wrapped"), "agent p", transport).kind == "redirect_refused"


async def test_error_statuses_and_challenges_are_noted() -> None:
    inner = _answering([], 401, **{"www-authenticate": 'Bearer realm="x"'})
    client, transport = egress_client(
        EgressPolicy(resolve_hostnames=False), ACME, timeout=5, inner=inner
    )
    async with client:
        assert (await client.get("https://peer.example.com/")).status_code == 401
    assert transport.error_status == 401
    assert transport.challenge == (401, 'Bearer realm="x"')
    failed = failure_of(RuntimeError("generic"), "agent p", transport)
    assert (failed.kind, failed.transient) == ("unauthorized", False)
    transport.forget()
    assert transport.error_status is None and transport.failure is None


async def test_a_connection_error_is_unreachable_and_transient() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    transport = EgressTransport(
        EgressPolicy(resolve_hostnames=False), ACME, inner=httpx.MockTransport(refuse)
    )
    async with httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get("https://peer.example.com/")
    failed = failure_of(RuntimeError("the SDK's own wrapper"), "agent p", transport)
    assert (failed.kind, failed.transient) == ("unreachable", True)
