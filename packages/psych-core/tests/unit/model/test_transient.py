"""Which model failures are retried, and how long the provider asked us to wait."""

from datetime import UTC
from datetime import datetime

import httpx
import pytest

from psych_runtime.egress.policy import EgressDecision
from psych_runtime.egress.policy import EgressDenied
from psych_runtime.model.port import ContextOverflow
from psych_runtime.model.port import MalformedChunk
from psych_runtime.model.port import ModelEgressDenied
from psych_runtime.model.port import ModelError
from psych_runtime.model.port import StreamIdleTimeout
from psych_runtime.model.port import StreamIncomplete
from psych_runtime.model.port import TransientModelError
from psych_runtime.model.transient import error_from_exception
from psych_runtime.model.transient import error_from_status
from psych_runtime.model.transient import error_in_stream
from psych_runtime.model.transient import is_transient_status
from psych_runtime.model.transient import parse_retry_after
from psych_runtime.model.transient import provider_message

NOW = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize("status", [408, 425, 429, 500, 502, 503, 504, 529, 599])
def test_retryable_statuses(status: int) -> None:
    assert is_transient_status(status)
    error = error_from_status(status, {}, "")
    assert isinstance(error, TransientModelError)
    assert error.transient
    assert error.status_code == status
    assert error.kind == f"http_{status}"


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 413, 422])
def test_permanent_statuses(status: int) -> None:
    assert not is_transient_status(status)
    error = error_from_status(status, {}, '{"error": {"message": "nope"}}')
    assert type(error) is ModelError
    assert not error.transient
    assert error.kind == f"http_{status}"
    assert "nope" in str(error)


@pytest.mark.parametrize(
    "body",
    [
        '{"error": {"message": "This model\'s maximum context length is 8192 tokens.", '
        '"code": "context_length_exceeded"}}',
        '{"error": {"message": "prompt is too long: 210000 tokens > 200000 maximum"}}',
        "Input exceeds the context window of this model",
        '{"error": {"code": "context_length_exceeded"}}',
    ],
)
def test_context_overflow_is_recognised_from_a_400_body(body: str) -> None:
    error = error_from_status(400, {}, body)
    assert isinstance(error, ContextOverflow)
    assert error.kind == "context_overflow"
    assert not error.transient


def test_an_overflow_phrase_in_a_rate_limit_stays_a_rate_limit() -> None:
    error = error_from_status(429, {"Retry-After": "3"}, "maximum context length")
    assert type(error) is TransientModelError
    assert error.retry_after == 3.0


def test_an_ordinary_400_is_not_an_overflow() -> None:
    assert (
        type(error_from_status(400, {}, '{"error": {"message": "bad tool schema"}}')) is ModelError
    )


def test_retry_after_in_seconds_and_milliseconds() -> None:
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    # The millisecond header is more precise and wins when both are sent.
    assert parse_retry_after({"Retry-After": "7", "retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({}) is None


def test_retry_after_as_an_http_date() -> None:
    headers = {"Retry-After": "Fri, 01 May 2026 12:00:30 GMT"}
    assert parse_retry_after(headers, now=NOW) == 30.0
    past = {"Retry-After": "Fri, 01 May 2026 11:59:00 GMT"}
    assert parse_retry_after(past, now=NOW) == 0.0


@pytest.mark.parametrize("value", ["soon", "-5", "nan", "inf", ""])
def test_unusable_retry_after_is_ignored(value: str) -> None:
    assert parse_retry_after({"Retry-After": value}, now=NOW) is None


def test_a_transient_status_carries_its_retry_after() -> None:
    error = error_from_status(503, {"retry-after-ms": "1200"}, "")
    assert error.retry_after == 1.2


def test_provider_messages_are_extracted_and_bounded() -> None:
    assert provider_message('{"error": {"message": "slow down", "type": "rate_limit"}}') == (
        "slow down (rate_limit)"
    )
    assert provider_message('{"error": "plain"}') == "plain"
    assert provider_message("<html>Bad gateway</html>") == "<html>Bad gateway</html>"
    assert len(provider_message("x" * 5000)) < 600


def test_an_error_object_inside_the_stream() -> None:
    overloaded = error_in_stream({"error": {"message": "upstream overloaded"}})
    assert type(overloaded) is TransientModelError
    assert overloaded.kind == "stream_error"
    coded = error_in_stream({"error": {"message": "bad key", "code": 401}})
    assert type(coded) is ModelError
    assert coded.status_code == 401
    too_long = error_in_stream({"error": {"message": "prompt is too long"}})
    assert isinstance(too_long, ContextOverflow)


def _request() -> httpx.Request:
    return httpx.Request("POST", "https://models.example/v1/chat/completions")


@pytest.mark.parametrize(
    ("raised", "expected", "kind"),
    [
        (
            httpx.ConnectError("refused", request=_request()),
            TransientModelError,
            "connection_error",
        ),
        (httpx.ConnectTimeout("slow", request=_request()), TransientModelError, "timeout"),
        (httpx.PoolTimeout("busy", request=_request()), TransientModelError, "timeout"),
        (httpx.ReadTimeout("", request=_request()), StreamIdleTimeout, "idle_timeout"),
        (
            httpx.RemoteProtocolError("cut", request=_request()),
            TransientModelError,
            "connection_error",
        ),
        (httpx.DecodingError("bad gzip", request=_request()), MalformedChunk, "malformed_chunk"),
        (httpx.UnsupportedProtocol("ftp", request=_request()), ModelError, "request_error"),
    ],
)
def test_transport_failures_before_the_body(
    raised: Exception, expected: type[ModelError], kind: str
) -> None:
    error = error_from_exception(raised)
    assert type(error) is expected
    assert error.kind == kind
    assert error.__cause__ is raised


def test_a_read_failure_once_the_body_is_flowing_is_a_broken_stream() -> None:
    for raised in (
        httpx.RemoteProtocolError("incomplete chunked read", request=_request()),
        httpx.ReadError("reset", request=_request()),
    ):
        error = error_from_exception(raised, streaming=True)
        assert type(error) is StreamIncomplete
        assert error.transient


def test_the_idle_timeout_message_names_the_limit() -> None:
    error = error_from_exception(httpx.ReadTimeout("", request=_request()), idle_seconds=0.3)
    assert "0.3s" in str(error)


def test_a_refused_egress_becomes_a_permanent_model_error() -> None:
    denied = EgressDenied(
        httpx.URL("http://10.0.0.5/v1"), EgressDecision.deny("deny_private", "private")
    )
    error = error_from_exception(denied)
    assert isinstance(error, ModelEgressDenied)
    assert not error.transient
    assert error.kind == "egress_denied"
    assert error.__cause__ is denied
    assert "10.0.0.5" in str(error) and "deny_private" in str(error)


def test_model_errors_pass_through_untouched() -> None:
    original = StreamIncomplete("cut")
    assert error_from_exception(original) is original
