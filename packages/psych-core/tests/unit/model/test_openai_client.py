"""OpenAICompatibleClient over an in-process httpx transport (no sockets).

The same client is exercised over real sockets in tests/e2e/test_openai_compatible.py;
these cases pin down the stream logic byte by byte.
"""

import json
import logging
from collections.abc import AsyncIterator
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import httpx
import pytest

from psych_runtime.core.messages import UserMessage
from psych_runtime.core.metering import CostSource
from psych_runtime.core.metering import Usage
from psych_runtime.core.scope import Scope
from psych_runtime.egress.policy import EgressDenied
from psych_runtime.egress.policy import EgressPolicy
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.egress.transport import default_timeout
from psych_runtime.model.openai_compat import OpenAICompatibleClient
from psych_runtime.model.openai_wire import UnknownLimitField
from psych_runtime.model.port import ContextOverflow
from psych_runtime.model.port import MalformedChunk
from psych_runtime.model.port import ModelClient
from psych_runtime.model.port import ModelEgressDenied
from psych_runtime.model.port import ModelError
from psych_runtime.model.port import ModelRequest
from psych_runtime.model.port import StreamDone
from psych_runtime.model.port import StreamEvent
from psych_runtime.model.port import StreamIdleTimeout
from psych_runtime.model.port import StreamIncomplete
from psych_runtime.model.port import TextDelta
from psych_runtime.model.port import ToolCallDelta
from psych_runtime.model.port import TransientModelError

ACME = Scope(tenant="acme")
BASE = "https://models.example/v1"
REQUEST = ModelRequest(model="gpt-test", messages=(UserMessage(content="hi"),))

Handler = Callable[[httpx.Request], httpx.Response]


def data(payload: object) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def delta(content: str | None = None, finish: str | None = None, **extra: object) -> bytes:
    fields: dict[str, object] = dict(extra)
    if content is not None:
        fields["content"] = content
    return data({"choices": [{"index": 0, "delta": fields, "finish_reason": finish}]})


def streamed(*pieces: bytes, status: int = 200) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        async def body() -> AsyncIterator[bytes]:
            for piece in pieces:
                yield piece

        return httpx.Response(status, content=body(), headers={"content-type": "text/event-stream"})

    return handler


Factory = Callable[..., tuple[OpenAICompatibleClient, list[httpx.Request]]]


@pytest.fixture
async def make_client() -> AsyncIterator[Factory]:
    """Builds clients over an in-process mock transport; closes them afterwards."""
    opened: list[httpx.AsyncClient] = []

    def factory(
        handler: Handler, *, policy: EgressPolicy | None = None, base: str = BASE, **options: Any
    ) -> tuple[OpenAICompatibleClient, list[httpx.Request]]:
        seen: list[httpx.Request] = []

        def recording(request: httpx.Request) -> httpx.Response:
            seen.append(request)
            return handler(request)

        http = httpx.AsyncClient(transport=httpx.MockTransport(recording))
        opened.append(http)
        transport = HttpTransport(policy=policy or EgressPolicy(deny_private=False), client=http)
        client = OpenAICompatibleClient(
            base_url=base + "/", transport=transport, scope=ACME, **options
        )
        return client, seen

    yield factory
    for http in opened:
        await http.aclose()


async def collect(
    client: OpenAICompatibleClient, request: ModelRequest = REQUEST
) -> list[StreamEvent]:
    return [event async for event in client.stream(request)]


def test_it_is_a_model_client(make_client: Factory) -> None:
    client, _ = make_client(streamed())
    assert isinstance(client, ModelClient)


async def test_text_then_done_with_usage_after_the_finish(make_client: Factory) -> None:
    client, seen = make_client(
        streamed(
            delta("Hel"),
            delta("lo"),
            delta(finish="stop"),
            data({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 2}}),
            b"data: [DONE]\n\n",
        )
    )
    events = await collect(client)
    assert events == [
        TextDelta(text="Hel"),
        TextDelta(text="lo"),
        StreamDone(finish_reason="stop", usage=Usage(input=9, output=2)),
    ]
    [request] = seen
    assert str(request.url) == f"{BASE}/chat/completions"
    assert request.method == "POST"
    assert json.loads(request.content)["stream"] is True


async def test_no_usage_means_usage_none(make_client: Factory) -> None:
    client, _ = make_client(streamed(delta("x"), delta(finish="stop"), b"data: [DONE]\n\n"))
    done = (await collect(client))[-1]
    assert isinstance(done, StreamDone)
    assert done.usage is None
    assert done.cost is None


