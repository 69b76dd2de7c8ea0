"""A Worker process SIGKILLed mid-tool-call, and the Run reclaimed by a second process.

Each process runs ``otel_worker.py``, which exports every finished span through the
OpenTelemetry SDK to a JSON-lines file of its own. The first one's ``lookup`` hangs
once started; the test kills that process the moment the call is under way (the tool
creates a marker file first), so every span it had open (its Run, Attempt, turn and
the call) is lost with it. The second process reclaims the Run when the one-second
lease runs out, closes the call ``unknown`` as ``orphaned``, and finishes the Run.

Read together, the two files must tell the log's story in one trace: the abandoned
Attempt and the call it left in doubt, opened again by the second process from the
log with the log's times and ended ERROR, beside the reclaiming Attempt.
"""

import asyncio
import signal
import subprocess
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from psych_runtime import dispatch
from psych_runtime.adapters import check_spans
from psych_runtime.records import AttemptStarted
from psych_runtime.records import Record
from psych_runtime.records import ToolCallFinished
from psych_runtime.records import ToolCallStarted
from tests.support.processes import wait_for

from ..conftest import ACME
from ..conftest import as_finished
from ..conftest import clerk_on_sqlite
from ..conftest import read_exported
from ..conftest import work_in_another_process
from ..conftest import worker_command

pytestmark = pytest.mark.slow

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _started(span: dict[str, Any]) -> datetime:
    return _EPOCH + timedelta(microseconds=span["start_time"] // 1000)


def _one(spans: list[dict[str, Any]], **wanted: Any) -> dict[str, Any]:
    found = [
        s
        for s in spans
        if all(
            s.get(key) == value or s["attributes"].get(key) == value
            for key, value in wanted.items()
        )
    ]
    assert len(found) == 1, (wanted, [(s["name"], s["attributes"]) for s in spans])
    return found[0]


async def test_a_killed_attempt_and_its_reclaim_tell_the_logs_story_in_one_trace(
    tmp_path: Path,
) -> None:
    async with clerk_on_sqlite(tmp_path) as (url, store, version):
        run = await dispatch(store, version, "Where is A1?", scope=ACME)  # no span active
        marker = tmp_path / "lookup-started"
        first_file, second_file = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
        first = await asyncio.to_thread(
            subprocess.Popen,
            worker_command(url, first_file, run.run_id, str(marker)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:

            async def calling() -> bool:
                return marker.exists() or first.poll() is not None

            await wait_for(calling, timeout=30)
            assert first.poll() is None, "the first worker ended before its call hung"
        finally:
            if first.poll() is None:
                first.send_signal(signal.SIGKILL)
            await asyncio.to_thread(first.wait)
        assert first.returncode == -signal.SIGKILL
        await work_in_another_process(url, second_file, run.run_id)
        log: list[Record] = await store.read(run.run_id)

    assert log[-1].state == "completed"  # type: ignore[union-attr]
    attempts = [r for r in log if isinstance(r, AttemptStarted)]
    [started] = [r for r in log if isinstance(r, ToolCallStarted)]
    [closed] = [r for r in log if isinstance(r, ToolCallFinished)]
    assert [a.attempt_number for a in attempts] == [1, 2]
    assert (closed.outcome, closed.failure.kind) == ("unknown", "orphaned")  # type: ignore[union-attr]

    dead = read_exported(first_file)
    alive = read_exported(second_file)
    # The killed process only got to export what had ended: its first model call.
    assert [s["name"] for s in dead] == ["chat m"]

    # One trace for everything, minted at admission and kept in the log.
    _, trace_id, root_id, _ = log[0].trace_context["traceparent"].split("-")  # type: ignore[attr-defined]
    assert {s["trace_id"] for s in dead + alive} == {trace_id}
    runs = [s for s in alive if s["name"] == "psych.run"]
    assert [s["parent_id"] for s in runs] == [root_id, root_id]

    # The abandoned Attempt, told by the second process from the log.
    recovered = [s for s in alive if s["attributes"].get("psych.recovered") is True]
    assert sorted(s["name"] for s in recovered) == [
        "execute_tool lookup",
        "psych.attempt",
        "psych.run",
        "psych.turn",
    ]
    abandoned = _one(recovered, name="psych.attempt")
    assert abandoned["attributes"]["psych.attempt.number"] == 1
    assert abandoned["attributes"]["psych.worker.id"] == attempts[0].worker_id
    assert abandoned["error"] is True
    assert _started(abandoned) == attempts[0].at
    call = _one(recovered, name="execute_tool lookup")
    assert call["attributes"]["gen_ai.tool.call.id"] == started.call_id
    assert call["attributes"]["psych.tool.outcome"] == "unknown"
    assert call["attributes"]["error.type"] == "orphaned"
    assert call["error"] is True
    assert _started(call) == started.at
    turn = _one(recovered, name="psych.turn")
    assert call["parent_id"] == turn["span_id"]
    assert turn["parent_id"] == abandoned["span_id"]
    assert abandoned["parent_id"] == _one(recovered, name="psych.run")["span_id"]

    # The reclaiming Attempt, and the rest of the Run, as usual.
    reclaiming = _one(alive, name="psych.attempt", **{"psych.attempt.number": 2})
    assert reclaiming["attributes"]["psych.attempt.reclaimed_expired_lease"] is True
    assert reclaiming["error"] is False
    assert {
        s["attributes"]["gen_ai.provider.name"] for s in dead + alive if s["kind"] == "client"
    } == {"openai"}

    # Everything the second process exported conforms; of the first one's, only the
    # model call misses its parent, the turn that died with the process.
    assert check_spans(as_finished(alive)) == []
    problems = check_spans(as_finished(dead + alive))
    assert [(p.span, p.problem) for p in problems] == [("chat m", "its parent span is missing")]
