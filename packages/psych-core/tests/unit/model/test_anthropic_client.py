"""AnthropicClient against a local server replaying the Messages API's event stream."""

import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from psych_runtime.core.messages import SystemMessage
from psych_runtime.core.messages import UserMessage
from psych_runtime.core.metering import Usage
from psych_runtime.core.scope import Scope
from psych_runtime.egress.policy import EgressPolicy
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.model.anthropic import AnthropicClient
from psych_runtime.model.anthropic import InvalidClientSetting
from psych_runtime.model.anthropic_wire import PromptCaching
from psych_runtime.model.port import ContextOverflow
from psych_runtime.model.port import MalformedChunk
from psych_runtime.model.port import ModelClient
from psych_runtime.model.port import ModelEgressDenied
from psych_runtime.model.port import ModelError
from psych_runtime.model.port import ModelRequest
from psych_runtime.model.port import StreamDone
from psych_runtime.model.port import StreamEvent
from psych_runtime.model.port import StreamIncomplete
from psych_runtime.model.port import TextDelta
from psych_runtime.model.port import TransientModelError
from psych_runtime.runtime.model_call import call_model

from ...support.anthropic_server import AnthropicServer
from ...support.anthropic_server import Reply
from ...support.anthropic_server import error
from ...support.anthropic_server import event
from ...support.anthropic_server import message_stream
from ...support.anthropic_server import serve_anthropic
from ...support.anthropic_server import start_usage
from ...support.anthropic_server import text_block
from ...support.anthropic_server import tool_block
from ...support.tools import LOOKUP

ACME = Scope(tenant="acme")
REQUEST = ModelRequest(
    model="claude-haiku-4-5",
    messages=(SystemMessage(content="Be brief."), UserMessage(content="Where is A1?")),
    tools=(LOOKUP,),
)


