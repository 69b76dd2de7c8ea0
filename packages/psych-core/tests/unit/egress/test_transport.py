"""HttpTransport: the policy is consulted before anything leaves, for both methods."""

from collections.abc import AsyncIterator

import httpx
import pytest

from psych_runtime.core.scope import Scope
from psych_runtime.egress.policy import EgressDecision
from psych_runtime.egress.policy import EgressDenied
from psych_runtime.egress.policy import EgressPolicy
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.egress.transport import default_timeout

ACME = Scope(tenant="acme")
OPEN = EgressPolicy(deny_private=False)


class Recorder:
    """An httpx mock transport handler that answers 200 and keeps every request."""

    def __init__(self, response: httpx.Response | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self.response = response

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.response or httpx.Response(200, json={"ok": True})


def client_for(recorder: Recorder) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(recorder))


async def test_request_sends_through_the_given_client() -> None:
    recorder = Recorder()
    async with client_for(recorder) as client:
        transport = HttpTransport(policy=OPEN, client=client)
        response = await transport.request(
            "POST", "https://api.example.com/v1/x", scope=ACME, headers={"X-T": "1"}, json={"a": 1}
        )
    assert response.json() == {"ok": True}
    [sent] = recorder.requests
    assert sent.method == "POST"
    assert sent.headers["x-t"] == "1"
    assert sent.content == b'{"a":1}'


async def test_a_refused_request_never_reaches_the_client() -> None:
    recorder = Recorder()
    async with client_for(recorder) as client:
        transport = HttpTransport(client=client)  # default policy: no private addresses
        with pytest.raises(EgressDenied, match=r"169\.254\.169\.254"):
            await transport.request("GET", "http://169.254.169.254/latest", scope=ACME)
        with pytest.raises(EgressDenied):
            async with transport.stream("GET", "http://10.0.0.1/", scope=ACME):
                pytest.fail("the block must not run")
    assert recorder.requests == []


async def test_the_scope_reaches_the_decider() -> None:
    seen: list[tuple[str, str]] = []

    def decider(scope: Scope, url: httpx.URL) -> EgressDecision:
        seen.append((scope.tenant, str(url)))
        return EgressDecision.allow("test")

    async with client_for(Recorder()) as client:
        transport = HttpTransport(policy=decider, client=client)
        await transport.request("GET", "https://a.example/x", scope=ACME)
        async with transport.stream("GET", "https://b.example/y", scope=Scope(tenant="globex")):
            pass
    assert seen == [("acme", "https://a.example/x"), ("globex", "https://b.example/y")]


async def test_stream_yields_before_the_body_is_read_and_closes_after() -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b"one "
        yield b"two"

    recorder = Recorder(httpx.Response(200, content=body()))
    async with client_for(recorder) as client:
        transport = HttpTransport(policy=OPEN, client=client)
        async with transport.stream("GET", "https://a.example/s", scope=ACME) as response:
            assert not response.is_closed
            pieces = [piece async for piece in response.aiter_bytes()]
        assert response.is_closed
    assert b"".join(pieces) == b"one two"


async def test_redirects_are_not_followed() -> None:
    # The redirect target would be a destination the policy never judged.
    recorder = Recorder(httpx.Response(302, headers={"Location": "http://10.0.0.1/"}))
    async with httpx.AsyncClient(
        transport=httpx.MockTransport(recorder), follow_redirects=True
    ) as client:
        transport = HttpTransport(policy=OPEN, client=client)
        response = await transport.request("GET", "https://a.example/", scope=ACME)
        async with transport.stream("GET", "https://a.example/", scope=ACME) as streamed:
            assert streamed.status_code == 302
    assert response.status_code == 302
    assert len(recorder.requests) == 2


async def test_per_call_timeout_overrides_the_default() -> None:
    recorder = Recorder()
    async with client_for(recorder) as client:
        transport = HttpTransport(policy=OPEN, client=client, timeout=5.0)
        await transport.request("GET", "https://a.example/", scope=ACME)
        await transport.request(
            "GET", "https://a.example/", scope=ACME, timeout=httpx.Timeout(1.0, read=9.0)
        )
    first, second = (r.extensions["timeout"] for r in recorder.requests)
    assert first == {"connect": 5.0, "read": 5.0, "write": 5.0, "pool": 5.0}
    assert second == {"connect": 1.0, "read": 9.0, "write": 1.0, "pool": 1.0}


def test_defaults() -> None:
    transport = HttpTransport()
    assert isinstance(transport.policy, EgressPolicy)
    assert transport.policy.deny_private
    assert transport.timeout == default_timeout()


async def test_a_given_client_is_left_open_and_an_own_client_is_closed() -> None:
    async with client_for(Recorder()) as client:
        transport = HttpTransport(policy=OPEN, client=client)
        await transport.aclose()
        assert not client.is_closed
    own = HttpTransport(policy=OPEN)
    created = own._http()
    async with own:
        pass
    assert created.is_closed
    with pytest.raises(RuntimeError, match="closed"):
        await own.request("GET", "https://a.example/", scope=ACME)
