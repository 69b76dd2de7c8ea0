"""Sorting model-call failures into "try again" and "stop".

The agent loop retries a ``TransientModelError`` (within the Run's retry budget) and
ends the Run on any other ``ModelError``. Getting the split wrong costs either a Run
that gives up on a momentary overload or a Run that burns its budget resending a
request the provider will never accept, so the rules live here, in one place:

- transient: 408, 425, 429, every 5xx, connection failures, timeouts, dropped streams;
- permanent: every other 4xx, including 409 (a conflict does not clear by waiting);
- context overflow: a 400 (or 413) whose body says the prompt is too long, kept apart
  because the loop can recover by compacting the conversation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC
from datetime import datetime
from email.utils import parsedate_to_datetime

from psych_runtime.egress.policy import EgressDenied
from psych_runtime.model.port import ContextOverflow
from psych_runtime.model.port import MalformedChunk
from psych_runtime.model.port import ModelEgressDenied
from psych_runtime.model.port import ModelError
from psych_runtime.model.port import StreamIdleTimeout
from psych_runtime.model.port import StreamIncomplete
from psych_runtime.model.port import TransientModelError

TRANSIENT_STATUSES = frozenset({408, 425, 429})
"""Client-error statuses worth retrying; every 5xx is retried as well."""

_OVERFLOW_STATUSES = frozenset({400, 413})
_OVERFLOW = re.compile(
    r"context_length_exceeded|maximum context length|context length exceeded"
    r"|prompt is too long|exceeds? the (?:model'?s? )?context window"
    r"|input is too long|too many input tokens",
    re.IGNORECASE,
)
_MESSAGE_CHARS = 500


def is_transient_status(status: int) -> bool:
    """Whether a failed HTTP status is worth retrying."""
    return status in TRANSIENT_STATUSES or 500 <= status <= 599


def parse_retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds the server asked us to wait, or None when it did not say.

    ``retry-after-ms`` (milliseconds, sent by some providers for sub-second waits) is
    preferred over the standard ``Retry-After``, which holds either a number of
    seconds or an HTTP date. A date in the past means "now" (0). Garbage is ignored
    rather than trusted.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = _number(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(raw.strip())
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    current = now if now is not None else datetime.now(UTC)
    return max((when - current).total_seconds(), 0.0)


def _number(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    if value != value or value in (float("inf"), float("-inf")) or value < 0:
        return None
    return value


def provider_message(body: str) -> str:
    """The human part of an error body: ``error.message`` when it is JSON, else the text."""
    text = body.strip()
    try:
        parsed = json.loads(text) if text else None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        error = parsed.get("error", parsed)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text = str(error["message"])
            code = error.get("code") or error.get("type")
            if isinstance(code, str) and code not in text:
                text = f"{text} ({code})"
        elif isinstance(error, str):
            text = error
    if len(text) > _MESSAGE_CHARS:
        text = text[:_MESSAGE_CHARS] + "..."
    return text


def says_context_overflow(body: str) -> bool:
    """Whether an error body uses one of the common "prompt too long" phrasings."""
    return _OVERFLOW.search(body) is not None


def error_from_status(status: int, headers: Mapping[str, str], body: str) -> ModelError:
    """The ``ModelError`` for a failed HTTP response.

    Args:
        status: the response status (4xx or 5xx).
        headers: response headers, read for ``Retry-After``.
        body: the response body, possibly cut short by the caller.
    """
    detail = provider_message(body)
    message = f"model endpoint answered HTTP {status}"
    if detail:
        message = f"{message}: {detail}"
    if status in _OVERFLOW_STATUSES and says_context_overflow(body):
        return ContextOverflow(message, status_code=status)
    if is_transient_status(status):
        return TransientModelError(
            message, status_code=status, retry_after=parse_retry_after(headers)
        )
    return ModelError(message, status_code=status)


def error_in_stream(payload: Mapping[str, object]) -> ModelError:
    """The ``ModelError`` for an ``{"error": ...}`` object sent inside a 200 stream.

    Some servers report an upstream failure this way after the headers have gone out.
    A numeric ``code`` is classified like an HTTP status; without one the failure is
    treated as transient, because the usual cause is an overloaded upstream.
    """
    error = payload.get("error")
    body = json.dumps({"error": error}, default=str)
    code = error.get("code") if isinstance(error, dict) else None
    status = code if isinstance(code, int) and 400 <= code <= 599 else None
    if status is not None:
        return error_from_status(status, {}, body)
    detail = provider_message(body)
    if says_context_overflow(body):
        return ContextOverflow(f"model stream reported an error: {detail}")
    return TransientModelError(f"model stream reported an error: {detail}", kind="stream_error")


def error_from_exception(
    error: Exception, *, streaming: bool = False, idle_seconds: float | None = None
) -> ModelError:
    """The ``ModelError`` for a failure below HTTP: refused egress, network, timeouts.

    Args:
        error: what the transport raised.
        streaming: whether the body had started arriving, which turns a read
            failure into a broken stream rather than a failed connection.
        idle_seconds: the read timeout in force, named in an idle-timeout message.
    """
    import httpx  # deferred: importing httpx costs a noticeable part of a second

    if isinstance(error, ModelError):
        return error
    if isinstance(error, EgressDenied):
        message = str(error)
        if error.decision.rule == "deny_private":
            origin = f"{error.url.scheme}://{error.url.netloc.decode('ascii', 'replace')}"
            message = (
                f"{message}. To let the model client reach this endpoint and nothing else "
                f"private, give its HttpTransport policy=EgressPolicy().allowing({origin!r})"
            )
        denied = ModelEgressDenied(message)
        denied.__cause__ = error
        return denied
    result: ModelError
    if isinstance(error, httpx.ReadTimeout):
        waited = f" for {idle_seconds:g}s" if idle_seconds else ""
        result = StreamIdleTimeout(f"no data from the model endpoint{waited}")
    elif isinstance(error, httpx.TimeoutException):
        result = TransientModelError(
            f"timed out talking to the model endpoint: {_describe(error)}", kind="timeout"
        )
    elif isinstance(error, httpx.DecodingError):
        result = MalformedChunk(f"the model's response could not be decoded: {_describe(error)}")
    elif streaming and isinstance(error, httpx.RemoteProtocolError | httpx.ReadError):
        result = StreamIncomplete(f"the model's stream was cut off: {_describe(error)}")
    elif isinstance(error, httpx.TransportError) and not isinstance(
        error, httpx.UnsupportedProtocol | httpx.LocalProtocolError
    ):
        result = TransientModelError(
            f"could not reach the model endpoint: {_describe(error)}", kind="connection_error"
        )
    else:
        result = ModelError(f"model request failed: {_describe(error)}", kind="request_error")
    result.__cause__ = error
    return result


def _describe(error: Exception) -> str:
    return str(error) or type(error).__name__


__all__ = [
    "TRANSIENT_STATUSES",
    "error_from_exception",
    "error_from_status",
    "error_in_stream",
    "is_transient_status",
    "parse_retry_after",
    "provider_message",
    "says_context_overflow",
]
