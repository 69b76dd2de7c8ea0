"""What the HTTP model clients share: the streamed POST, model lists, error bodies, events.

Each client keeps its own URL layout and wire format; these are the parts where the
two behave the same and must stay the same: how a streamed request is sent through the
egress seam with the request's idle timeout, how a refusal's body is read, how a
network failure becomes a ``ModelError`` (and whether the answer had started), how
server-sent events are read off the body, and how the model list is fetched once.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import ClassVar

from pydantic import JsonValue

from psych_runtime.core.scope import Scope
from psych_runtime.egress.policy import EgressDenied
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.model.port import MalformedChunk
from psych_runtime.model.port import ModelError
from psych_runtime.model.port import StreamIncomplete
from psych_runtime.model.sse import SseEvent
from psych_runtime.model.sse import SseParser
from psych_runtime.model.transient import error_from_exception
from psych_runtime.model.transient import error_from_status

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger(__name__)

ERROR_BODY_BYTES = 64 * 1024
"""How much of an error response is read: enough to classify it, bounded in size."""


async def list_model_ids(
    transport: HttpTransport, url: str, *, scope: Scope, headers: Mapping[str, str]
) -> frozenset[str]:
    """The ids in a ``{"data": [{"id": ...}, ...]}`` model list; empty when unknown.

    Failures are logged and answered with an empty set ("do not check"), never raised:
    publishing should not fail because a proxy hides its list or was briefly down.
    """
    import httpx  # deferred: importing httpx costs a noticeable part of a second

    asked = {**headers, "Accept": "application/json"}
    try:
        response = await transport.request("GET", url, scope=scope, headers=asked)
        if response.status_code != 200:
            logger.warning("listing models at %s answered HTTP %s", url, response.status_code)
            return frozenset()
        payload = response.json()
    except (httpx.HTTPError, EgressDenied, ValueError) as error:
        logger.warning("could not list models at %s: %s", url, error)
        return frozenset()
    entries = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(entries, list):
        logger.warning("the model list at %s has no 'data' array", url)
        return frozenset()
    return frozenset(
        entry["id"]
        for entry in entries
        if isinstance(entry, dict) and isinstance(entry.get("id"), str) and entry["id"]
    )


async def error_body(response: httpx.Response) -> str:
    """The start of an error response's body, decoded leniently."""
    import httpx  # deferred: importing httpx costs a noticeable part of a second

    collected = bytearray()
    try:
        async for piece in response.aiter_bytes():
            collected += piece
            if len(collected) >= ERROR_BODY_BYTES:
                break
    except httpx.HTTPError:
        pass  # the status alone still classifies the failure
    return collected[:ERROR_BODY_BYTES].decode("utf-8", errors="replace")


def decode_event(event: SseEvent, what: str) -> dict[str, object]:
    """One streamed event's data as a JSON object.

    Raises:
        MalformedChunk: the data is not JSON, or not an object; ``what`` names the unit
            in the message (``chunk``, ``event``).
    """
    try:
        data = json.loads(event.data)
    except ValueError:
        preview = event.data[:120]
        raise MalformedChunk(f"the model sent {_a(what)} that is not JSON: {preview!r}") from None
    if not isinstance(data, dict):
        preview = event.data[:120]
        raise MalformedChunk(f"the model sent {_a(what)} that is not an object: {preview!r}")
    return data


def stream_timeout(transport: HttpTransport, idle_seconds: float) -> httpx.Timeout:
    """The transport's timeouts, with reading bounded by the request's idle timeout.

    httpx's read timeout is exactly "no bytes for this long", which is what the idle
    timeout means; waiting for the response headers counts as idle too. 0 disables it.
    """
    import httpx  # deferred: importing httpx costs a noticeable part of a second

    base = transport.timeout
    return httpx.Timeout(
        connect=base.connect,
        read=idle_seconds if idle_seconds > 0 else None,
        write=base.write,
        pool=base.pool,
    )


@dataclass(frozen=True, slots=True)
class Refusal:
    """A model endpoint's refusal (status 400 or above), its body read.

    Attributes:
        status: the HTTP status.
        headers: the response's headers (``Retry-After`` says how long to wait).
        text: the start of the body, decoded leniently.
    """

    status: int
    headers: Mapping[str, str]
    text: str

    def error(self) -> ModelError:
        """The ``ModelError`` this refusal is (transient or not, by status and body)."""
        return error_from_status(self.status, self.headers, self.text)


