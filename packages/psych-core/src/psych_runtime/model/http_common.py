"""What the HTTP model clients share: model lists, error bodies, streamed events.

Each client keeps its own URL layout and wire format; these are the parts where the
two behave the same and should stay the same.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from psych_runtime.core.scope import Scope
from psych_runtime.egress.policy import EgressDenied
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.model.port import MalformedChunk
from psych_runtime.model.sse import SseEvent

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


def _a(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


__all__ = ["ERROR_BODY_BYTES", "decode_event", "error_body", "list_model_ids"]