async def test_a_provider_cost_is_passed_on(make_client: Factory) -> None:
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "cost": 0.00042}
    client, _ = make_client(
        streamed(
            delta("x", finish="stop"), data({"choices": [], "usage": usage}), b"data: [DONE]\n\n"
        )
    )
    done = (await collect(client))[-1]
    assert isinstance(done, StreamDone)
    assert done.cost is not None
    assert done.cost.amount == Decimal("0.00042")
    assert done.cost.source is CostSource.PROVIDER


async def test_a_finish_without_the_done_marker_is_complete(make_client: Factory) -> None:
    client, _ = make_client(streamed(delta("x"), delta(finish="length")))
    done = (await collect(client))[-1]
    assert done == StreamDone(finish_reason="length")


async def test_the_done_marker_without_a_finish_is_complete(make_client: Factory) -> None:
    fragment = {"index": 0, "id": "c1", "function": {"name": "f", "arguments": "{}"}}
    client, _ = make_client(streamed(delta(tool_calls=[fragment]), b"data: [DONE]\n\n"))
    events = await collect(client)
    assert events[0] == ToolCallDelta(index=0, id="c1", name="f", arguments="{}")
    assert events[-1] == StreamDone(finish_reason="tool_calls")


async def test_a_stream_with_neither_is_incomplete(make_client: Factory) -> None:
    client, _ = make_client(streamed(delta("partial ")))
    with pytest.raises(StreamIncomplete) as caught:
        await collect(client)
    assert caught.value.kind == "stream_incomplete"
    assert caught.value.transient


async def test_a_stream_cut_mid_event_says_so(make_client: Factory) -> None:
    client, _ = make_client(streamed(delta("a"), b'data: {"choices": [{"delta": {"cont'))
    with pytest.raises(StreamIncomplete, match="middle of an event"):
        await collect(client)


async def test_malformed_json_is_a_transient_malformed_chunk(make_client: Factory) -> None:
    client, _ = make_client(streamed(delta("a"), b"data: {not json}\n\n", delta(finish="stop")))
    with pytest.raises(MalformedChunk) as caught:
        await collect(client)
    assert caught.value.kind == "malformed_chunk"
    assert caught.value.transient


async def test_a_json_chunk_that_is_not_an_object_is_malformed(make_client: Factory) -> None:
    client, _ = make_client(streamed(b"data: [1, 2]\n\n"))
    with pytest.raises(MalformedChunk):
        await collect(client)


async def test_an_error_object_mid_stream(make_client: Factory) -> None:
    client, _ = make_client(
        streamed(delta("a"), data({"error": {"message": "upstream overloaded", "code": 503}}))
    )
    with pytest.raises(TransientModelError) as caught:
        await collect(client)
    assert caught.value.status_code == 503


async def test_keepalive_comments_and_crlf_are_fine(make_client: Factory) -> None:
    client, _ = make_client(
        streamed(b": ping\r\n\r\n", delta("ok").replace(b"\n", b"\r\n"), delta(finish="stop"))
    )
    assert [e for e in await collect(client) if isinstance(e, TextDelta)] == [TextDelta(text="ok")]


