"""Deciding how a successful tool result is recorded: whole, elided, or offloaded.

See ``psych_runtime.tools.large_results.render`` for the two thresholds. This module adds the
one side effect: writing an oversized result to the BlobStore, which must be durable
*before* the ``tool_call_finished`` that points at it is written, so a reader never
meets a record whose bytes do not exist yet.
"""

from dataclasses import dataclass

from pydantic import JsonValue

from psych_runtime.blob.port import BlobKey
from psych_runtime.blob.port import BlobStore
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.tools.errors import ToolCallFailed
from psych_runtime.tools.large_results.render import render_result
from psych_runtime.tools.large_results.render import result_handle


class ResultNotKept(ToolCallFailed):
    """A tool succeeded but its result could not be kept, so the call is recorded failed.

    The message is written for the model as well as for an operator: it says the tool
    ran, why its answer is not available, and what would avoid the problem.

    Attributes:
        kind: the failure kind recorded (``blob_store_required``, ``blob_write_failed``).
        transient: whether trying again later could succeed.
    """


@dataclass(frozen=True, slots=True)
class KeptResult:
    """The result fields of a successful ``tool_call_finished``.

    Attributes:
        result: the value itself, or None when the bytes were offloaded.
        result_bytes: the rendered size, set only when the result was elided.
        result_handle: what the model reads the rest with, when elided.
        preview: the opening the model is shown, when elided.
        result_blob_key: where offloaded bytes live.
        result_content_type: how to decode them.
    """

    result: JsonValue
    result_bytes: int = 0
    result_handle: str | None = None
    preview: str | None = None
    result_blob_key: str | None = None
    result_content_type: str | None = None


async def keep_result(
    value: JsonValue,
    *,
    tenant: str,
    run_id: RunId,
    call_id: ToolCallId,
    large_result_bytes: int,
    offload_bytes: int,
    blob: BlobStore | None,
) -> KeptResult:
    """Measure a result and keep it inline, elided, or in the BlobStore.

    Args:
        value: what the tool returned, as JSON data.
        tenant: the Run's tenant; part of the blob key so tenants never share bytes.
        run_id: the Run.
        call_id: the call; with the Run and tenant it names the blob and the handle.
        large_result_bytes: elide above this many bytes (the Spec's limit).
        offload_bytes: offload above this many bytes (the Runtime's setting).
        blob: where offloaded bytes go; None when the deployment has none.

    Raises:
        ResultNotKept: the result needs offloading but there is no BlobStore, or the
            BlobStore refused the write.
    """
    rendered = render_result(value)
    size = rendered.size
    offload = size > offload_bytes
    if not offload and size <= large_result_bytes:
        return KeptResult(result=value)
    handle = result_handle(call_id)
    if not offload:
        return KeptResult(
            result=value, result_bytes=size, result_handle=handle, preview=rendered.preview
        )
    if blob is None:
        raise ResultNotKept(
            "blob_store_required",
            f"The tool ran, but its result ({size} bytes) is larger than the "
            f"{offload_bytes} bytes a log record may hold and no blob store is configured "
            "to keep it, so the result was discarded. Ask for less at a time (a filter or "
            "a page), or configure the runtime with a blob store.",
        )
    key = BlobKey(tenant, run_id, call_id)
    try:
        await blob.put(key, rendered.data, content_type=rendered.content_type)
    except Exception as error:
        raise ResultNotKept(
            "blob_write_failed",
            f"The tool ran, but its result ({size} bytes) could not be saved to the blob "
            f"store ({type(error).__name__}: {error}), so it is not available.",
            transient=True,
        ) from error
    return KeptResult(
        result=None,
        result_bytes=size,
        result_handle=handle,
        preview=rendered.preview,
        result_blob_key=str(key),
        result_content_type=rendered.content_type,
    )


__all__ = ["KeptResult", "ResultNotKept", "keep_result"]
