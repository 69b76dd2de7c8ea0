"""``EgressPolicy.allowing``: one private endpoint let through, the rest still refused."""

from collections.abc import AsyncIterator
from collections.abc import Sequence

import httpx
import pytest

from psych_runtime.core.messages import UserMessage
from psych_runtime.core.scope import Scope
from psych_runtime.egress.policy import EgressDecision
from psych_runtime.egress.policy import EgressPolicy
from psych_runtime.egress.policy import EgressRule
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.model.openai_compat import OpenAICompatibleClient
from psych_runtime.model.port import ModelEgressDenied
from psych_runtime.model.port import ModelRequest
from psych_runtime.model.port import StreamDone
from psych_runtime.model.port import StreamEvent

from ...support.openai_server import OpenAIServer
from ...support.openai_server import serve_openai
from ...support.openai_server import text_reply

ACME = Scope(tenant="acme")


async def decide(policy: EgressPolicy, url: str) -> EgressDecision:
    return await policy.decide(ACME, httpx.URL(url))


async def private_dns(host: str, port: int) -> Sequence[str]:
    return ["10.0.0.7"]


async def test_the_default_still_refuses_loopback() -> None:
    decision = await decide(EgressPolicy(), "http://127.0.0.1:8080/v1/chat/completions")
    assert not decision.allowed
    assert decision.rule == "deny_private"
    assert "allowing(url)" in decision.reason


async def test_allowing_lets_exactly_that_origin_through() -> None:
    policy = EgressPolicy().allowing("http://127.0.0.1:8080/v1")
    assert policy.allow_origins == (EgressRule(host="127.0.0.1", scheme="http", port=8080),)
    allowed = await decide(policy, "http://127.0.0.1:8080/v1/chat/completions")
    assert allowed.allowed
    assert allowed.rule == "allow_origins"
    # Any other path of the origin is the same server.
    assert (await decide(policy, "http://127.0.0.1:8080/metrics")).allowed
    # Another port, another scheme or another private host is still refused.
    for other in (
        "http://127.0.0.1:8081/v1",
        "https://127.0.0.1:8080/v1",
        "http://localhost:8080/v1",
        "http://10.0.0.5:8080/v1",
        "http://169.254.169.254/latest/meta-data",
    ):
        assert not (await decide(policy, other)).allowed, other


async def test_a_missing_port_is_the_schemes_default() -> None:
    policy = EgressPolicy(resolver=private_dns).allowing("https://models.internal/v1")
    assert (await decide(policy, "https://models.internal:443/v1/models")).allowed
    assert not (await decide(policy, "https://models.internal:8443/v1")).allowed


async def test_allowing_keeps_the_rest_of_the_policy() -> None:
    strict = EgressPolicy(
        allow=(EgressRule(host="api.example.com"),),
        deny=(EgressRule(host="127.0.0.1", port=9000),),
        resolve_hostnames=False,
    )
    policy = strict.allowing("http://127.0.0.1:8080", "http://127.0.0.1:9000")
    assert policy.allow == strict.allow
    assert (await decide(policy, "http://127.0.0.1:8080/v1")).allowed
    assert (await decide(policy, "https://api.example.com/x")).allowed
    assert not (await decide(policy, "https://other.example.com/x")).allowed
    # Deny rules win over an allowed origin.
    assert not (await decide(policy, "http://127.0.0.1:9000/v1")).allowed
    # The original is unchanged (policies are frozen values).
    assert strict.allow_origins == ()


@pytest.mark.parametrize("url", ["127.0.0.1:8080", "ftp://127.0.0.1/", "http:///v1", "http://h:x/"])
def test_a_url_that_names_no_origin_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="cannot allow"):
        EgressPolicy().allowing(url)


@pytest.fixture
async def server() -> AsyncIterator[OpenAIServer]:
    async with serve_openai() as running:
        yield running


def _request() -> ModelRequest:
    return ModelRequest(model="gpt-test", messages=(UserMessage(content="hi"),))


async def _drain(client: OpenAICompatibleClient) -> list[StreamEvent]:
    return [event async for event in client.stream(_request())]


async def test_a_model_client_on_loopback_needs_one_argument(server: OpenAIServer) -> None:
    async with HttpTransport() as default:
        client = OpenAICompatibleClient(base_url=server.base_url, transport=default, scope=ACME)
        with pytest.raises(ModelEgressDenied) as refused:
            await _drain(client)
    # The refusal says what to write, with this endpoint filled in.
    assert f"EgressPolicy().allowing({server.origin!r})" in str(refused.value)
    assert server.completions == []

    server.script(text_reply("hello"))
    async with HttpTransport(policy=EgressPolicy().allowing(server.base_url)) as allowed:
        client = OpenAICompatibleClient(base_url=server.base_url, transport=allowed, scope=ACME)
        events = await _drain(client)
    assert isinstance(events[-1], StreamDone)
    assert len(server.completions) == 1
