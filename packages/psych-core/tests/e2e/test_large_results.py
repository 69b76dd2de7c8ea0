"""Large tool results end to end: elision for the model, offload to a BlobStore, paging back.

Every Run here goes through a real Worker and Runtime with the FakeModel and the
in-memory Store; the tests look at the log, at what the model was sent, and at the
BlobStore, never at the loop's internals.
"""

import json
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import JsonValue

import psych_runtime
from psych_runtime import AgentSpec
from psych_runtime import InMemoryStore
from psych_runtime import RunId
from psych_runtime import Runtime
from psych_runtime import TerminalState
from psych_runtime import ToolOutcome
from psych_runtime.adapters import BlobKey
from psych_runtime.adapters import BlobStore
from psych_runtime.adapters import InMemoryBlobStore
from psych_runtime.blob.filesystem import FileBlobStore
from psych_runtime.blob.filesystem import encode_segment
from psych_runtime.models import ModelRequest
from psych_runtime.records import Record
from psych_runtime.records import ToolCallId
from psych_runtime.testing import FakeModel

from .conftest import ACME
from .conftest import Settled
from .conftest import code_spec
from .conftest import crash_once
from .conftest import finish_of
from .conftest import registry_of
from .conftest import run_once
from .conftest import tool_call

READ = "read_tool_output"
TEXT_TYPE = "text/plain; charset=utf-8"
JSON_TYPE = "application/json"


# --- tools ---------------------------------------------------------------------------


async def make_text(size: int, char: str = "a") -> str:
    """Return ``size`` copies of ``char``."""
    return char * size


async def numbered_lines(count: int, width: int = 30) -> str:
    """Return ``count`` numbered lines, every tenth one flagged as an error."""
    return "\n".join(_line(i, width) for i in range(count))


async def inventory(count: int) -> list[dict[str, JsonValue]]:
    """Return ``count`` inventory rows."""
    return [{"sku": f"SKU-{i:05d}", "qty": i % 7, "zone": "north"} for i in range(count)]


async def small() -> str:
    """Return a short answer."""
    return "ok"


def _line(index: int, width: int) -> str:
    tag = "ERROR" if index % 10 == 3 else "info"
    head = f"{index:07d} {tag} "
    return head + "z" * max(0, width - len(head))


# --- harness -------------------------------------------------------------------------


def _spec(*tools: str, **limits: int) -> AgentSpec:
    return code_spec(
        *tools, name="big-results", instructions="Work with large tool results.", **limits
    )


async def _run(
    spec: AgentSpec,
    model: FakeModel,
    *tools: Callable[..., Any],
    store: InMemoryStore | None = None,
    timeout: float = 30.0,
    **runtime: Any,
) -> Settled:
    return await run_once(
        spec, model, *tools, store=store, timeout=timeout, runtime_options=runtime
    )


def _started(log: list[Record], call_id: str) -> Any:
    return next(r for r in log if r.type == "tool_call_started" and r.call_id == call_id)


def _tool_message(request: ModelRequest, call_id: str) -> str:
    [message] = [m for m in request.messages if m.role == "tool" and m.tool_call_id == call_id]
    return message.content


def _page(log: list[Record], call_id: str) -> dict[str, Any]:
    finished = finish_of(log, call_id)
    assert finished.outcome is ToolOutcome.OK, finished.failure
    assert isinstance(finished.result, dict)
    return finished.result


def _offered(request: ModelRequest) -> set[str]:
    return {tool.name for tool in request.tools}


def _completed(log: list[Record]) -> None:
    settled = log[-1]
    assert settled.type == "run_settled"
    assert settled.state is TerminalState.COMPLETED, settled.failure


# --- elision -------------------------------------------------------------------------


async def test_a_result_just_over_the_limit_is_elided_for_the_model_but_kept_whole() -> None:
    # 1500 two-byte characters: 3000 bytes, one over the limit, although only 1500 chars.
    model = (
        FakeModel()
        .turn(tool_calls=[tool_call("make_text", "big", size=1500, char="é")])
        .turn(text="done")
    )
    _, _, log = await _run(_spec("make_text", large_result_bytes=2999), model, make_text)
    _completed(log)
    finished = finish_of(log, "big")
    assert finished.result == "é" * 1500
    assert finished.result_handle == "res_big"
    assert finished.result_bytes == 3000
    assert finished.preview == "é" * 1500
    assert finished.result_blob_key is None
    seen = _tool_message(model.requests[1], "big")
    assert "res_big" in seen and "3000 bytes" in seen and READ in seen
    assert seen != "é" * 1500


