"""``finish.finish``: a call's outcome made fit for the log: storable, elided, offloaded."""

import math
from typing import Any

from pydantic import JsonValue

from psych_runtime.blob.memory import InMemoryBlobStore
from psych_runtime.blob.port import BlobKey
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.reducer import READ_TOOL_OUTPUT
from psych_runtime.core.spec import Limits
from psych_runtime.runtime.agent.finish import Executed
from psych_runtime.runtime.agent.finish import finish

from .conftest import Attempt
from .conftest import agent
from .conftest import open_attempt
from .conftest import started
from .conftest import tool_turn

C1 = ToolCallId("c1")


def _ok(result: JsonValue) -> Executed:
    return Executed(ToolOutcome.OK, result, None, 0.25)


async def _running(tool: str = "lookup", **deps: Any) -> Attempt:
    log = tool_turn(started(), "c1").tool_started("c1", tool=tool)
    return await open_attempt(log, spec=agent(limits=Limits(large_result_bytes=100)), **deps)


async def test_a_small_result_is_kept_as_it_is_and_only_staged() -> None:
    attempt = await _running()
    await finish(attempt.ctx, C1, "lookup", _ok({"status": "shipped"}))
    finished = attempt.finish("c1")
    assert (finished.outcome, finished.result) == (ToolOutcome.OK, {"status": "shipped"})
    assert finished.duration_seconds == 0.25 and finished.result_handle is None
    assert await attempt.durable() == []  # it rides along with the next durable point


async def test_a_failure_is_recorded_as_it_came() -> None:
    attempt = await _running()
    failed = ToolFailure(kind="ValueError", message="no such order", transient=True)
    await finish(attempt.ctx, C1, "lookup", Executed(ToolOutcome.ERROR, None, failed, 1.0))
    assert attempt.finish("c1").failure == failed


async def test_a_result_no_store_can_keep_fails_the_call_saying_the_tool_ran() -> None:
    results: tuple[JsonValue, ...] = (math.nan, {"text": "\ud800"}, [math.inf] * 100)
    for result in results:
        attempt = await _running()
        await finish(attempt.ctx, C1, "lookup", _ok(result))
        finished = attempt.finish("c1")
        assert finished.outcome is ToolOutcome.ERROR and finished.result is None
        assert finished.failure is not None and finished.failure.kind == "unstorable_result"
        assert finished.failure.message.startswith("The tool ran, but")


async def test_a_result_over_the_large_result_limit_is_elided_behind_a_handle() -> None:
    attempt = await _running()
    big = "x" * 500
    await finish(attempt.ctx, C1, "lookup", _ok(big))
    finished = attempt.finish("c1")
    assert finished.outcome is ToolOutcome.OK and finished.result == big
    assert finished.result_handle is not None and finished.result_bytes > 100
    assert finished.preview is not None and finished.preview.startswith("xxx")
    assert finished.result_blob_key is None
    assert attempt.state.result_handles == {finished.result_handle: C1}


async def test_a_page_of_read_tool_output_is_never_elided_again() -> None:
    log = tool_turn(started(), "c0").tool_started("c0")
    log.tool_finished("c0", result="x" * 500, result_handle="h_c0", result_bytes=500)
    tool_turn(log, "c1").tool_started("c1", tool=READ_TOOL_OUTPUT, arguments={"handle": "h_c0"})
    attempt = await open_attempt(log, spec=agent(limits=Limits(large_result_bytes=100)))
    await finish(attempt.ctx, C1, READ_TOOL_OUTPUT, _ok({"lines": ["x" * 500]}))
    finished = attempt.finish("c1")
    assert finished.result == {"lines": ["x" * 500]} and finished.result_handle is None


async def test_a_result_over_the_offload_size_is_written_to_the_blob_store_first() -> None:
    blob = InMemoryBlobStore()
    attempt = await _running(blob=blob, blob_offload_bytes=200)
    await finish(attempt.ctx, C1, "lookup", _ok("y" * 500))
    finished = attempt.finish("c1")
    assert finished.result is None and finished.result_handle is not None
    key = BlobKey("acme", attempt.journal.run_id, C1)
    assert finished.result_blob_key == str(key)
    assert await blob.get(key) == b"y" * 500
    assert finished.result_content_type is not None


async def test_a_result_to_offload_without_a_blob_store_fails_the_call() -> None:
    attempt = await _running(blob_offload_bytes=200)
    await finish(attempt.ctx, C1, "lookup", _ok("y" * 500))
    finished = attempt.finish("c1")
    assert finished.outcome is ToolOutcome.ERROR and finished.result is None
    assert finished.failure is not None
    assert (finished.failure.kind, finished.failure.transient) == ("blob_store_required", False)


class RefusingBlobs(InMemoryBlobStore):
    """A blob store whose every write fails."""

    async def put(self, key: BlobKey, data: bytes, *, content_type: str) -> None:
        raise OSError("disk full")


async def test_a_blob_write_that_fails_fails_the_call_as_worth_retrying() -> None:
    attempt = await _running(blob=RefusingBlobs(), blob_offload_bytes=200)
    await finish(attempt.ctx, C1, "lookup", _ok("y" * 500))
    failure = attempt.failure("c1")
    assert (failure.kind, failure.transient) == ("blob_write_failed", True)
    assert "OSError: disk full" in failure.message


async def test_failures_lengthen_the_tools_streak_and_a_success_ends_it() -> None:
    log = tool_turn(started(), "c1", "c2", "c3")
    for call_id in ("c1", "c2", "c3"):
        log.tool_started(call_id, tool="refund")
    attempt = await open_attempt(log)
    failed = Executed(ToolOutcome.ERROR, None, ToolFailure(kind="tool_error", message="no"), 0.0)
    await finish(attempt.ctx, ToolCallId("c1"), "refund", failed)
    await finish(attempt.ctx, ToolCallId("c2"), "refund", _ok(math.nan))  # unstorable
    assert attempt.state.failure_streaks == {"refund": 2}
    await finish(attempt.ctx, ToolCallId("c3"), "refund", _ok("refunded"))
    assert attempt.state.failure_streaks == {}
