"""A ModelClient for any server that speaks OpenAI's chat-completions API.

That covers OpenAI itself and most of what sits in front of other models: LiteLLM and
similar proxies, vLLM, OpenRouter, Ollama. The client streams every call, reads the
server-sent events with ``psych_runtime.model.sse`` and never opens a connection of
its own: all traffic goes through the ``HttpTransport`` it is given, so the egress
policy sees every request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from collections.abc import Mapping
from contextlib import aclosing
from typing import TYPE_CHECKING

from psych_runtime.core.scope import Scope
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.model.http_common import HttpModelClient
from psych_runtime.model.http_common import Refusal
from psych_runtime.model.http_common import cut_off
from psych_runtime.model.http_common import decode_event
from psych_runtime.model.http_common import server_events
from psych_runtime.model.openai_wire import MaxTokensField
from psych_runtime.model.openai_wire import StreamTally
from psych_runtime.model.openai_wire import check_limit_field
from psych_runtime.model.openai_wire import output_limit_fields
from psych_runtime.model.openai_wire import read_chunk
from psych_runtime.model.openai_wire import refused_limit_field
from psych_runtime.model.openai_wire import refuses_stream_options
from psych_runtime.model.openai_wire import request_body
from psych_runtime.model.port import ModelRequest
from psych_runtime.model.port import StreamDone
from psych_runtime.model.port import StreamEvent
from psych_runtime.model.sse import SseEvent
from psych_runtime.model.sse import SseParser
from psych_runtime.model.transient import error_in_stream
from psych_runtime.telemetry.providers import check_provider_name
from psych_runtime.telemetry.providers import provider_for_url

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger(__name__)

_DONE = "[DONE]"
_CALLING_FINISHES = frozenset({"stop", "function_call"})
_INLINE_CHUNK_CHARS = 256 * 1024
"""A chunk larger than this is decoded in a worker thread, off the event loop, so one
huge event cannot hold up the Worker's heartbeat or the other Runs."""


