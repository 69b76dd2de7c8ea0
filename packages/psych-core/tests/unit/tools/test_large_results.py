"""Measuring tool results and turning offloaded bytes back into values."""

import pytest

from psych_runtime.core.ids import ToolCallId
from psych_runtime.tools.large_results.render import JSON_CONTENT_TYPE
from psych_runtime.tools.large_results.render import PREVIEW_CHARS
from psych_runtime.tools.large_results.render import TEXT_CONTENT_TYPE
from psych_runtime.tools.large_results.render import decode_stored
from psych_runtime.tools.large_results.render import is_text
from psych_runtime.tools.large_results.render import render_result
from psych_runtime.tools.large_results.render import result_handle


def test_strings_are_measured_as_utf8_text_as_they_are() -> None:
    rendered = render_result("héllo")
    assert rendered.data == "héllo".encode()
    assert rendered.size == 6
    assert rendered.content_type == TEXT_CONTENT_TYPE


def test_structured_values_are_measured_as_compact_json() -> None:
    rendered = render_result({"k": ["ü", 1, None]})
    assert rendered.data == '{"k":["ü",1,null]}'.encode()
    assert rendered.content_type == JSON_CONTENT_TYPE


def test_the_preview_is_the_opening_characters() -> None:
    text = "".join(chr(0x4E00 + i % 500) for i in range(PREVIEW_CHARS * 2))
    assert render_result(text).preview == text[:PREVIEW_CHARS]


@pytest.mark.parametrize(
    "value", ["plain\ntext", "lone \ud800 surrogate", "", {"a": [1, "b"]}, [], 3]
)
def test_offloaded_bytes_decode_to_the_same_value(value: object) -> None:
    rendered = render_result(value)  # type: ignore[arg-type]
    assert decode_stored(rendered.data, rendered.content_type) == value


def test_binary_content_is_not_decoded() -> None:
    assert not is_text("application/octet-stream")
    assert is_text("application/problem+json") and is_text("text/csv")
    with pytest.raises(ValueError, match="binary"):
        decode_stored(b"\x00\x01", "application/octet-stream")


def test_handles_are_derived_from_the_call() -> None:
    assert result_handle(ToolCallId("call_7")) == "res_call_7"