@asynccontextmanager
async def model_stream(
    transport: HttpTransport,
    url: str,
    *,
    scope: Scope,
    headers: Mapping[str, str],
    body: Mapping[str, JsonValue],
    idle_seconds: float,
) -> AsyncIterator[httpx.Response | Refusal]:
    """POST ``body`` to ``url`` through the egress seam and hand back the streaming answer.

    Yields the response once it is a 200 (its body still to be read), or a ``Refusal``
    for a status of 400 or more, for the client to raise or to act on. A network
    failure, a timeout or an egress refusal, while connecting or while the caller reads
    the body, is raised as the ``ModelError`` it amounts to, saying whether the answer
    had started.

    Raises:
        ModelError: another status than 200 below 400, or a failure as above.
    """
    import httpx  # deferred: importing httpx costs a noticeable part of a second

    reading = False
    try:
        async with transport.stream(
            "POST",
            url,
            scope=scope,
            headers=headers,
            json=dict(body),
            timeout=stream_timeout(transport, idle_seconds),
        ) as response:
            if response.status_code >= 400:
                yield Refusal(response.status_code, response.headers, await error_body(response))
                return
            if response.status_code != 200:
                raise ModelError(
                    f"model endpoint answered HTTP {response.status_code}, expected 200",
                    status_code=response.status_code,
                )
            reading = True
            yield response
    except (httpx.HTTPError, EgressDenied) as error:
        raise error_from_exception(error, streaming=reading, idle_seconds=idle_seconds) from error


async def server_events(response: httpx.Response, parser: SseParser) -> AsyncGenerator[SseEvent]:
    """Every server-sent event in the body as it arrives, then any the parser held."""
    async for raw in response.aiter_bytes():
        for sse in parser.feed(raw):
            yield sse
    for sse in parser.close():
        yield sse


class ModelList:
    """A client's list of model ids, fetched once and then kept.

    An empty list means "unknown, do not check" and is not kept, so a later call asks
    again; concurrent first callers share one request.

    Args:
        fetch: asks the endpoint (``list_model_ids`` with the client's URL).
    """

    __slots__ = ("_fetch", "_lock", "_models")

    def __init__(self, fetch: Callable[[], Awaitable[frozenset[str]]]) -> None:
        self._fetch = fetch
        self._models: frozenset[str] | None = None
        self._lock = asyncio.Lock()

    async def get(self) -> frozenset[str]:
        """The model ids, fetching them the first time (or until a fetch finds some)."""
        async with self._lock:
            if self._models is not None:
                return self._models
            models = await self._fetch()
            if models:
                self._models = models
            return models


class HttpModelClient:
    """What an HTTP model client keeps besides its wire format.

    Where requests go, for which tenant and with which headers, the streamed POST
    through the egress seam, and the model list fetched once. A client for a new wire
    format subclasses it, names its model list in ``models_path`` and writes ``stream``.

    Args:
        base_url: the API root; a trailing ``/`` is dropped.
        transport: the egress seam every request goes through.
        scope: the tenant this client acts for; every egress check receives it.
        defaults: the headers the client always sends (``Accept``, credentials).
        headers: extra headers from the caller, applied last (they may replace the
            defaults).
    """

    models_path: ClassVar[str] = "/models"
    """Where, under the API root, the server lists its model ids."""

    def __init__(
        self,
        base_url: str,
        transport: HttpTransport,
        scope: Scope,
        defaults: Mapping[str, str],
        headers: Mapping[str, str] | None,
    ) -> None:
        self._base_url = base_url.rstrip("/")
        self._transport = transport
        self._scope = scope
        self._headers = {**defaults, **(headers or {})}
        self._models = ModelList(self._fetch_models)

    def __repr__(self) -> str:
        # Spelled out so the API key in the headers never lands in a log line.
        return f"{type(self).__name__}(base_url={self._base_url!r}, scope={self._scope.tenant!r})"

    async def known_models(self) -> frozenset[str]:
        """The model ids the server lists under ``models_path``, fetched once and kept.

        An empty set means "unknown, do not check": publishing should not fail because
        a proxy hides its model list or was briefly unreachable. Failures are logged
        and not kept, so a later call tries again.
        """
        return await self._models.get()

    async def _fetch_models(self) -> frozenset[str]:
        url = f"{self._base_url}{self.models_path}"
        return await list_model_ids(self._transport, url, scope=self._scope, headers=self._headers)

    def _post(
        self,
        path: str,
        body: Mapping[str, JsonValue],
        *,
        idle_seconds: float,
        headers: Mapping[str, str] | None = None,
    ) -> AbstractAsyncContextManager[httpx.Response | Refusal]:
        """``model_stream`` for ``path`` under the API root, with the client's headers.

        Args:
            path: the endpoint under the API root (``/chat/completions``).
            body: the JSON body.
            idle_seconds: the request's idle timeout.
            headers: sent instead of the client's headers, when given.
        """
        return model_stream(
            self._transport,
            f"{self._base_url}{path}",
            scope=self._scope,
            headers=self._headers if headers is None else headers,
            body=body,
            idle_seconds=idle_seconds,
        )


def cut_off(parser: SseParser) -> StreamIncomplete:
    """The error for a body that ended before the model finished its answer."""
    cut = " in the middle of an event" if parser.truncated else ""
    return StreamIncomplete(f"the model's stream ended{cut} before the model finished")


def _a(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


__all__ = [
    "ERROR_BODY_BYTES",
    "HttpModelClient",
    "ModelList",
    "Refusal",
    "cut_off",
    "decode_event",
    "error_body",
    "list_model_ids",
    "model_stream",
    "server_events",
    "stream_timeout",
]
