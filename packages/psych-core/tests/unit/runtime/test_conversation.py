"""The model-facing conversation: compaction and turns cut short by a crash."""

from psych_runtime.core.messages import AssistantMessage
from psych_runtime.core.messages import Message
from psych_runtime.core.messages import ToolResultMessage
from psych_runtime.core.messages import UserMessage
from psych_runtime.runtime.conversation import SUMMARY_PREFIX
from psych_runtime.runtime.conversation import Conversation
from psych_runtime.testing.log_builder import LogBuilder

from ...support.logs import SECOND_SUMMARY
from ...support.logs import cut_short_turn
from ...support.logs import twice_compacted


def _messages(log: LogBuilder) -> list[Message]:
    conversation = Conversation()
    conversation.update(log.build())
    return conversation.messages()


def test_a_second_compaction_replaces_the_first_summary_too() -> None:
    messages = _messages(twice_compacted())
    assert [(type(m).__name__, m.content) for m in messages] == [
        ("UserMessage", SUMMARY_PREFIX + SECOND_SUMMARY),
        ("AssistantMessage", "three"),
    ]


def test_a_second_compaction_gives_the_same_view_read_incrementally() -> None:
    records = twice_compacted().build()
    whole = Conversation()
    whole.update(records)
    piecewise = Conversation()
    for end in range(1, len(records) + 1):
        piecewise.update(records[:end])
    assert piecewise.messages() == whole.messages()


def test_calls_that_never_started_are_not_sent_to_the_model() -> None:
    messages = _messages(cut_short_turn())
    assert isinstance(messages[0], UserMessage)
    assistant, result = messages[1:]
    assert isinstance(assistant, AssistantMessage)
    assert [(c.id, c.name, c.arguments) for c in assistant.tool_calls] == [
        ("c1", "charge", '{"amount":5}')
    ]
    assert isinstance(result, ToolResultMessage)
    assert result.tool_call_id == "c1"


def test_every_call_sent_has_a_result_and_every_result_has_a_call() -> None:
    log = cut_short_turn().turn().model_started()
    log.model_finished(tool_calls=("c3",), finish_reason="tool_calls")
    log.tool_started("c3", tool="email").tool_finished("c3")
    messages = _messages(log)
    asked = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    answered = [m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)]
    assert asked == answered == ["c1", "c3"]
    assert all(
        c.name != "unknown"
        for m in messages
        if isinstance(m, AssistantMessage)
        for c in m.tool_calls
    )


def test_a_turn_with_no_text_and_no_started_call_is_left_out() -> None:
    log = (
        LogBuilder()
        .first_model_call(input={"message": "go"})
        .model_finished(tool_calls=("c1",), finish_reason="tool_calls")
        .attempt(reclaimed=True)
    )
    assert _messages(log) == [UserMessage(content="go")]


def test_asking_after_every_record_gives_what_one_look_at_the_end_gives() -> None:
    # The messages are built once and reused; a call started after they were built
    # must still show up (a reader asking between the answer and its calls).
    records = (
        LogBuilder()
        .first_model_call(input={"message": "charge and email"})
        .model_finished(tool_calls=("c1", "c2"), finish_reason="tool_calls")
        .tool_started("c1", tool="charge", arguments={"amount": 5})
        .tool_finished("c1", result={"ok": True})
        .tool_started("c2", tool="email", arguments={"to": "a@b.c"})
        .tool_finished("c2", result={"sent": True})
        .turn()
        .model_started()
        .model_finished(text="done")
        .build()
    )
    whole = Conversation()
    whole.update(records)
    piecewise = Conversation()
    for end in range(1, len(records) + 1):
        piecewise.update(records[:end])
        piecewise.messages()
    assert piecewise.messages() == whole.messages()
    asked = whole.messages()[1]
    assert isinstance(asked, AssistantMessage)
    assert [call.name for call in asked.tool_calls] == ["charge", "email"]
