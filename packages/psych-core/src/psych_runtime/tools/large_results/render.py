"""Measuring a tool result, and the two thresholds that decide where it goes.

A result is judged by the UTF-8 size of the text the model would be sent: a string as
it is, anything else as compact JSON. Two separate limits then apply, because they
answer two separate questions:

* ``Limits.large_result_bytes`` (in the Spec) asks "is this too big to put in front of
  the model?" Above it the result is *elided*: the model gets a handle, the size and a
  preview, and pages through the rest with ``read_tool_output``. The record still holds
  the whole result.
* ``Runtime.blob_offload_bytes`` (in the deployment) asks "is this too big to put in a
  log record?" Above it the bytes are *offloaded* to a BlobStore and the record keeps
  only their address. The default sits under DynamoDB's 400 KB item limit, the
  tightest of the first-party stores, with room left for the rest of the record.

Both comparisons are strict: a result exactly at a limit stays where it is.
"""

import json
from dataclasses import dataclass
from typing import Final

from pydantic import JsonValue

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.projections.tool_text import render_json

DEFAULT_OFFLOAD_BYTES: Final = 300_000
"""Results larger than this go to the BlobStore; sized under DynamoDB's 400 KB item cap."""

PREVIEW_CHARS: Final = 2_000
"""How much of an elided result the model is shown in place of the whole."""

JSON_CONTENT_TYPE: Final = "application/json"
TEXT_CONTENT_TYPE: Final = "text/plain; charset=utf-8"
BINARY_CONTENT_TYPE: Final = "application/octet-stream"

_ENCODING_ERRORS = "surrogatepass"
"""Lone surrogates survive the trip to bytes and back instead of failing the call."""


@dataclass(frozen=True, slots=True)
class RenderedResult:
    """A tool result as the bytes that are measured, previewed and possibly offloaded.

    Attributes:
        text: what the model would be sent if the result were shown whole.
        data: ``text`` as UTF-8; its length is the size compared with the limits.
        content_type: how to decode ``data`` again (JSON or plain text).
    """

    text: str
    data: bytes
    content_type: str

    @property
    def size(self) -> int:
        """The result's size in bytes."""
        return len(self.data)

    @property
    def preview(self) -> str:
        """The opening of the result, shown to the model in place of the whole."""
        return self.text[:PREVIEW_CHARS]


def render_result(value: JsonValue) -> RenderedResult:
    """Render a tool result the way the model would be sent it, and measure it."""
    text = render_json(value)
    content_type = TEXT_CONTENT_TYPE if isinstance(value, str) else JSON_CONTENT_TYPE
    return RenderedResult(
        text=text, data=text.encode("utf-8", _ENCODING_ERRORS), content_type=content_type
    )


def result_handle(call_id: ToolCallId) -> str:
    """The handle an elided result is read back by; one per call, so one per result."""
    return f"res_{call_id}"


def is_text(content_type: str) -> bool:
    """Whether stored bytes of this type can be read back as lines."""
    media = content_type.split(";", 1)[0].strip().lower()
    return media.startswith("text/") or media == JSON_CONTENT_TYPE or media.endswith("+json")


def decode_stored(data: bytes, content_type: str) -> JsonValue:
    """Turn offloaded bytes back into the value the tool returned.

    Raises:
        ValueError: the bytes are binary, or are not the JSON their type claims.
    """
    media = content_type.split(";", 1)[0].strip().lower()
    if not is_text(content_type):
        raise ValueError(f"{content_type} content is binary")
    text = data.decode("utf-8", _ENCODING_ERRORS)
    if media == JSON_CONTENT_TYPE or media.endswith("+json"):
        loaded: JsonValue = json.loads(text)
        return loaded
    return text


__all__ = [
    "BINARY_CONTENT_TYPE",
    "DEFAULT_OFFLOAD_BYTES",
    "JSON_CONTENT_TYPE",
    "PREVIEW_CHARS",
    "TEXT_CONTENT_TYPE",
    "RenderedResult",
    "decode_stored",
    "is_text",
    "render_result",
    "result_handle",
]
