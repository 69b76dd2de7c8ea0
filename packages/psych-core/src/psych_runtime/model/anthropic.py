"""A ModelClient for Anthropic's Messages API, streamed over server-sent events.

Speaking the provider's own format, rather than an OpenAI-compatible layer in front of
it, is what brings its usage through intact: cache reads, and cache writes split by
their five-minute and one-hour lifetimes, which are billed at different rates. Like
every client here it opens no connection of its own; all traffic goes through the
``HttpTransport`` it is given, so the egress policy sees every request.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING
from typing import ClassVar

from pydantic import JsonValue

from psych_runtime.core.errors import PsychError
from psych_runtime.core.scope import Scope
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.model.anthropic_wire import MessageTally
from psych_runtime.model.anthropic_wire import PromptCaching
from psych_runtime.model.anthropic_wire import read_event
from psych_runtime.model.anthropic_wire import request_body
from psych_runtime.model.http_common import HttpModelClient
from psych_runtime.model.http_common import Refusal
from psych_runtime.model.http_common import cut_off
from psych_runtime.model.http_common import decode_event
from psych_runtime.model.http_common import server_events
from psych_runtime.model.port import ModelError
from psych_runtime.model.port import ModelRequest
from psych_runtime.model.port import StreamDone
from psych_runtime.model.port import StreamEvent
from psych_runtime.model.sse import SseParser
from psych_runtime.telemetry.providers import check_provider_name

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
"""The ``anthropic-version`` header sent with every request."""


class InvalidClientSetting(PsychError, ValueError):
    """A client setting that can never produce a valid request."""


class AnthropicClient(HttpModelClient):
    """Streams answers from Anthropic's Messages API (``POST /v1/messages``).

    Args:
        transport: the egress seam every request goes through.
        scope: the tenant this client acts for; every egress check receives it.
        api_key: sent as ``x-api-key`` when set. A gateway that authenticates at the
            network layer needs none.
        base_url: the API root, without ``/v1``; messages are POSTed to
            ``{base_url}/v1/messages`` and models listed from ``{base_url}/v1/models``.
        headers: extra headers for every request, applied last (they may replace the
            defaults).
        betas: beta feature names sent together as ``anthropic-beta``.
        default_max_tokens: the output limit sent when the request sets none; the
            API requires one on every request.
        prompt_caching: where to place cache breakpoints and for how long; see
            ``PromptCaching``. None uses its defaults (the tools, the system prompt
            and the last message, five minutes each);
            ``PromptCaching(tools=False, system=False, last_message=False)`` marks
            none.
        max_retries: how many times a request refused with 408, 429, 529 or another
            5xx, or one that could not connect, is sent again before the error is
            raised. Only a request whose answer has not started streaming is
            resent; a stream that stalls or breaks off is left to the agent loop,
            which retries within the Run's budget.
        retry_base_seconds: the first wait between attempts when the server gives
            no ``Retry-After``; it doubles each time, with jitter.
        max_retry_wait_seconds: the longest wait the client accepts. A server asking
            for longer gets the error raised instead (with its ``retry_after``), so
            the Run's own retry policy decides.
        sleep: how to wait between attempts; tests pass a recorder.
        provider_name: what telemetry reports as ``gen_ai.provider.name`` for this
            client's calls; None says ``anthropic``.

    Raises:
        InvalidClientSetting: a negative retry count or wait, or an output limit
            below one.
        InvalidProviderName: ``provider_name`` is not a printable text of 1 to 64
            characters without a space at either end.
    """

    models_path: ClassVar[str] = "/v1/models?limit=1000"

    def __init__(
        self,
        *,
        transport: HttpTransport,
        scope: Scope,
        api_key: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        headers: Mapping[str, str] | None = None,
        betas: Sequence[str] = (),
        default_max_tokens: int = 4096,
        prompt_caching: PromptCaching | None = None,
        max_retries: int = 2,
        retry_base_seconds: float = 0.5,
        max_retry_wait_seconds: float = 60.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        provider_name: str | None = None,
    ) -> None:
        if default_max_tokens < 1:
            raise InvalidClientSetting("default_max_tokens must be at least 1")
        if max_retries < 0 or retry_base_seconds < 0 or max_retry_wait_seconds < 0:
            raise InvalidClientSetting("retry counts and waits may not be negative")
        self.provider_name = (
            "anthropic" if provider_name is None else check_provider_name(provider_name)
        )
        """``gen_ai.provider.name`` of this client's calls."""
        self._default_max_tokens = default_max_tokens
        self._caching = prompt_caching if prompt_caching is not None else PromptCaching()
        self._max_retries = max_retries
        self._retry_base = retry_base_seconds
        self._max_wait = max_retry_wait_seconds
        self._sleep = sleep
        defaults = {
            "Accept": "text/event-stream",
            "anthropic-version": API_VERSION,
        }
        if api_key:
            defaults["x-api-key"] = api_key
        if betas:
            defaults["anthropic-beta"] = ",".join(betas)
        super().__init__(base_url, transport, scope, defaults, headers)

    def _wait_before(self, attempt: int, error: ModelError) -> float | None:
        """Seconds to wait before sending again, or None when the error stands.

        Only a refusal the server gave (a status, or an error event before the answer)
        and a failed connection are retried here. A stream that went quiet or broke
        off is left to the caller: resending it at once would only double the wait.
        """
        if attempt >= self._max_retries or not error.transient:
            return None
        if error.status_code is None and error.kind != "connection_error":
            return None
        asked: float | None = error.retry_after
        if asked is not None:
            return asked if asked <= self._max_wait else None
        backoff = self._retry_base * (1 << attempt)
        return min(backoff * (0.5 + random.random() / 2), self._max_wait)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Send ``request`` and yield its deltas, then one ``StreamDone``.

        Raises:
            TransientModelError: 408/429/529/5xx (after the client's own retries),
                network failures, timeouts, an overload reported inside the stream.
            StreamIdleTimeout: no bytes for ``request.idle_timeout_seconds``.
            StreamIncomplete: the stream ended before ``message_stop``.
            MalformedChunk: an event whose data is not a JSON object.
            ContextOverflow: the provider said the prompt is too long.
            ModelEgressDenied: the egress policy refused the endpoint.
            ModelError: any other refusal (400, 401, 403, 404...).
        """
        body = request_body(
            request, default_max_tokens=self._default_max_tokens, caching=self._caching
        )
        attempt = 0
        while True:
            started = False
            wait: float | None = None
            try:
                async with aclosing(self._attempt(request, body)) as events:
                    async for event in events:
                        started = True
                        yield event
                return
            except ModelError as error:
                wait = None if started else self._wait_before(attempt, error)
                if wait is None:
                    raise
                logger.info(
                    "%s answered %s; sending again in %.2fs (retry %d of %d)",
                    self._base_url,
                    error.kind,
                    wait,
                    attempt + 1,
                    self._max_retries,
                )
            attempt += 1
            await self._sleep(wait)

    async def _attempt(
        self, request: ModelRequest, body: dict[str, JsonValue]
    ) -> AsyncGenerator[StreamEvent]:
        """One request and its stream, with every failure turned into a ModelError."""
        async with self._post(
            "/v1/messages",
            body,
            idle_seconds=request.idle_timeout_seconds,
            headers={**self._headers, "content-type": "application/json"},
        ) as response:
            if isinstance(response, Refusal):
                raise response.error()
            async for event in _events(response):
                yield event


async def _events(response: httpx.Response) -> AsyncIterator[StreamEvent]:
    """Turn the body's server-sent events into stream events, ending with StreamDone.

    The answer is complete at ``message_stop``. A body that ends before it is cut off,
    unless ``message_delta`` already gave the stop reason (the closing event is then
    all that is missing, and nothing of the answer is).
    """
    parser = SseParser()
    tally = MessageTally()
    async with aclosing(server_events(response, parser)) as sses:
        async for sse in sses:
            for event in read_event(sse.event, decode_event(sse, "event"), tally):
                yield event
            if tally.stopped:
                break
    if not tally.stopped and tally.stop_reason is None:
        raise cut_off(parser)
    finish = tally.finish_reason or ("tool_calls" if tally.saw_tool_call else "stop")
    yield StreamDone(finish_reason=finish, usage=tally.reported_usage(), model=tally.model)


__all__ = ["API_VERSION", "DEFAULT_BASE_URL", "AnthropicClient", "InvalidClientSetting"]