@pytest.mark.parametrize(
    ("status", "body", "headers", "expected", "kind"),
    [
        (
            429,
            {"error": {"message": "slow down"}},
            {"retry-after": "2"},
            TransientModelError,
            "http_429",
        ),
        (503, "overloaded", {}, TransientModelError, "http_503"),
        (401, {"error": {"message": "bad key"}}, {}, ModelError, "http_401"),
        (404, {"error": {"message": "no such model"}}, {}, ModelError, "http_404"),
        (
            400,
            {"error": {"message": "too long", "code": "context_length_exceeded"}},
            {},
            ContextOverflow,
            "context_overflow",
        ),
    ],
)
async def test_http_errors_are_classified(
    make_client: Factory,
    status: int,
    body: object,
    headers: dict[str, str],
    expected: type[ModelError],
    kind: str,
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if isinstance(body, str):
            return httpx.Response(status, text=body, headers=headers)
        return httpx.Response(status, json=body, headers=headers)

    client, _ = make_client(handler)
    with pytest.raises(ModelError) as caught:
        await collect(client)
    assert type(caught.value) is expected
    assert caught.value.kind == kind
    if status == 429:
        assert caught.value.retry_after == 2.0


async def test_a_connection_failure_is_transient(make_client: Factory) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    client, _ = make_client(handler)
    with pytest.raises(TransientModelError) as caught:
        await collect(client)
    assert caught.value.kind == "connection_error"


async def test_a_read_timeout_is_an_idle_timeout(make_client: Factory) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    client, _ = make_client(handler)
    with pytest.raises(StreamIdleTimeout):
        await collect(client)


async def test_the_read_timeout_is_the_idle_timeout(make_client: Factory) -> None:
    client, seen = make_client(streamed(delta("x", finish="stop")))
    await collect(client, REQUEST.model_copy(update={"idle_timeout_seconds": 1.5}))
    await collect(client, REQUEST.model_copy(update={"idle_timeout_seconds": 0.0}))
    timeouts = [r.extensions["timeout"] for r in seen]
    assert timeouts[0]["read"] == 1.5
    assert timeouts[1]["read"] is None
    # Only the read phase follows the idle timeout; connect keeps the transport default.
    assert timeouts[0]["connect"] == default_timeout().connect


async def test_a_denied_endpoint_raises_a_model_error_and_sends_nothing(
    make_client: Factory,
) -> None:
    client, seen = make_client(streamed(), policy=EgressPolicy())
    private = OpenAICompatibleClient(
        base_url="http://10.1.2.3/v1", transport=client._transport, scope=ACME
    )
    with pytest.raises(ModelEgressDenied) as caught:
        await collect(private)
    assert isinstance(caught.value.__cause__, EgressDenied)
    assert "10.1.2.3" in str(caught.value)
    assert seen == []


async def test_headers_auth_and_organization(make_client: Factory) -> None:
    client, seen = make_client(
        streamed(delta("x", finish="stop")),
        api_key="sk-secret",
        organization="org-1",
        headers={"X-Tenant": "acme"},
    )
    await collect(client)
    headers = seen[0].headers
    assert headers["authorization"] == "Bearer sk-secret"
    assert headers["openai-organization"] == "org-1"
    assert headers["x-tenant"] == "acme"
    assert headers["accept"] == "text/event-stream"
    assert "sk-secret" not in repr(client)


async def test_known_models_are_fetched_once(make_client: Factory) -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        return httpx.Response(200, json={"data": [{"id": "gpt-a"}, {"id": "gpt-b"}, {"x": 1}]})

    client, _ = make_client(handler)
    assert await client.known_models() == frozenset({"gpt-a", "gpt-b"})
    assert await client.known_models() == frozenset({"gpt-a", "gpt-b"})
    assert calls == ["/v1/models"]


@pytest.mark.parametrize(
    "answer",
    [
        lambda r: httpx.Response(500, text="down"),
        lambda r: httpx.Response(200, text="not json"),
        lambda r: httpx.Response(200, json={"models": []}),
    ],
)
async def test_known_models_failure_means_do_not_check(
    make_client: Factory, answer: Handler, caplog: pytest.LogCaptureFixture
) -> None:
    client, seen = make_client(answer)
    with caplog.at_level(logging.WARNING, logger="psych_runtime.model.openai_compat"):
        assert await client.known_models() == frozenset()
        assert await client.known_models() == frozenset()
    # Failures are not cached: the second call asked again.
    assert len(seen) == 2
    assert caplog.records


async def test_known_models_when_egress_is_denied(
    make_client: Factory, caplog: pytest.LogCaptureFixture
) -> None:
    client, seen = make_client(streamed(), policy=EgressPolicy())
    private = OpenAICompatibleClient(
        base_url="http://127.0.0.1:1/v1", transport=client._transport, scope=ACME
    )
    with caplog.at_level(logging.WARNING):
        assert await private.known_models() == frozenset()
    assert seen == []
    assert any("127.0.0.1" in r.getMessage() for r in caplog.records)


async def test_the_body_is_the_wire_mapping_of_the_request(make_client: Factory) -> None:
    client, seen = make_client(streamed(delta("x", finish="stop")))
    request = REQUEST.model_copy(update={"max_output_tokens": 10, "extra": {"user": "u1"}})
    await collect(client, request)
    body = json.loads(seen[0].content)
    assert body["max_tokens"] == 10
    assert "max_completion_tokens" not in body
    assert body["user"] == "u1"
    assert body["messages"] == [{"role": "user", "content": "hi"}]


def _sent_limits(seen: list[httpx.Request]) -> dict[str, object]:
    body = json.loads(seen[-1].content)
    return {k: v for k, v in body.items() if k in ("max_tokens", "max_completion_tokens")}


@pytest.mark.parametrize(
    ("base", "model", "expected"),
    [
        # Any server but OpenAI's own reads max_tokens (llama.cpp, vLLM, Ollama...).
        (BASE, "gpt-test", {"max_tokens": 24}),
        ("http://127.0.0.1:8080/v1", "gemma-3-270m", {"max_tokens": 24}),
        # OpenAI's API takes the newer name for every model ...
        ("https://api.openai.com/v1", "gpt-4o", {"max_completion_tokens": 24}),
        # ... and its reasoning models refuse the older one wherever they are served.
        (BASE, "openai/o3-mini", {"max_completion_tokens": 24}),
    ],
)
async def test_by_default_the_limit_goes_where_the_server_reads_it(
    make_client: Factory, base: str, model: str, expected: dict[str, int]
) -> None:
    client, seen = make_client(streamed(delta("x", finish="length")), base=base)
    request = REQUEST.model_copy(update={"model": model, "max_output_tokens": 24})
    await collect(client, request)
    assert _sent_limits(seen) == expected


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ("auto", {"max_tokens": 24}),
        ("max_tokens", {"max_tokens": 24}),
        ("max_completion_tokens", {"max_completion_tokens": 24}),
        ("both", {"max_tokens": 24, "max_completion_tokens": 24}),
    ],
)
async def test_max_tokens_field_picks_the_field_per_setting(
    make_client: Factory, setting: str, expected: dict[str, int]
) -> None:
    client, seen = make_client(streamed(delta("x", finish="length")), max_tokens_field=setting)
    await collect(client, REQUEST.model_copy(update={"max_output_tokens": 24}))
    assert _sent_limits(seen) == expected