async def test_the_model_sees_only_a_preview_of_an_elided_result() -> None:
    model = FakeModel().turn(tool_calls=[tool_call("numbered_lines", "big", count=1000, width=49)])
    model.turn(text="done")
    _, _, log = await _run(_spec("numbered_lines"), model, numbered_lines)
    expected = await numbered_lines(1000, 49)
    assert len(expected.encode()) > 32_768
    finished = finish_of(log, "big")
    assert finished.result == expected
    assert finished.preview == expected[:2000]
    seen = _tool_message(model.requests[1], "big")
    assert expected[:2000] in seen
    assert expected[2000:2100] not in seen
    assert len(seen) < 2500


async def test_a_result_exactly_at_the_limit_is_kept_whole() -> None:
    rows = await inventory(30)
    size = len(json.dumps(rows, separators=(",", ":")).encode())
    model = FakeModel().turn(tool_calls=[tool_call("inventory", "rows", count=30)]).turn(text="ok")
    _, _, log = await _run(_spec("inventory", large_result_bytes=size), model, inventory)
    finished = finish_of(log, "rows")
    assert finished.result == rows
    assert finished.result_handle is None and finished.preview is None
    assert json.loads(_tool_message(model.requests[1], "rows")) == rows
    assert READ not in _offered(model.requests[1])


async def test_the_reader_is_offered_only_once_a_handle_exists() -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[tool_call("small", "first")])
        .turn(tool_calls=[tool_call("make_text", "big", size=5000)])
        .turn(tool_calls=[tool_call(READ, "read", handle="res_big", limit=1)])
        .turn(text="done")
    )
    _, _, log = await _run(
        _spec("small", "make_text", large_result_bytes=1000), model, small, make_text
    )
    _completed(log)
    offered = [_offered(request) for request in model.requests]
    assert [READ in names for names in offered] == [False, False, True, True]
    recorded = [r.tool_names for r in log if r.type == "model_call_started"]
    assert [READ in names for names in recorded] == [False, False, True, True]
    [definition] = [t for t in model.requests[2].tools if t.name == READ]
    assert "read-only" in definition.annotations
    assert definition.input_schema["required"] == ["handle"]
    # The read is an ordinary logged call: a start record and an ok finish.
    assert _started(log, "read").arguments == {"handle": "res_big", "limit": 1}
    assert _page(log, "read")["lines"] == ["a" * 2000]


async def test_calling_the_reader_before_any_handle_is_an_unknown_tool_not_a_corrupt_log() -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[tool_call(READ, "early", handle="res_nothing")])
        .turn(text="done")
    )
    _, _, log = await _run(_spec("small"), model, small)
    _completed(log)
    finished = finish_of(log, "early")
    assert finished.outcome is ToolOutcome.ERROR
    assert finished.failure.kind == "unknown_tool"
    assert "handle" not in _started(log, "early").arguments


# --- reading back --------------------------------------------------------------------


async def test_paging_by_windows_returns_the_exact_lines() -> None:
    count = 1000  # lines of 30 characters, so 300 of them fit in one 10 000-character page
    windows = [(0, 300), (300, 300), (600, 300), (900, 300)]
    model = FakeModel().turn(tool_calls=[tool_call("numbered_lines", "big", count=count)])
    model.turn(
        tool_calls=[
            tool_call(READ, f"page{i}", handle="res_big", offset=offset, limit=limit)
            for i, (offset, limit) in enumerate(windows)
        ]
    )
    model.turn(tool_calls=[tool_call(READ, "past", handle="res_big", offset=5000)])
    model.turn(text="done")
    # A page is far above this limit; it must still come back whole, not as a new handle.
    _, _, log = await _run(_spec("numbered_lines", large_result_bytes=1000), model, numbered_lines)
    _completed(log)
    expected = (await numbered_lines(count)).split("\n")
    pieces: list[str] = []
    for i, (offset, limit) in enumerate(windows):
        page = _page(log, f"page{i}")
        assert page["total_lines"] == count
        assert page["offset"] == offset
        assert page["lines"] == expected[offset : offset + limit]
        assert page["next_offset"] == (offset + limit if offset + limit < count else None)
        assert page["truncated"] is False
        assert finish_of(log, f"page{i}").result_handle is None
        pieces.extend(page["lines"])
    assert "\n".join(pieces) == await numbered_lines(count)
    past = _page(log, "past")
    assert past["lines"] == [] and past["next_offset"] is None
    # The model received the page itself as the tool result.
    assert json.loads(_tool_message(model.requests[2], "page1"))["lines"] == expected[300:600]


