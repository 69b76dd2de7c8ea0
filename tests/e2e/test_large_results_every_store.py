"""A tool result over 5 MB completes on every store: offloaded, paged back exactly."""

import json
from pathlib import Path

import pytest

import psych_runtime
from psych_runtime.testing import FakeModel
from psych_runtime.testing import ToolCallScript

from .conftest import EVERY

ACME = psych_runtime.Scope(tenant="acme")
LINES, WIDTH, PER_PAGE = 5_400, 999, 10  # ~5.4 MB; ten lines fill one 10 000-char page


async def export_ledger() -> str:
    """Produce the whole ledger as text."""
    return "\n".join(f"{i:06d} " + "x" * (WIDTH - 7) for i in range(LINES))


def _read(offset: int) -> ToolCallScript:
    arguments = {"handle": "res_big", "offset": offset, "limit": PER_PAGE}
    return ToolCallScript("read_tool_output", arguments=arguments, call_id=f"page{offset}")


@pytest.mark.parametrize("kind", EVERY)
async def test_a_5mb_result_is_offloaded_and_read_back_exactly(
    kind: str, store_url_for: object, tmp_path: Path
) -> None:
    url = await store_url_for(kind)  # type: ignore[operator]
    store = await psych_runtime.open_store(url)
    blob = psych_runtime.adapters.FileBlobStore(tmp_path / "blobs")
    offsets = list(range(0, LINES, PER_PAGE))
    model = FakeModel().turn(
        tool_calls=[ToolCallScript("export_ledger", arguments={}, call_id="big")]
    )
    for start in range(0, len(offsets), 180):
        model.turn(tool_calls=[_read(o) for o in offsets[start : start + 180]])
    model.turn(text="Read the whole ledger.")
    spec = psych_runtime.AgentSpec(
        name="ledger",
        model=psych_runtime.ModelRef(model="fake-standard"),
        tools=(psych_runtime.CodeTool(name="export_ledger"),),
        limits=psych_runtime.Limits(max_steps=1_000, max_tool_calls_per_turn=180),
    )
    try:
        async with psych_runtime.session(
            model,
            tools=[export_ledger],
            store=store,
            scope=ACME,
            runtime=psych_runtime.RuntimeSettings(blob=blob),
        ) as s:
            reply = await s.ask(spec, "export the ledger", timeout=300)
            log = await psych_runtime.read_log(store, reply.run_id, scope=ACME)
            report = await psych_runtime.report(store, reply.run_id, scope=ACME)
    finally:
        await store.close()
    assert reply.finished, reply
    expected = await export_ledger()
    assert len(expected.encode()) > 5_000_000
    big = next(r for r in log if r.type == "tool_call_finished" and r.call_id == "big")
    assert big.result is None and big.result_blob_key is not None
    assert big.result_handle == "res_big" and big.result_bytes == len(expected.encode())
    # The model saw a handle and a preview, not the payload.
    shown = next(m for m in model.requests[1].messages if m.role == "tool")
    assert "res_big" in shown.content and len(shown.content) < 10_000
    pages = {
        r.call_id: r.result
        for r in log
        if r.type == "tool_call_finished" and r.call_id.startswith("page")
    }
    lines: list[str] = []
    for offset in offsets:
        page = pages[f"page{offset}"]
        assert isinstance(page, dict), page
        lines.extend(page["lines"])  # type: ignore[arg-type]
    assert "\n".join(lines) == expected
    [row] = [c for c in report.tool_calls if c.call_id == "big"]
    assert row.result_blob_key == big.result_blob_key
    assert row.result_content_type == "text/plain; charset=utf-8"
    assert max(len(json.dumps(r.model_dump(mode="json"))) for r in log) < 100_000
