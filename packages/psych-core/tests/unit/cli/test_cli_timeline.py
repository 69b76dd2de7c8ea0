"""The timeline ``psych show`` prints, one record at a time, built from hand-made logs."""

from psych_runtime.cli._common import Painter
from psych_runtime.cli._common import format_seconds
from psych_runtime.cli._common import short_hash
from psych_runtime.cli.doctor import mask_url
from psych_runtime.cli.show import Timeline
from psych_runtime.records import SuspendReason
from psych_runtime.records import TerminalState
from psych_runtime.records import ToolFailure
from psych_runtime.records import ToolOutcome
from psych_runtime.records import Usage
from psych_runtime.testing import LogBuilder


def render(builder: LogBuilder, paint: Painter | None = None) -> list[str]:
    timeline = Timeline(paint)
    return [line for record in builder.build() for line in timeline.lines(record)]


def test_approvals_questions_and_aborts_are_shown_with_their_outcome():
    log = (
        LogBuilder()
        .first_model_call()
        .model_finished(usage=Usage(input=30, output=4), finish_reason="tool_calls")
        .tool_started("call-1", tool="refund", arguments={"order": "A-1"})
        .suspended(SuspendReason.APPROVAL, pending_call_id="call-1")
        .advance(90)
        .resumed(approved=False, resumed_by="alice@example.com")
        .tool_finished(
            "call-1", ToolOutcome.ERROR, failure=ToolFailure(kind="denied", message="no")
        )
        .suspended(SuspendReason.QUESTION, question="Which order do you mean?")
        .resumed(resumed_by="bob")
        .abort(reason="user left", requested_by="ops")
        .settled(TerminalState.ABORTED)
    )

    lines = render(log)

    text = "\n".join(lines)
    assert len(lines) == 12  # model_call_started adds no line of its own
    assert "model gpt-4o, tokens 30 in / 4 out, cost -, 0.00s, finish tool_calls" in text
    assert "suspended, waiting on approval for tool refund; expires " in text
    assert "resumed denied by alice@example.com" in text
    assert "tool refund -> error in 0.00s: denied: no" in text
    assert "suspended, waiting on question: Which order do you mean?" in text
    assert "resumed by bob" in text
    assert "abort requested by ops: user left" in text
    assert lines[-1].endswith("settled aborted")
    assert lines[0].lstrip().startswith("+0.00s  admitted")
    assert any(line.lstrip().startswith("+1m3") for line in lines)  # after advance(90)


def test_workflow_steps_nest_their_turns_and_children_are_listed():
    log = (
        LogBuilder()
        .admitted()
        .attempt()
        .step_started("s1", name="research", kind="agent")
        .turn()
        .spawned("run_child", name="researcher")
        .child_finished("run_child", name="researcher", usage=Usage(input=7, output=3), runs=2)
        .step_completed("s1", output={"notes": "done"}, child_run_id="run_child")
        .step_started("s2", name="publish", kind="tool", attempt_number=2)
        .step_completed("s2", failure=ToolFailure(kind="timeout", message="slow"), will_retry=True)
        .step_started("s3", name="notify", kind="tool")
        .step_completed("s3", skipped=True)
        .settled(TerminalState.FAILED, failure=ToolFailure(kind="step_failed", message="x"))
    )

    lines = [line[11:] for line in render(log)]  # past the 9-wide offset column

    assert lines == [
        "admitted  input {}",
        "attempt 1 on worker wrk_1",
        "step research [agent] started",
        "  turn 1",
        "    subagent researcher spawned (background) as Run run_child",
        "    subagent researcher completed: 2 Run(s), tokens 7 in / 3 out, cost -",
        'step research completed via child Run run_child: {"notes": "done"}',
        "step publish [tool] (attempt 2) started",
        "step publish failed (will retry): timeout: slow",
        "step notify [tool] started",
        "step notify skipped",
        "settled failed: step_failed: x",
    ]


def test_colour_only_when_asked():
    log = LogBuilder().admitted().attempt().settled(TerminalState.FAILED)

    plain = render(log)
    coloured = render(log, Painter(True))

    assert not any("\x1b[" in line for line in plain)
    assert "\x1b[31mfailed\x1b[0m" in coloured[-1]


def test_small_formatters():
    assert format_seconds(0.5) == "0.50s"
    assert format_seconds(185) == "3m05s"
    assert format_seconds(7800) == "2h10m"
    assert format_seconds(3 * 86400) == "3d"
    assert short_hash("sha256:" + "ab" * 32) == "abababababab"
    assert mask_url("postgresql://me:secret@db:5432/x?schema=a") == (
        "postgresql://me:********@db:5432/x?schema=a"
    )
    assert mask_url("sqlite:////tmp/runs.db") == "sqlite:////tmp/runs.db"


def test_model_calls_say_when_the_provider_reported_no_usage_and_what_failed():
    log = (
        LogBuilder()
        .first_model_call()
        .model_failed(will_retry=True)
        .model_started()
        .model_finished(usage=Usage(), usage_reported=False, text="Hello\n  there")
    )

    lines = render(log)

    assert lines[-2].endswith("model gpt-4o failed (will retry): http_500: the provider failed")
    assert lines[-1].endswith(
        "model gpt-4o, tokens 0 in / 0 out (not reported), cost -, 0.00s, finish stop: Hello there"
    )