async def test_a_pattern_returns_only_matching_lines_with_their_numbers() -> None:
    model = FakeModel().turn(tool_calls=[tool_call("numbered_lines", "big", count=200)])
    model.turn(
        tool_calls=[
            tool_call(READ, "errors", handle="res_big", pattern=r"\bERROR\b", limit=5),
            tool_call(READ, "rest", handle="res_big", pattern=r"\bERROR\b", offset=54),
        ]
    )
    model.turn(text="done")
    _, _, log = await _run(_spec("numbered_lines", large_result_bytes=100), model, numbered_lines)
    lines = (await numbered_lines(200)).split("\n")
    first = _page(log, "errors")
    assert first["line_numbers"] == [3, 13, 23, 33, 43]
    assert first["lines"] == [lines[n] for n in (3, 13, 23, 33, 43)]
    assert first["next_offset"] == 44
    rest = _page(log, "rest")
    assert rest["line_numbers"] == list(range(63, 200, 10))
    assert all("ERROR" in line for line in rest["lines"])
    assert rest["next_offset"] is None


async def test_structured_results_are_read_as_indented_sorted_json() -> None:
    model = FakeModel().turn(tool_calls=[tool_call("inventory", "rows", count=300)])
    model.turn(tool_calls=[tool_call(READ, "all", handle="res_rows", limit=1000)])
    model.turn(text="done")
    _, _, log = await _run(_spec("inventory", large_result_bytes=1000), model, inventory)
    page = _page(log, "all")
    assert page["lines"][:3] == ["[", "  {", '    "qty": 0,']
    assert page["next_offset"] is not None  # 1000 lines is more than one page allows
    assert page["truncated"] is True


async def test_bad_reader_arguments_are_reported_to_the_model() -> None:
    model = FakeModel().turn(tool_calls=[tool_call("make_text", "big", size=3000)])
    model.turn(
        tool_calls=[
            tool_call(READ, "regex", handle="res_big", pattern="(unclosed"),
            tool_call(READ, "offset", handle="res_big", offset=-1),
            tool_call(READ, "huge", handle="res_big", limit=50_000),
        ]
    )
    model.turn(text="done")
    _, _, log = await _run(_spec("make_text", large_result_bytes=1000), model, make_text)
    _completed(log)
    assert finish_of(log, "regex").failure.kind == "invalid_arguments"
    assert "pattern" in finish_of(log, "regex").failure.message
    assert finish_of(log, "offset").failure.kind == "invalid_arguments"
    # Too large a limit is lowered, not refused.
    assert _page(log, "huge")["lines"] == ["a" * 2000]


async def test_a_handle_from_another_run_is_refused_without_corrupting_the_log() -> None:
    store = InMemoryStore()
    first = FakeModel().turn(tool_calls=[tool_call("make_text", "secret", size=5000, char="s")])
    first.turn(text="done")
    _, first_run, _ = await _run(
        _spec("make_text", large_result_bytes=1000), first, make_text, store=store
    )
    second = FakeModel().turn(tool_calls=[tool_call("make_text", "mine", size=5000, char="m")])
    second.turn(tool_calls=[tool_call(READ, "steal", handle="res_secret", limit=5)])
    second.turn(text="done")
    _, second_run, log = await _run(
        _spec("make_text", large_result_bytes=1000), second, make_text, store=store
    )
    assert first_run != second_run
    _completed(log)
    finished = finish_of(log, "steal")
    assert finished.outcome is ToolOutcome.ERROR
    assert finished.failure.kind == "unknown_handle"
    assert finished.result is None
    # The start record keeps what the model asked for, under a name the reducer allows.
    assert _started(log, "steal").arguments == {"unissued_handle": "res_secret", "limit": 5}
    seen = _tool_message(second.requests[2], "steal")
    assert "res_secret" in seen and "sss" not in seen
    # The log still folds, and reads of it work.
    status = await psych_runtime.status(store, second_run, scope=ACME)
    assert status.terminal_state is TerminalState.COMPLETED


# --- offload -------------------------------------------------------------------------


def _pages_for(total_lines: int, per_page: int) -> list[int]:
    return list(range(0, total_lines, per_page))