def test_an_unknown_max_tokens_field_is_refused_when_the_client_is_built(
    make_client: Factory,
) -> None:
    with pytest.raises(UnknownLimitField, match="'max-tokens'"):
        make_client(streamed(), max_tokens_field="max-tokens")


def refusing(field: str, message: str) -> Handler:
    """A server that refuses any body carrying ``field`` with a 400 saying ``message``."""
    answer = streamed(delta("x", finish="length"))

    def handler(request: httpx.Request) -> httpx.Response:
        if field in json.loads(request.content):
            return httpx.Response(
                400, json={"error": {"message": message, "type": "invalid_request_error"}}
            )
        return answer(request)

    return handler


OPENAI_REFUSAL = (
    "Unsupported parameter: 'max_tokens' is not supported with this model. "
    "Use 'max_completion_tokens' instead."
)
STRICT_REFUSAL = (
    "[{'type': 'extra_forbidden', 'loc': ('body', 'max_completion_tokens'), "
    "'msg': 'Extra inputs are not permitted', 'input': 24}]"
)


@pytest.mark.parametrize(
    ("model", "refused", "then"),
    [
        # A reasoning model behind a name "auto" cannot recognise (an Azure deployment).
        ("reasoning-deployment", "max_tokens", "max_completion_tokens"),
        # A reasoning model's name on a server whose schema forbids the newer field.
        ("o3-mini", "max_completion_tokens", "max_tokens"),
    ],
)
async def test_auto_switches_field_once_when_the_server_refuses_the_one_it_sent(
    make_client: Factory, model: str, refused: str, then: str
) -> None:
    message = OPENAI_REFUSAL if refused == "max_tokens" else STRICT_REFUSAL
    client, seen = make_client(refusing(refused, message))
    request = REQUEST.model_copy(update={"model": model, "max_output_tokens": 24})

    events = await collect(client, request)
    assert isinstance(events[-1], StreamDone)
    assert [list(_limits_of(r)) for r in seen] == [[refused], [then]]

    # The answer is remembered for the model: the next call goes straight to it.
    await collect(client, request)
    assert list(_limits_of(seen[-1])) == [then]
    assert len(seen) == 3


async def test_an_explicit_field_is_never_switched(make_client: Factory) -> None:
    client, seen = make_client(
        refusing("max_tokens", OPENAI_REFUSAL), max_tokens_field="max_tokens"
    )
    with pytest.raises(ModelError) as caught:
        await collect(client, REQUEST.model_copy(update={"max_output_tokens": 24}))
    assert caught.value.status_code == 400
    assert len(seen) == 1


@pytest.mark.parametrize(
    "message",
    [
        "max_tokens is too large: 200000. This model supports at most 16384 tokens.",
        "Invalid value for 'temperature': unsupported value.",
        "messages: unknown role 'robot'",
    ],
)
async def test_other_refusals_are_not_retried(make_client: Factory, message: str) -> None:
    client, seen = make_client(refusing("max_tokens", message))
    with pytest.raises(ModelError):
        await collect(client, REQUEST.model_copy(update={"max_output_tokens": 24}))
    assert len(seen) == 1


async def test_a_refusal_of_the_other_field_too_is_raised_not_looped(
    make_client: Factory,
) -> None:
    def refuses_both(request: httpx.Request) -> httpx.Response:
        [field] = _limits_of(request)
        other = "max_completion_tokens" if field == "max_tokens" else "max_tokens"
        message = f"Unsupported parameter: '{field}'. Use '{other}' instead."
        return httpx.Response(400, json={"error": {"message": message}})

    client, seen = make_client(refuses_both)
    with pytest.raises(ModelError):
        await collect(client, REQUEST.model_copy(update={"max_output_tokens": 24}))
    assert len(seen) == 2


def _limits_of(request: httpx.Request) -> dict[str, object]:
    return _sent_limits([request])
