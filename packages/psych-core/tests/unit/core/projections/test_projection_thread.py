from psych_runtime.core.projections.thread import MessageView
from psych_runtime.core.projections.thread import ThreadView
from psych_runtime.core.projections.thread import combine_thread
from psych_runtime.core.projections.thread import project_thread
from psych_runtime.core.projections.thread import thread_messages
from psych_runtime.core.projections.tool_text import ABORTED_TEXT
from psych_runtime.core.projections.tool_text import UNKNOWN_OUTCOME_TEXT
from psych_runtime.core.projections.tool_text import tool_result_text
from psych_runtime.core.records import QueueKind
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolCallFinished
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.testing.log_builder import LogBuilder

from ....support.logs import FIRST_SUMMARY
from ....support.logs import SECOND_SUMMARY
from ....support.logs import cut_short_turn
from ....support.logs import twice_compacted


def roles_and_content(messages: tuple[MessageView, ...]) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in messages]


def test_conversation_in_log_order() -> None:
    log = (
        LogBuilder()
        .admitted(input={"message": "Refund order A1"})
        .attempt()
        .enqueued("e1", payload={"message": "it was damaged"})
        .turn()
        .consumed("e1")
        .model_started()
        .model_finished(text="Checking.", tool_calls=("c1",), finish_reason="tool_calls")
        .tool_started("c1", tool="lookup_order")
        .tool_finished("c1", result={"id": "A1", "total": 20})
        .turn()
        .model_started()
        .model_finished(text="Refunded.")
        .settled()
    )
    messages = thread_messages(log.build())
    assert roles_and_content(messages) == [
        ("user", "Refund order A1"),
        ("user", "it was damaged"),
        ("assistant", "Checking."),
        ("tool", '{"id":"A1","total":20}'),
        ("assistant", "Refunded."),
    ]
    assert [m.seq for m in messages] == sorted(m.seq for m in messages)
    assistant = messages[2]
    assert assistant.tool_call_ids == ("c1",)
    tool = messages[3]
    assert (tool.tool_name, tool.tool_call_id, tool.is_error) == ("lookup_order", "c1", False)
    assert all(m.run_id == "run_test" for m in messages)


def test_queued_message_appears_where_it_was_consumed_not_enqueued() -> None:
    log = (
        LogBuilder()
        .admitted(input={"message": "hi"})
        .attempt()
        .enqueued("e1", queue=QueueKind.FOLLOW_UP, payload={"message": "and then?"})
        .turn()
        .model_started()
        .model_finished(text="hello")
        .consumed("e1")
    )
    records = log.build()
    messages = thread_messages(records)
    assert roles_and_content(messages) == [
        ("user", "hi"),
        ("assistant", "hello"),
        ("user", "and then?"),
    ]
    assert messages[-1].seq == records[-1].seq


def test_unconsumed_and_cancelled_entries_are_not_messages() -> None:
    log = (
        LogBuilder()
        .admitted()
        .enqueued("e1", payload={"message": "never delivered"})
        .enqueued("e2", payload={"message": "withdrawn"})
        .cancelled("e2")
    )
    assert thread_messages(log.build()) == ()


def test_model_call_without_text_or_tools_is_not_a_message() -> None:
    log = LogBuilder().admitted().attempt().turn().model_started().model_finished(text="")
    assert thread_messages(log.build()) == ()


def test_tool_results_as_the_model_saw_them() -> None:
    traceback = "Traceback (most recent call last): ..."
    log = (
        LogBuilder()
        .first_model_call()
        .model_finished(tool_calls=("big", "bad", "code"), finish_reason="tool_calls")
        .tool_started("big", tool="search")
        .tool_finished(
            "big",
            result={"rows": ["x"] * 5000},
            result_handle="res_big",
            preview='{"rows":["x","x"',
            result_bytes=40_006,
        )
        .tool_started("bad", tool="refund")
        .tool_finished(
            "bad",
            outcome=ToolOutcome.ERROR,
            failure=ToolFailure(
                kind="ValueError", message="amount must be positive", traceback="host internals"
            ),
        )
        .tool_started("code", tool="run_code")
        .tool_finished(
            "code",
            outcome=ToolOutcome.ERROR,
            failure=ToolFailure(
                kind="ZeroDivisionError",
                message="division by zero",
                traceback=traceback,
                traceback_is_for_the_model=True,
            ),
        )
    )
    _assistant, big, bad, code = thread_messages(log.build())
    # an elided result shows its size, handle and preview, never the full rows
    assert "40006 bytes" in big.content
    assert "res_big" in big.content
    assert big.content.endswith('{"rows":["x","x"')
    assert '"x","x","x","x"' not in big.content
    assert not big.is_error
    # a failure shows its message, no kind prefix, and no host traceback
    assert bad.content == "amount must be positive"
    assert bad.is_error
    assert "host internals" not in bad.content
    # code the model wrote gets its traceback back
    assert code.content == f"division by zero\n\n{traceback}"


def test_aborted_and_unknown_outcomes_use_their_own_wording() -> None:
    log = (
        LogBuilder()
        .first_model_call()
        .model_finished(tool_calls=("a", "u"), finish_reason="tool_calls")
        .tool_started("a")
        .tool_finished("a", outcome=ToolOutcome.ABORTED)
        .tool_started("u")
        .attempt(reclaimed=True)
        .tool_finished("u", outcome=ToolOutcome.UNKNOWN)
    )
    _assistant, aborted, unknown = thread_messages(log.build())
    assert (aborted.content, aborted.is_error) == (ABORTED_TEXT, True)
    assert (unknown.content, unknown.is_error) == (UNKNOWN_OUTCOME_TEXT, True)