def _reassembly_script(
    model: FakeModel, handle: str, offsets: Sequence[int], per_page: int, per_turn: int
) -> None:
    for start in range(0, len(offsets), per_turn):
        chunk = offsets[start : start + per_turn]
        model.turn(
            tool_calls=[
                tool_call(READ, f"p{offset}", handle=handle, offset=offset, limit=per_page)
                for offset in chunk
            ]
        )
    model.turn(text="read it all")


async def _offload_and_reassemble(blob: BlobStore) -> tuple[InMemoryStore, RunId, list[Record]]:
    # 5600 lines of 999 characters: a little over 5.5 MB of text. Ten lines fill 9990 of
    # a page's 10 000 characters, so every page is whole and the next starts exactly
    # ten lines on.
    count, width, per_page = 5_600, 999, 10
    model = FakeModel().turn(
        tool_calls=[tool_call("numbered_lines", "huge", count=count, width=width)]
    )
    offsets = _pages_for(count, per_page)
    _reassembly_script(model, "res_huge", offsets, per_page, per_turn=200)
    store, run_id, log = await _run(
        _spec("numbered_lines", max_steps=2_000, max_tool_calls_per_turn=200),
        model,
        numbered_lines,
        blob=blob,
        timeout=120.0,
    )
    _completed(log)
    expected = await numbered_lines(count, width)
    assert len(expected.encode()) > 5_000_000
    finished = finish_of(log, "huge")
    key = BlobKey("acme", run_id, ToolCallId("huge"))
    assert finished.outcome is ToolOutcome.OK
    assert finished.result is None
    assert finished.result_blob_key == str(key)
    assert finished.result_content_type == TEXT_TYPE
    assert finished.result_handle == "res_huge"
    assert finished.result_bytes == len(expected.encode())
    assert finished.preview == expected[:2000]
    assert await blob.get(key) == expected.encode()
    # The log itself stayed small: no record carries the payload.
    assert max(len(r.model_dump_json()) for r in log) < 60_000
    pieces: list[str] = []
    for offset in offsets:
        page = _page(log, f"p{offset}")
        assert page["offset"] == offset and page["truncated"] is False
        nxt = offset + per_page
        assert page["next_offset"] == (nxt if nxt < count else None)
        pieces.extend(page["lines"])
    assert "\n".join(pieces).encode() == expected.encode()
    return store, run_id, log


async def test_a_huge_result_is_offloaded_to_an_in_memory_blob_store_and_read_back_exactly() -> (
    None
):
    blob = InMemoryBlobStore()
    store, run_id, _ = await _offload_and_reassemble(blob)
    report = await psych_runtime.report(store, run_id, scope=ACME)
    [huge] = [call for call in report.tool_calls if call.call_id == "huge"]
    assert huge.result_blob_key == str(BlobKey("acme", run_id, ToolCallId("huge")))
    assert huge.result_content_type == TEXT_TYPE
    assert huge.result_handle == "res_huge"
    assert huge.result_bytes > 5_000_000


async def test_a_huge_result_is_offloaded_to_a_file_blob_store_and_read_back_exactly(
    tmp_path: Path,
) -> None:
    blob = FileBlobStore(tmp_path / "blobs")
    _, run_id, _ = await _offload_and_reassemble(blob)
    stored = tmp_path / "blobs" / "acme" / encode_segment(run_id) / "huge.blob"
    assert stored.stat().st_size > 5_000_000


async def test_an_offloaded_structured_result_reads_back_as_the_same_data() -> None:
    blob = InMemoryBlobStore()
    model = FakeModel().turn(tool_calls=[tool_call("inventory", "rows", count=400)])
    # 2002 lines of at most 28 characters: 300 of them always fit in one page.
    offsets = _pages_for(400 * 5 + 2, 300)
    _reassembly_script(model, "res_rows", offsets, 300, per_turn=10)
    _, run_id, log = await _run(
        _spec("inventory"), model, inventory, blob=blob, blob_offload_bytes=5_000
    )
    _completed(log)
    finished = finish_of(log, "rows")
    assert finished.result is None
    assert finished.result_content_type == JSON_TYPE
    key = BlobKey("acme", run_id, ToolCallId("rows"))
    assert json.loads(await blob.get(key)) == await inventory(400)
    # Elision is forced even though 32 KiB would have let the model see it whole.
    assert finished.result_bytes < 32_768
    assert "res_rows" in _tool_message(model.requests[1], "rows")
    lines: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = _page(log, f"p{offset}")
        lines.extend(page["lines"])
        offset = page["next_offset"]
    assert json.loads("\n".join(lines)) == await inventory(400)


