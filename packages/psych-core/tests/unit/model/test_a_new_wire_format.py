"""A new model wire format is one module: its request body and its event reader.

The client below speaks a made-up format (a JSON body, one server-sent event per word,
a final ``{"done": ...}``). Everything else a model client must get right comes from
``model/http_common`` and its ``HttpModelClient``: the POST goes through the egress
seam with the request's idle timeout, a refusal is classified by status, a failure
says whether the answer had started, the model list is fetched once. The tests hold
the small client to the same promises the real ones keep, so the shared pieces are
shown to be enough.
"""

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from pydantic import JsonValue

from psych_runtime.core.messages import UserMessage
from psych_runtime.core.scope import Scope
from psych_runtime.egress.policy import EgressPolicy
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.model.http_common import HttpModelClient
from psych_runtime.model.http_common import Refusal
from psych_runtime.model.http_common import decode_event
from psych_runtime.model.http_common import server_events
from psych_runtime.model.port import ModelEgressDenied
from psych_runtime.model.port import ModelError
from psych_runtime.model.port import ModelRequest
from psych_runtime.model.port import StreamDone
from psych_runtime.model.port import StreamEvent
from psych_runtime.model.port import TextDelta
from psych_runtime.model.sse import SseParser

from ...support.loopback import LoopbackServer

ACME = Scope(tenant="acme")


class WordsClient(HttpModelClient):
    """A ModelClient for the made-up format; the whole of a new wire format."""

    def __init__(self, *, transport: HttpTransport, base_url: str) -> None:
        super().__init__(base_url, transport, ACME, {}, None)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        body: dict[str, JsonValue] = {
            "model": request.model,
            "prompt": " ".join(str(m.content) for m in request.messages),
        }
        async with self._post(
            "/words", body, idle_seconds=request.idle_timeout_seconds
        ) as response:
            if isinstance(response, Refusal):
                raise response.error()
            async for sse in server_events(response, SseParser()):
                event = decode_event(sse, "event")
                if "done" in event:
                    yield StreamDone(finish_reason="stop")
                    return
                yield TextDelta(text=str(event["word"]))


class WordsServer(LoopbackServer):
    """Answers ``/words`` with one event per word, or with the status it is told to."""

    def __init__(self, status: int = 200) -> None:
        super().__init__()
        self.status = status

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        body = json.loads(await reader.readexactly(length))
        if self.status != 200:
            status = f"HTTP/1.1 {self.status} No\r\n".encode()
            writer.write(status + b"retry-after: 0\r\ncontent-length: 2\r\n\r\nno")
            await writer.drain()
            return
        events = b"".join(
            f"data: {json.dumps({'word': word})}\n\n".encode() for word in body["prompt"].split()
        )
        events += b'data: {"done": true}\n\n'
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            + f"content-length: {len(events)}\r\n\r\n".encode()
            + events
        )
        await writer.drain()


def _request() -> ModelRequest:
    return ModelRequest(model="words-1", messages=(UserMessage(content="hello there world"),))


async def _answer(client: WordsClient) -> list[StreamEvent]:
    return [event async for event in client.stream(_request())]


async def test_the_answer_streams_through_the_egress_seam() -> None:
    server = WordsServer()
    await server.start()
    try:
        async with HttpTransport(policy=EgressPolicy().allowing(server.origin)) as seam:
            events = await _answer(WordsClient(transport=seam, base_url=server.origin))
    finally:
        await server.close()
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["hello", "there", "world"]
    assert isinstance(events[-1], StreamDone)


async def test_a_refusal_is_classified_by_its_status() -> None:
    server = WordsServer(status=429)
    await server.start()
    try:
        async with HttpTransport(policy=EgressPolicy().allowing(server.origin)) as seam:
            with pytest.raises(ModelError) as refused:
                await _answer(WordsClient(transport=seam, base_url=server.origin))
    finally:
        await server.close()
    assert refused.value.transient and refused.value.status_code == 429


async def test_an_endpoint_the_policy_refuses_is_never_called() -> None:
    server = WordsServer()
    await server.start()
    try:
        async with HttpTransport() as seam:  # loopback is refused by default
            with pytest.raises(ModelEgressDenied):
                await _answer(WordsClient(transport=seam, base_url=server.origin))
    finally:
        await server.close()
    assert server.connections == 0