def test_plain_string_result_is_not_quoted() -> None:
    log = LogBuilder().admitted().attempt().turn().tool_started("c").tool_finished("c", result="42")
    finished = log.build()[-1]
    assert isinstance(finished, ToolCallFinished)
    assert tool_result_text(finished) == "42"


def test_compaction_adds_one_summary_message_and_keeps_the_history() -> None:
    log = (
        LogBuilder()
        .first_model_call(input={"message": "start"})
        .model_finished(text="first answer")
    )
    log.compacted(2, len(log.records), summary="The user said start; we answered.")
    log.turn().model_started().model_finished(text="second answer")
    messages = thread_messages(log.build())
    assert roles_and_content(messages) == [
        ("user", "start"),
        ("assistant", "first answer"),
        ("user", "Summary of the earlier conversation:\nThe user said start; we answered."),
        ("assistant", "second answer"),
    ]


def test_program_issued_calls_are_listed() -> None:
    log = (
        LogBuilder()
        .first_model_call()
        .model_finished(tool_calls=("prog",), finish_reason="tool_calls")
        .tool_started("prog", tool="run_code")
        .tool_started("inner", tool="lookup_order", parent_call_id="prog")
        .tool_finished("inner", result="found")
        .tool_finished("prog", result={"value": 1})
    )
    tools = [m.tool_name for m in thread_messages(log.build()) if m.role == "tool"]
    assert tools == ["lookup_order", "run_code"]


def test_finished_child_and_agent_step_input() -> None:
    log = (
        LogBuilder()
        .admitted()
        .attempt()
        .step_started("s1", name="triage", kind="agent", input={"message": "triage ticket 7"})
        .spawned("run_child", name="researcher")
        .child_finished("run_child", name="researcher", output={"text": "found 3 papers"})
        .spawned("run_child2", name="writer")
        .child_finished(
            "run_child2",
            name="writer",
            state=TerminalState.FAILED,
            failure=ToolFailure(kind="budget_exhausted", message="ran out of turns"),
        )
    )
    messages = thread_messages(log.build())
    assert roles_and_content(messages) == [
        ("user", "triage ticket 7"),
        ("user", 'Subagent "researcher" finished (completed).\nfound 3 papers'),
        ("user", 'Subagent "writer" finished (failed).\nran out of turns'),
    ]


def test_non_text_inputs_are_rendered_as_json() -> None:
    log = (
        LogBuilder()
        .admitted(input={"message": {"order": "A1"}})
        .attempt()
        .enqueued("e1", payload={"note": "no message key"})
        .turn()
        .consumed("e1")
    )
    assert roles_and_content(thread_messages(log.build())) == [
        ("user", '{"order":"A1"}'),
        ("user", '{"note":"no message key"}'),
    ]


def test_input_without_message_starts_no_conversation() -> None:
    assert thread_messages(LogBuilder().admitted(input={"ticket": 7}).build()) == ()


def test_combine_thread_keeps_runs_oldest_first() -> None:
    first = LogBuilder(run_id="run_1").admitted(input={"message": "one"})
    second = LogBuilder(run_id="run_2").admitted(input={"message": "two"}, continues_run_id="run_1")
    empty = LogBuilder(run_id="run_3").admitted(continues_run_id="run_2")
    combined = combine_thread(
        [
            project_thread(first.build()),
            project_thread(second.build()),
            project_thread(empty.build()),
        ]
    )
    assert combined.run_ids == ("run_1", "run_2", "run_3")
    assert [(m.run_id, m.content) for m in combined.messages] == [
        ("run_1", "one"),
        ("run_2", "two"),
    ]
    assert combine_thread([]) == ThreadView(run_ids=(), messages=())


def test_each_compaction_keeps_its_own_summary_in_log_order() -> None:
    # Decided on purpose: the thread is history. The first summary stays where it took
    # effect; the second, written later, comes later and is the last summary shown.
    records = twice_compacted().build()
    messages = thread_messages(records)
    prefix = "Summary of the earlier conversation:\n"
    assert roles_and_content(messages) == [
        ("user", "start"),
        ("assistant", "one"),
        ("user", prefix + FIRST_SUMMARY),
        ("assistant", "two"),
        ("user", prefix + SECOND_SUMMARY),
        ("assistant", "three"),
    ]
    compactions = [r.seq for r in records if r.type == "compaction_applied"]
    summaries = [m for m in messages if m.content.startswith(prefix)]
    assert [m.seq for m in summaries] == compactions


def test_calls_that_never_started_are_not_listed() -> None:
    # A crash landed after the model asked for c1 and c2 but before c2 was started.
    log = (
        cut_short_turn()
        .turn()
        .model_started()
        .model_finished(tool_calls=("c3",), finish_reason="tool_calls")
        .attempt(reclaimed=True)
    )
    messages = thread_messages(log.build())
    assert [(m.role, m.tool_call_ids, m.tool_call_id) for m in messages] == [
        ("user", (), None),
        ("assistant", ("c1",), None),
        ("tool", (), "c1"),
    ]