async def test_the_blob_is_written_before_the_record_that_points_at_it() -> None:
    store = InMemoryStore()
    seen_at_put: list[list[str]] = []

    class Watching(InMemoryBlobStore):
        async def put(self, key: BlobKey, data: bytes, *, content_type: str) -> None:
            log = await store.read(key.run_id)
            seen_at_put.append([r.type for r in log if getattr(r, "call_id", None) == key.call_id])
            await super().put(key, data, content_type=content_type)

    model = FakeModel().turn(tool_calls=[tool_call("make_text", "big", size=2_000)]).turn(text="ok")
    _, _, log = await _run(
        _spec("make_text"), model, make_text, store=store, blob=Watching(), blob_offload_bytes=1_000
    )
    _completed(log)
    assert seen_at_put == [["tool_call_started"]]
    assert finish_of(log, "big").result_blob_key is not None


async def test_without_a_blob_store_an_oversized_result_fails_the_call_blob_store_required() -> (
    None
):
    model = FakeModel().turn(tool_calls=[tool_call("make_text", "big", size=400_000)])
    model.turn(text="it was too big")
    _, _, log = await _run(_spec("make_text"), model, make_text)
    _completed(log)
    finished = finish_of(log, "big")
    assert finished.outcome is ToolOutcome.ERROR
    assert finished.failure.kind == "blob_store_required"
    assert "400000 bytes" in finished.failure.message
    assert finished.result is None and finished.result_blob_key is None
    assert len(finished.model_dump_json()) < 5_000
    assert "blob store" in _tool_message(model.requests[1], "big")
    assert READ not in _offered(model.requests[1])


async def test_a_result_at_the_offload_limit_stays_in_the_record() -> None:
    blob = InMemoryBlobStore()
    model = (
        FakeModel().turn(tool_calls=[tool_call("make_text", "edge", size=5_000)]).turn(text="ok")
    )
    _, _, log = await _run(
        _spec("make_text"), model, make_text, blob=blob, blob_offload_bytes=5_000
    )
    finished = finish_of(log, "edge")
    assert finished.result == "a" * 5_000 and finished.result_blob_key is None
    assert len(blob) == 0


async def test_session_wires_the_blob_store_through() -> None:
    blob = InMemoryBlobStore()
    spec = _spec("make_text")
    model = FakeModel().turn(tool_calls=[tool_call("make_text", "big", size=3_000)]).turn(text="ok")
    async with psych_runtime.session(
        model,
        tools=[make_text],
        scope=ACME,
        runtime=psych_runtime.RuntimeSettings(blob=blob, blob_offload_bytes=1_000),
    ) as s:
        reply = await s.ask(spec, "go", timeout=10)
        report = await psych_runtime.report(s.store, reply.run_id, scope=s.scope)
    assert reply.finished
    [call] = report.tool_calls
    assert call.result_blob_key == str(BlobKey("acme", reply.run_id, ToolCallId("big")))
    assert await blob.get(BlobKey("acme", reply.run_id, ToolCallId("big"))) == b"a" * 3_000


def test_runtime_refuses_a_nonsensical_offload_limit() -> None:
    with pytest.raises(ValueError, match="blob_offload_bytes"):
        Runtime(InMemoryStore(), FakeModel(), registry_of(small), blob_offload_bytes=0)


async def test_a_read_interrupted_by_a_crash_is_simply_read_again() -> None:
    # Reading changes nothing, so a reclaiming Worker re-runs it instead of closing it
    # as "unknown" and leaving the model unsure what it saw.
    store = InMemoryStore()
    model = FakeModel().turn(tool_calls=[tool_call("numbered_lines", "big", count=500)])
    model.turn(tool_calls=[tool_call(READ, "read", handle="res_big", offset=7, limit=2)])
    model.turn(text="done")
    recovery = await crash_once(
        _spec("numbered_lines", large_result_bytes=1000),
        model,
        numbered_lines,
        store=store,
        crash_before="tool_call_finished",
        occurrence=2,
    )
    assert _started(recovery.crashed_log, "read").safe_to_retry
    assert not any(
        r.type == "tool_call_finished" and r.call_id == "read" for r in recovery.crashed_log
    )
    _completed(recovery.final_log)
    lines = (await numbered_lines(500)).split("\n")
    assert _page(recovery.final_log, "read")["lines"] == lines[7:9]
