"""The runtime half of ``read_tool_output``: from a handle to the lines of a result.

A handle is only ever looked up in the fold of the Run that is reading, so a handle
issued by another Run (or another tenant's Run) does not resolve here at all; there is
no shared table to leak through. An offloaded result is fetched from the BlobStore
under the key its record names, and that key must name this Run and tenant too.

The lines of the last result read are kept for the rest of the Attempt: a model paging
through a multi-megabyte result would otherwise fetch and split it again for every page.
"""

import asyncio
from collections.abc import Mapping

from pydantic import JsonValue

from psych_runtime.blob.port import BlobKey
from psych_runtime.blob.port import BlobNotFound
from psych_runtime.blob.port import BlobStore
from psych_runtime.blob.port import InvalidBlobKey
from psych_runtime.core.errors import PsychError
from psych_runtime.core.ids import RunId
from psych_runtime.core.state import RunStateView
from psych_runtime.core.state import ToolResult
from psych_runtime.tools.large_results.read_tool import parse_read_request
from psych_runtime.tools.large_results.read_tool import read_page
from psych_runtime.tools.large_results.read_tool import reading_text
from psych_runtime.tools.large_results.read_tool import split_lines
from psych_runtime.tools.large_results.render import BINARY_CONTENT_TYPE
from psych_runtime.tools.large_results.render import decode_stored
from psych_runtime.tools.large_results.render import is_text


class ResultNotReadable(PsychError):
    """A ``read_tool_output`` call cannot be answered; recorded as the call's failure.

    Attributes:
        kind: the failure kind recorded (``unknown_handle``, ``access_denied``,
            ``blob_store_required``, ``blob_not_found``, ``binary_result``,
            ``unreadable_result``).
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def unknown_handle_message(handle: str) -> str:
    """What the model is told about a handle this Run never issued."""
    return (
        f"No result with handle {handle!r} was issued in this run. Use a handle shown in "
        "place of a result earlier in this conversation."
    )


class OutputReader:
    """Answers ``read_tool_output`` calls for one Attempt of one Run.

    Args:
        blob: where offloaded results live; None when the deployment has none.
        tenant: the Run's tenant.
        run_id: the Run.
    """

    def __init__(self, *, blob: BlobStore | None, tenant: str, run_id: RunId) -> None:
        self._blob = blob
        self._tenant = tenant
        self._run_id = run_id
        self._cached: tuple[str, list[str]] | None = None

    async def read(self, state: RunStateView, arguments: Mapping[str, JsonValue]) -> JsonValue:
        """One page of the result ``arguments["handle"]`` names.

        Raises:
            ToolArgumentsInvalid: the arguments do not fit the tool.
            ResultNotReadable: the handle is unknown here or its bytes are unavailable.
        """
        request, pattern = parse_read_request(arguments)
        lines = await self._lines(state, request.handle)
        # Matching a pattern over millions of lines is CPU work; keep it off the loop.
        return await asyncio.to_thread(read_page, request.handle, lines, request, pattern)

    async def _lines(self, state: RunStateView, handle: str) -> list[str]:
        if self._cached is not None and self._cached[0] == handle:
            return self._cached[1]
        call_id = state.result_handles.get(handle)
        settled = None
        if call_id is not None:
            settled = next((r for r in reversed(state.tool_results) if r.call_id == call_id), None)
        if settled is None:
            raise ResultNotReadable("unknown_handle", unknown_handle_message(handle))
        lines = split_lines(await self._text(settled, handle))
        self._cached = (handle, lines)
        return lines

    async def _text(self, settled: ToolResult, handle: str) -> str:
        if settled.result_handle == handle:
            if settled.blob_key is None:
                return reading_text(settled.result)
            content_type = settled.content_type or BINARY_CONTENT_TYPE
            return reading_text(await self._fetch(settled.blob_key, content_type, settled))
        for attachment in settled.attachments:
            if attachment.handle != handle:
                continue
            if attachment.data is not None and is_text(attachment.content_type):
                return attachment.data.decode("utf-8", "replace")
            raise ResultNotReadable(
                "unreadable_result",
                f"The output {attachment.name!r} ({attachment.size_bytes} bytes of "
                f"{attachment.content_type}) cannot be read as lines.",
            )
        raise ResultNotReadable("unknown_handle", unknown_handle_message(handle))

    async def _fetch(self, blob_key: str, content_type: str, settled: ToolResult) -> JsonValue:
        try:
            key = BlobKey.parse(blob_key)
        except InvalidBlobKey:
            raise ResultNotReadable(
                "unreadable_result", "The stored result's address is not readable."
            ) from None
        if key.tenant != self._tenant or key.run_id != self._run_id:
            raise ResultNotReadable(
                "access_denied", "That result is stored for another run and cannot be read here."
            )
        if not is_text(content_type):
            raise ResultNotReadable(
                "binary_result",
                f"That result is {settled.result_bytes} bytes of {content_type}; binary "
                "content cannot be read as lines.",
            )
        if self._blob is None:
            raise ResultNotReadable(
                "blob_store_required",
                "That result was saved to a blob store, but this runtime has none "
                "configured, so it cannot be read right now.",
            )
        try:
            data = await self._blob.get(key)
        except BlobNotFound:
            raise ResultNotReadable(
                "blob_not_found", "The stored bytes of that result are no longer available."
            ) from None
        try:
            return decode_stored(data, content_type)
        except ValueError as error:
            raise ResultNotReadable(
                "unreadable_result", f"The stored result cannot be decoded ({error})."
            ) from None


__all__ = ["OutputReader", "ResultNotReadable", "unknown_handle_message"]