class Waits:
    """Stands in for asyncio.sleep: records each wait and returns at once."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


@pytest.fixture
async def server() -> AsyncIterator[AnthropicServer]:
    async with serve_anthropic(models=("claude-haiku-4-5", "claude-sonnet-4-5")) as running:
        yield running


@pytest.fixture
async def transport(server: AnthropicServer) -> AsyncIterator[HttpTransport]:
    async with HttpTransport(policy=EgressPolicy().allowing(server.base_url)) as seam:
        yield seam


@pytest.fixture
def waits() -> Waits:
    return Waits()


def client(
    server: AnthropicServer, transport: HttpTransport, waits: Waits, **options: Any
) -> AnthropicClient:
    return AnthropicClient(
        base_url=server.base_url,
        transport=transport,
        scope=ACME,
        api_key="sk-ant-test",
        sleep=waits,
        **options,
    )


async def drain(model: ModelClient, request: ModelRequest = REQUEST) -> list[StreamEvent]:
    return [e async for e in model.stream(request)]


async def test_a_text_answer_with_cache_usage(
    server: AnthropicServer, transport: HttpTransport, waits: Waits
) -> None:
    usage = start_usage(21, cache_read=4000, five_minutes=500, one_hour=1000)
    server.script(message_stream([text_block(0, "A1 ", "has shipped.")], usage=usage))
    model = client(server, transport, waits, betas=("a-beta", "b-beta"))
    answer = await call_model(model, REQUEST)

    assert answer.text == "A1 has shipped."
    assert answer.finish_reason == "stop"
    assert answer.model == "claude-haiku-4-5-20251001"
    assert answer.usage == Usage(
        input=21, output=12, cache_read=4000, cache_write=1500, cache_write_1h=1000
    )
    [sent] = server.messages
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == "sk-ant-test"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["anthropic-beta"] == "a-beta,b-beta"
    assert "authorization" not in sent.headers
    assert sent.body["model"] == "claude-haiku-4-5"
    assert sent.body["stream"] is True
    assert sent.body["max_tokens"] == 4096
    assert sent.body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    assert sent.body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sent.body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert waits.seconds == []
    assert "sk-ant-test" not in repr(model)


async def test_a_tool_call_is_assembled_from_json_deltas(
    server: AnthropicServer, transport: HttpTransport, waits: Waits
) -> None:
    server.script(
        message_stream(
            [
                text_block(0, "Let me check."),
                tool_block(1, "toolu_a", "lookup", "", '{"order', '_id": "A1"}'),
                tool_block(2, "toolu_b", "lookup", '{"order_id": "B2"}'),
            ],
            stop_reason="tool_use",
        )
    )
    answer = await call_model(client(server, transport, waits), REQUEST)
    assert answer.finish_reason == "tool_calls"
    assert answer.text == "Let me check."
    assert [(c.id, c.name, json.loads(c.arguments)) for c in answer.calls] == [
        ("toolu_a", "lookup", {"order_id": "A1"}),
        ("toolu_b", "lookup", {"order_id": "B2"}),
    ]


async def test_the_output_limit_is_sent_and_its_stop_reads_as_length(
    server: AnthropicServer, transport: HttpTransport, waits: Waits
) -> None:
    server.script(message_stream([text_block(0, "One, two")], stop_reason="max_tokens"))
    request = REQUEST.model_copy(update={"max_output_tokens": 5})
    answer = await call_model(client(server, transport, waits, default_max_tokens=99), request)
    assert answer.finish_reason == "length"
    assert server.messages[0].body["max_tokens"] == 5


async def test_prompt_caching_is_configurable(
    server: AnthropicServer, transport: HttpTransport, waits: Waits
) -> None:
    server.script(message_stream([text_block(0, "ok")]))
    caching = PromptCaching(tools=False, ttl="1h", message_ttl="1h")
    await drain(client(server, transport, waits, prompt_caching=caching))
    body = server.messages[0].body
    assert "cache_control" not in body["tools"][-1]
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {
        "type": "ephemeral",
        "ttl": "1h",
    }


@pytest.mark.parametrize("status", [429, 500, 502, 503, 529])
async def test_a_transient_status_is_sent_again(
    server: AnthropicServer, transport: HttpTransport, waits: Waits, status: int
) -> None:
    server.script(error(status), message_stream([text_block(0, "ok")]))
    events = await drain(client(server, transport, waits))
    assert isinstance(events[-1], StreamDone)
    assert len(server.messages) == 2
    assert len(waits.seconds) == 1
    assert 0 < waits.seconds[0] <= 0.5  # the first backoff step, with jitter


async def test_retry_after_is_honoured(
    server: AnthropicServer, transport: HttpTransport, waits: Waits
) -> None:
    server.script(
        error(429, headers={"retry-after": "7"}),
        error(529, headers={"retry-after-ms": "250"}),
        message_stream([text_block(0, "ok")]),
    )
    await drain(client(server, transport, waits))
    assert waits.seconds == [7.0, 0.25]


async def test_a_wait_longer_than_the_client_accepts_is_left_to_the_caller(
    server: AnthropicServer, transport: HttpTransport, waits: Waits
) -> None:
    server.script(error(429, headers={"retry-after": "600"}))
    with pytest.raises(TransientModelError) as raised:
        await drain(client(server, transport, waits, max_retry_wait_seconds=30))
    assert raised.value.retry_after == 600
    assert waits.seconds == []
    assert len(server.messages) == 1


async def test_retries_run_out(
    server: AnthropicServer, transport: HttpTransport, waits: Waits
) -> None:
    server.script(error(529), error(529), error(529))
    with pytest.raises(TransientModelError) as raised:
        await drain(client(server, transport, waits, max_retries=2))
    assert raised.value.status_code == 529
    assert len(server.messages) == 3
    assert len(waits.seconds) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_a_refusal_is_not_sent_again(
    server: AnthropicServer, transport: HttpTransport, waits: Waits, status: int
) -> None:
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}
    server.script(error(status, body), message_stream([text_block(0, "never")]))
    with pytest.raises(ModelError) as raised:
        await drain(client(server, transport, waits))
    assert not raised.value.transient
    assert raised.value.status_code == status
    assert len(server.messages) == 1


async def test_a_too_long_prompt_is_a_context_overflow(
    server: AnthropicServer, transport: HttpTransport, waits: Waits
) -> None:
    body = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "prompt is too long: 250000 tokens"},
    }
    server.script(error(400, body))
    with pytest.raises(ContextOverflow):
        await drain(client(server, transport, waits))


async def test_an_overload_before_the_answer_is_sent_again(
    server: AnthropicServer, transport: HttpTransport, waits: Waits
) -> None:
    overloaded = event("error", {"error": {"type": "overloaded_error", "message": "Overloaded"}})
    server.script(
        Reply(headers={"Content-Type": "text/event-stream"}, parts=[overloaded]),
        message_stream([text_block(0, "ok")]),
    )
    events = await drain(client(server, transport, waits))
    assert events[0] == TextDelta(text="ok")
    assert len(server.messages) == 2


async def test_an_error_after_the_answer_began_is_not_resent(
    server: AnthropicServer, transport: HttpTransport, waits: Waits
) -> None:
    stream = message_stream([text_block(0, "Half an ans")], stop=False)
    stream.parts = stream.parts[:-1]  # no message_delta either
    stream.parts.append(event("error", {"error": {"type": "overloaded_error", "message": "x"}}))
    server.script(stream, message_stream([text_block(0, "never")]))
    seen: list[StreamEvent] = []

    async def read() -> None:
        async for item in client(server, transport, waits).stream(REQUEST):
            seen.append(item)

    with pytest.raises(TransientModelError) as raised:
        await read()
    assert raised.value.status_code == 529
    assert seen == [TextDelta(text="Half an ans")]
    assert len(server.messages) == 1


async def test_a_stream_cut_before_the_stop_is_incomplete(
    server: AnthropicServer, transport: HttpTransport, waits: Waits
) -> None:
    stream = message_stream([text_block(0, "Half")], stop=False)
    stream.parts = stream.parts[:2]  # message_start and a ping: nothing of the answer yet
    stream.cut = True
    server.script(stream, message_stream([text_block(0, "never")]))
    with pytest.raises(StreamIncomplete):
        await drain(client(server, transport, waits))
    # A broken stream is the agent loop's to retry, not the client's.
    assert len(server.messages) == 1
    assert waits.seconds == []


async def test_a_failed_connection_is_tried_again(waits: Waits) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    async with HttpTransport(policy=EgressPolicy().allowing(closed)) as seam:
        model = AnthropicClient(base_url=closed, transport=seam, scope=ACME, sleep=waits)
        with pytest.raises(TransientModelError) as raised:
            await drain(model)
    assert raised.value.kind == "connection_error"
    assert len(waits.seconds) == 2


async def test_a_stream_whose_last_event_is_missing_still_answers(
    server: AnthropicServer, transport: HttpTransport, waits: Waits
) -> None:
    # The stop reason and usage arrived; only message_stop is missing.
    server.script(message_stream([text_block(0, "Done.")], stop=False))
    answer = await call_model(client(server, transport, waits), REQUEST)
    assert (answer.text, answer.finish_reason) == ("Done.", "stop")


async def test_an_event_that_is_not_json_is_a_malformed_chunk(
    server: AnthropicServer, transport: HttpTransport, waits: Waits
) -> None:
    server.script(Reply(headers={"Content-Type": "text/event-stream"}, parts=[b"data: {oops\n\n"]))
    with pytest.raises(MalformedChunk):
        await drain(client(server, transport, waits, max_retries=0))


async def test_the_egress_policy_sees_the_request(server: AnthropicServer, waits: Waits) -> None:
    async with HttpTransport() as default:
        model = AnthropicClient(
            base_url=server.base_url, transport=default, scope=ACME, sleep=waits
        )
        with pytest.raises(ModelEgressDenied, match=r"allowing\("):
            await drain(model)
    assert server.messages == []
    assert waits.seconds == []


async def test_known_models_are_listed(
    server: AnthropicServer, transport: HttpTransport, waits: Waits
) -> None:
    model = client(server, transport, waits)
    assert await model.known_models() == {"claude-haiku-4-5", "claude-sonnet-4-5"}
    assert isinstance(model, ModelClient)


@pytest.mark.parametrize(
    "options",
    [{"default_max_tokens": 0}, {"max_retries": -1}, {"retry_base_seconds": -1.0}],
)
def test_settings_that_can_never_work_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(InvalidClientSetting):
        AnthropicClient(transport=HttpTransport(), scope=ACME, **options)