class OpenAICompatibleClient(HttpModelClient):
    """Streams chat completions from an OpenAI-compatible endpoint.

    Args:
        base_url: the API root, such as ``https://api.openai.com/v1``. Completions are
            POSTed to ``/chat/completions`` under it; the model list is read from
            ``/models``.
        transport: the egress seam every request goes through.
        scope: the tenant this client acts for; every egress check receives it.
        api_key: sent as a bearer token when set. Proxies that authenticate at the
            network layer need none.
        headers: extra headers for every request (a tenant or routing header for a
            proxy); they are applied last and may replace the defaults.
        organization: sent as ``OpenAI-Organization`` when set.
        max_tokens_field: which body field carries a request's ``max_output_tokens``.
            Servers disagree on the name and most ignore the one they do not know,
            so the wrong choice silently drops the limit:

            - ``"auto"`` (the default): ``max_completion_tokens`` for OpenAI's own
              API and for OpenAI's reasoning models (o1, o3, o4, gpt-5 and later,
              which refuse ``max_tokens``) wherever they are served, and
              ``max_tokens`` everywhere else, which llama.cpp's servers, vLLM,
              Ollama, LiteLLM and other gateways all read.
            - ``"max_tokens"``: always the older name.
            - ``"max_completion_tokens"``: always the newer name; for a server in
              front of OpenAI's reasoning models under names ``"auto"`` does not
              recognise (an Azure deployment, a proxy alias).
            - ``"both"``: the two together, for a gateway that passes the body on to
              servers of either kind. OpenAI itself refuses a request that sets
              both.

            Under ``"auto"``, a 400 that refuses the field sent (OpenAI's
            "Unsupported parameter: 'max_tokens'", a strict schema's "Extra inputs
            are not permitted") is answered by sending the request once more with
            the other field, which is then used for that model from then on. An
            explicit choice is never switched.
        provider_name: what telemetry reports as ``gen_ai.provider.name`` for this
            client's calls. None derives it from ``base_url``'s host (``openai`` for
            ``api.openai.com``, ``groq``, ``mistral_ai``, ``azure.ai.openai``... see
            ``psych_runtime.adapters.provider_for_url``), and ``_OTHER`` for any other
            host (a gateway, a local server): name it here then.

    Every stream asks for usage with ``stream_options: {"include_usage": true}``. A
    server that refuses the request over that field (a 400 naming it) is asked once
    more without it, and not asked for usage again; its calls are then recorded with
    usage unreported unless it sends usage anyway.

    Raises:
        UnknownLimitField: ``max_tokens_field`` is none of the choices above.
        InvalidProviderName: ``provider_name`` is not a printable text of 1 to 64
            characters without a space at either end.
    """

    def __init__(
        self,
        *,
        base_url: str,
        transport: HttpTransport,
        scope: Scope,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        organization: str | None = None,
        max_tokens_field: MaxTokensField = "auto",
        provider_name: str | None = None,
    ) -> None:
        defaults = {"Accept": "text/event-stream"}
        if api_key:
            defaults["Authorization"] = f"Bearer {api_key}"
        if organization:
            defaults["OpenAI-Organization"] = organization
        super().__init__(base_url, transport, scope, defaults, headers)
        self.provider_name = (
            provider_for_url(self._base_url)
            if provider_name is None
            else check_provider_name(provider_name)
        )
        """``gen_ai.provider.name`` of this client's calls."""
        self._max_tokens_field = check_limit_field(max_tokens_field)
        # Under "auto": the field each model's server turned out to take instead.
        self._limit_fields: dict[str, MaxTokensField] = {}
        # Models whose server refused ``stream_options``.
        self._no_stream_options: set[str] = set()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Send ``request`` and yield its deltas, then one ``StreamDone``.

        Raises:
            TransientModelError: 408/425/429/5xx, network failures, timeouts.
            StreamIdleTimeout: no bytes for ``request.idle_timeout_seconds``.
            StreamIncomplete: the stream ended before the model finished.
            MalformedChunk: a chunk that is not a JSON object.
            ContextOverflow: the provider said the prompt is too long.
            ModelEgressDenied: the egress policy refused the endpoint.
            ModelError: any other refusal (400, 401, 403, 404, 422...).
        """
        setting = self._limit_fields.get(request.model, self._max_tokens_field)
        switched = False
        while True:
            include_usage = request.model not in self._no_stream_options
            body = request_body(
                request,
                max_tokens_field=setting,
                base_url=self._base_url,
                include_usage=include_usage,
            )
            switch_to: MaxTokensField | None = None
            drop_usage = False
            async with self._post(
                "/chat/completions", body, idle_seconds=request.idle_timeout_seconds
            ) as response:
                if isinstance(response, Refusal):
                    if response.status == 400:
                        drop_usage = include_usage and refuses_stream_options(response.text)
                        if not switched and not drop_usage:
                            switch_to = self._limit_field_instead(request, setting, response.text)
                    if switch_to is None and not drop_usage:
                        raise response.error()
                else:
                    async for event in _events(response, request.model):
                        yield event
            if drop_usage:
                logger.info(
                    "%s refused stream_options for model %r; asking without it, so its "
                    "streams may carry no usage",
                    self._base_url,
                    request.model,
                )
                self._no_stream_options.add(request.model)
                continue
            if switch_to is None:
                return
            logger.info(
                "%s refused the output limit as %s for model %r; sending %s instead",
                self._base_url,
                "/".join(
                    output_limit_fields(setting, model=request.model, base_url=self._base_url)
                ),
                request.model,
                switch_to,
            )
            self._limit_fields[request.model] = switch_to
            setting = switch_to
            switched = True

    def _limit_field_instead(
        self, request: ModelRequest, setting: MaxTokensField, error_body: str
    ) -> MaxTokensField | None:
        """The field to retry with after a 400, or None when the 400 stands."""
        if self._max_tokens_field != "auto" or request.max_output_tokens is None:
            return None
        sent = output_limit_fields(setting, model=request.model, base_url=self._base_url)
        return refused_limit_field(sent, error_body)


def _interpret(sse: SseEvent, tally: StreamTally, model: str) -> list[StreamEvent] | None:
    """The events one SSE event carries, or None for the end-of-stream marker."""
    if sse.data.strip() == _DONE:
        return None
    chunk = decode_event(sse, "chunk")
    if sse.event == "error" or chunk.get("error"):
        raise error_in_stream(chunk if "error" in chunk else {"error": chunk})
    return read_chunk(chunk, tally, model)


async def _events(response: httpx.Response, model: str) -> AsyncIterator[StreamEvent]:
    """Turn the body's server-sent events into stream events, ending with StreamDone.

    The finish reason arrives before the usage chunk, so the stream is read on to the
    ``[DONE]`` marker (or the end of the body) before ``StreamDone`` is produced. Only
    a body that ends with neither a marker nor a finish reason counts as cut off.
    """
    parser = SseParser()
    tally = StreamTally()
    marker = False
    async with aclosing(server_events(response, parser)) as sses:
        async for sse in sses:
            if len(sse.data) > _INLINE_CHUNK_CHARS:
                events = await asyncio.to_thread(_interpret, sse, tally, model)
            else:
                events = _interpret(sse, tally, model)
            if events is None:
                marker = True
                break
            for event in events:
                yield event
    if not marker and tally.finish_reason is None:
        raise cut_off(parser)
    finish = tally.finish_reason or "stop"
    if tally.saw_tool_call and finish in _CALLING_FINISHES:
        # Some servers end an answer that calls tools with "stop", or with the legacy
        # "function_call"; recorded alike, such answers read the same whoever served them.
        finish = "tool_calls"
    yield StreamDone(finish_reason=finish, usage=tally.usage, cost=tally.cost, model=tally.model)


__all__ = ["OpenAICompatibleClient"]
