"""Finishing a tool call: what it returned, made fit for the log and the model.

A successful result must be storable as it is (no lone surrogate, no non-finite number,
no nesting too deep); one that is not fails its call ``unstorable_result``, since the
tool did run but its answer cannot be recorded.

Large results: a result above the Spec's ``large_result_bytes`` is elided for the model
(handle, size and preview) and one above the Runtime's ``blob_offload_bytes`` is
written to the BlobStore before its ``tool_call_finished``; see ``runtime/offload.py``.
Once the Run has issued a handle, the built-in ``read_tool_output`` is offered to page
through it. A page of ``read_tool_output`` is never elided again.

The finish is only staged: it rides along with the next durable point.
"""

import asyncio
from dataclasses import dataclass

from pydantic import JsonValue

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import ToolCallFinished
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.reducer import READ_TOOL_OUTPUT
from psych_runtime.core.storable import unstorable
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import failure
from psych_runtime.tools.large_results.offload import ResultNotKept
from psych_runtime.tools.large_results.offload import keep_result


@dataclass(frozen=True, slots=True)
class Executed:
    """What running a call amounted to, before it is recorded.

    Attributes:
        outcome: ``ok``, ``error`` or ``aborted``.
        result: what the tool returned (None unless ``ok``).
        failure: why it did not succeed (None when ``ok``).
        duration: seconds the call took.
    """

    outcome: ToolOutcome
    result: JsonValue
    failure: ToolFailure | None
    duration: float


async def finish(ctx: AttemptContext, call_id: ToolCallId, name: str, executed: Executed) -> None:
    """Stage the ``tool_call_finished`` of an executed call."""
    journal = ctx.journal
    if executed.outcome is ToolOutcome.OK:
        executed = await _storable_outcome(executed)
    # A page of read_tool_output is capped by construction; eliding it would only
    # hand the model another handle to read.
    if executed.outcome is not ToolOutcome.OK or name == READ_TOOL_OUTPUT:
        journal.stage(
            ToolCallFinished,
            call_id=call_id,
            outcome=executed.outcome,
            result=executed.result,
            failure=executed.failure,
            duration_seconds=executed.duration,
        )
        return
    try:
        kept = await keep_result(
            executed.result,
            tenant=journal.scope.tenant,
            run_id=journal.run_id,
            call_id=call_id,
            large_result_bytes=ctx.spec.limits.large_result_bytes,
            offload_bytes=ctx.deps.blob_offload_bytes,
            blob=ctx.deps.blob,
        )
    except ResultNotKept as refusal:
        journal.stage(
            ToolCallFinished,
            call_id=call_id,
            outcome=ToolOutcome.ERROR,
            failure=ToolFailure(
                kind=refusal.kind, message=str(refusal), transient=refusal.transient
            ),
            duration_seconds=executed.duration,
        )
        return
    journal.stage(
        ToolCallFinished,
        call_id=call_id,
        outcome=ToolOutcome.OK,
        result=kept.result,
        duration_seconds=executed.duration,
        result_handle=kept.result_handle,
        preview=kept.preview,
        result_bytes=kept.result_bytes,
        result_blob_key=kept.result_blob_key,
        result_content_type=kept.result_content_type,
    )


_INLINE_RESULT_ITEMS = 64
"""A result container with at most this many entries at its top level is checked on
the event loop; a bigger one in a worker thread (its size below that is unknown)."""


async def _storable_outcome(executed: Executed) -> Executed:
    """A successful outcome whose result every store can keep, or a failure saying why.

    The tool did run, so the failure says so: what it returned cannot be recorded
    (a lone surrogate, a non-finite number, nesting too deep) and the model is asked
    for something that avoids it.
    """
    result = executed.result
    if isinstance(result, dict | list) and len(result) > _INLINE_RESULT_ITEMS:
        problem = await asyncio.to_thread(unstorable, result)
    else:
        problem = unstorable(result)
    if problem is None:
        return executed
    where = problem.replace("$", "the result", 1)
    unkept = failure(
        "unstorable_result",
        f"The tool ran, but what it returned cannot be recorded: {where}. "
        "Its result is not available.",
    )
    return Executed(ToolOutcome.ERROR, None, unkept, executed.duration)
