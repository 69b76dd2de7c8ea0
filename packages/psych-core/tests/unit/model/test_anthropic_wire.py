"""Mapping requests to the Messages body, and the streamed events back to stream events."""

from typing import Any

import pytest

from psych_runtime.core.messages import AssistantMessage
from psych_runtime.core.messages import SystemMessage
from psych_runtime.core.messages import ToolCallRequest
from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.messages import ToolResultMessage
from psych_runtime.core.messages import UserMessage
from psych_runtime.core.metering import Usage
from psych_runtime.model.anthropic_wire import InvalidPromptCaching
from psych_runtime.model.anthropic_wire import MessageTally
from psych_runtime.model.anthropic_wire import PromptCaching
from psych_runtime.model.anthropic_wire import error_in_stream
from psych_runtime.model.anthropic_wire import read_event
from psych_runtime.model.anthropic_wire import request_body
from psych_runtime.model.anthropic_wire import usage_from
from psych_runtime.model.port import ContextOverflow
from psych_runtime.model.port import ModelError
from psych_runtime.model.port import ModelRequest
from psych_runtime.model.port import ReasoningDelta
from psych_runtime.model.port import TextDelta
from psych_runtime.model.port import ToolCallDelta

from ...support.tools import LOOKUP

PING = ToolDefinition(name="ping")
OFF = PromptCaching(tools=False, system=False, last_message=False)


def conversation() -> tuple[Any, ...]:
    return (
        SystemMessage(content="Be brief."),
        UserMessage(content="Where are A1 and B2?"),
        AssistantMessage(
            content="Checking.",
            tool_calls=(
                ToolCallRequest(id="toolu_1", name="lookup", arguments='{"order_id":"A1"}'),
                ToolCallRequest(id="toolu_2", name="lookup", arguments='{"order_id":'),
            ),
        ),
        ToolResultMessage(tool_call_id="toolu_1", name="lookup", content='{"status":"shipped"}'),
        ToolResultMessage(
            tool_call_id="toolu_2", name="lookup", content="bad arguments", is_error=True
        ),
    )


def body(caching: PromptCaching = OFF, **fields: Any) -> dict[str, Any]:
    request = ModelRequest.model_validate(
        {"model": "claude-haiku-4-5", "messages": conversation(), **fields}
    )
    return request_body(request, default_max_tokens=1024, caching=caching)


def test_the_conversation_maps_to_system_and_alternating_turns() -> None:
    sent = body()
    assert sent["system"] == [{"type": "text", "text": "Be brief."}]
    assert sent["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Where are A1 and B2?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "lookup",
                    "input": {"order_id": "A1"},
                },
                # Arguments that never parsed were refused when the call was made.
                {"type": "tool_use", "id": "toolu_2", "name": "lookup", "input": {}},
            ],
        },
        {
            # Both results travel in one user turn.
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": '{"status":"shipped"}',
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "bad arguments",
                    "is_error": True,
                },
            ],
        },
    ]
    assert sent["stream"] is True
    assert sent["max_tokens"] == 1024  # the API requires one
    assert "tools" not in sent and "tool_choice" not in sent


def test_settings_map_to_their_fields_and_extra_goes_last() -> None:
    sent = body(
        max_output_tokens=200,
        temperature=0.3,
        top_p=0.9,
        stop=("END",),
        reasoning_effort="high",
        extra={"metadata": {"user_id": "u1"}, "max_tokens": 300},
    )
    assert sent["temperature"] == 0.3
    assert sent["top_p"] == 0.9
    assert sent["stop_sequences"] == ["END"]
    assert sent["metadata"] == {"user_id": "u1"}
    assert sent["max_tokens"] == 300
    assert "thinking" not in sent and "reasoning_effort" not in sent


def test_a_later_system_message_travels_as_user_text() -> None:
    request = ModelRequest(
        model="m",
        messages=(
            SystemMessage(content="Rules."),
            UserMessage(content="Hi"),
            AssistantMessage(content="Hello"),
            SystemMessage(content="Summary of earlier turns."),
            UserMessage(content="And now?"),
            AssistantMessage(content=""),  # an empty answer adds no empty block
        ),
    )
    sent = request_body(request, default_max_tokens=10, caching=OFF)
    assert [turn["role"] for turn in sent["messages"]] == ["user", "assistant", "user"]
    assert sent["messages"][2]["content"] == [
        {"type": "text", "text": "Summary of earlier turns."},
        {"type": "text", "text": "And now?"},
    ]


def test_tools_and_every_tool_choice() -> None:
    forms = {
        "auto": {"type": "auto"},
        "required": {"type": "any"},
        "none": {"type": "none"},
        "lookup": {"type": "tool", "name": "lookup"},
    }
    for choice, expected in forms.items():
        sent = body(tools=(LOOKUP, PING), tool_choice=choice)
        assert sent["tool_choice"] == expected
    sent = body(tools=(LOOKUP, PING))
    assert "tool_choice" not in sent
    assert sent["tools"] == [
        {
            "name": "lookup",
            "description": "Find an order.",
            "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
        {"name": "ping", "input_schema": {"type": "object", "properties": {}}},
    ]
    # Without tools a choice would be refused by the API, so none is sent.
    assert "tool_choice" not in body(tool_choice="required")


def test_default_caching_marks_the_last_tool_the_system_prompt_and_the_last_message() -> None:
    sent = body(PromptCaching(), tools=(LOOKUP, PING))
    ephemeral = {"type": "ephemeral"}
    assert "cache_control" not in sent["tools"][0]
    assert sent["tools"][-1]["cache_control"] == ephemeral
    assert sent["system"][-1]["cache_control"] == ephemeral
    last = sent["messages"][-1]["content"]
    assert last[-1]["cache_control"] == ephemeral
    assert "cache_control" not in last[0]
    marked = [
        block for turn in sent["messages"] for block in turn["content"] if "cache_control" in block
    ]
    assert len(marked) == 1


def test_caching_is_configurable() -> None:
    long = body(PromptCaching(ttl="1h"), tools=(LOOKUP,))
    assert long["tools"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert long["system"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert long["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}

    only_system = body(PromptCaching(tools=False, last_message=False), tools=(LOOKUP,))
    assert "cache_control" not in only_system["tools"][-1]
    assert "cache_control" in only_system["system"][-1]
    assert "cache_control" not in only_system["messages"][-1]["content"][-1]

    off = body(OFF, tools=(LOOKUP,))
    assert "cache_control" not in str(off)


def test_a_conversation_entry_may_not_outlive_the_prefix() -> None:
    with pytest.raises(InvalidPromptCaching, match="message_ttl"):
        PromptCaching(ttl="5m", message_ttl="1h")
    with pytest.raises(InvalidPromptCaching, match="'5m' or '1h'"):
        PromptCaching(ttl="2h")  # type: ignore[arg-type]
    assert PromptCaching(ttl="1h", message_ttl="1h").message_ttl == "1h"
    assert PromptCaching(tools=False, system=False, message_ttl="1h").message_ttl == "1h"


def test_usage_keeps_reads_and_both_kinds_of_writes_apart() -> None:
    raw = {
        "input_tokens": 40,
        "output_tokens": 300,
        "cache_read_input_tokens": 9000,
        "cache_creation_input_tokens": 2500,
        "cache_creation": {"ephemeral_5m_input_tokens": 500, "ephemeral_1h_input_tokens": 2000},
    }
    assert usage_from(raw) == Usage(
        input=40, output=300, cache_read=9000, cache_write=2500, cache_write_1h=2000
    )
    # Without the split every write is a five-minute one; with only the split, its sum.
    assert usage_from({"input_tokens": 5, "cache_creation_input_tokens": 70}) == Usage(
        input=5, cache_write=70
    )
    only_split = {
        "cache_creation": {"ephemeral_5m_input_tokens": 3, "ephemeral_1h_input_tokens": 4}
    }
    assert usage_from(only_split) == Usage(cache_write=7, cache_write_1h=4)


def block(index: int, event: str, **payload: Any) -> tuple[str, dict[str, Any]]:
    """A ``content_block_start``, ``_delta`` or ``_stop`` event of block ``index``.

    The payload goes under ``content_block`` for a start and under ``delta`` for a delta.
    """
    data: dict[str, Any] = {"index": index}
    if event == "start":
        data["content_block"] = payload
    elif event == "delta":
        data["delta"] = payload
    return f"content_block_{event}", data


def test_a_stream_of_events_reads_into_deltas_and_a_tally() -> None:
    tally = MessageTally()
    start_usage = {
        "input_tokens": 12,
        "output_tokens": 1,
        "cache_read_input_tokens": 800,
        "cache_creation_input_tokens": 0,
    }
    script: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"message": {"model": "claude-x", "usage": start_usage}}),
        ("ping", {}),
        block(0, "start", type="thinking", thinking=""),
        block(0, "delta", type="thinking_delta", thinking="Hm."),
        block(0, "delta", type="signature_delta", signature="x"),
        block(0, "stop"),
        block(1, "start", type="text", text=""),
        block(1, "delta", type="text_delta", text="On it."),
        block(1, "stop"),
        block(2, "start", type="tool_use", id="toolu_9", name="lookup", input={}),
        block(2, "delta", type="input_json_delta", partial_json=""),
        block(2, "delta", type="input_json_delta", partial_json='{"order_id": '),
        block(2, "delta", type="input_json_delta", partial_json='"A1"}'),
        block(2, "stop"),
        (
            "message_delta",
            {"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 57}},
        ),
        ("message_stop", {}),
    ]
    events = []
    for name, data in script:
        events += read_event(name, {"type": name, **data}, tally)
    assert events == [
        ReasoningDelta(text="Hm."),
        TextDelta(text="On it."),
        ToolCallDelta(index=2, id="toolu_9", name="lookup"),
        ToolCallDelta(index=2, arguments='{"order_id": '),
        ToolCallDelta(index=2, arguments='"A1"}'),
    ]
    assert tally.stopped
    assert tally.finish_reason == "tool_calls"
    assert tally.model == "claude-x"
    # The closing count replaces the opening one; the input side stays.
    assert tally.reported_usage() == Usage(input=12, output=57, cache_read=800)


@pytest.mark.parametrize(
    ("reason", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool_calls"),
        ("refusal", "content_filter"),
        ("pause_turn", "pause_turn"),
    ],
)
def test_stop_reasons_take_the_runtimes_names(reason: str, finish: str) -> None:
    tally = MessageTally()
    read_event("message_delta", {"type": "message_delta", "delta": {"stop_reason": reason}}, tally)
    assert tally.finish_reason == finish


def test_a_stream_without_usage_reports_none() -> None:
    tally = MessageTally()
    read_event("message_start", {"type": "message_start", "message": {"model": "m"}}, tally)
    assert tally.reported_usage() is None


@pytest.mark.parametrize(
    ("kind", "status", "transient"),
    [
        ("overloaded_error", 529, True),
        ("rate_limit_error", 429, True),
        ("api_error", 500, True),
        ("invalid_request_error", 400, False),
        ("authentication_error", 401, False),
        ("something_new", 500, True),
    ],
)
def test_error_events_are_classified_by_type(kind: str, status: int, transient: bool) -> None:
    error = error_in_stream({"type": "error", "error": {"type": kind, "message": "scripted"}})
    assert isinstance(error, ModelError)
    assert (error.status_code, error.transient) == (status, transient)
    assert "scripted" in str(error)


def test_a_too_long_prompt_is_a_context_overflow() -> None:
    payload = {"error": {"type": "invalid_request_error", "message": "prompt is too long: 210000"}}
    assert isinstance(error_in_stream(payload), ContextOverflow)
    with pytest.raises(ContextOverflow):
        read_event("error", {"type": "error", **payload}, MessageTally())


def test_a_request_marks_its_own_cache_breakpoints_after_the_messages_it_names() -> None:
    # Message 1 is the user's question: its (only) block carries the marker.
    sent = body(OFF, cache_breakpoints=(1,))
    assert sent["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    marked = [b for t in sent["messages"] for b in t["content"] if "cache_control" in b]
    assert len(marked) == 1
    # An index past the conversation is ignored, not an error.
    assert "cache_control" not in str(body(OFF, cache_breakpoints=(99,)))


def test_breakpoints_never_exceed_the_four_a_request_may_carry() -> None:
    every = tuple(range(len(conversation())))
    sent = body(PromptCaching(), tools=(LOOKUP,), cache_breakpoints=every)
    text = str(sent)
    assert text.count("'cache_control'") == 4
    # The fixed prefix keeps its markers; the latest messages get the rest.
    assert "cache_control" in sent["tools"][-1] and "cache_control" in sent["system"][-1]
    assert "cache_control" in sent["messages"][-1]["content"][-1]


def test_a_negative_breakpoint_is_refused_by_the_request() -> None:
    with pytest.raises(ValueError, match="cache_breakpoints"):
        body(cache_breakpoints=(-1,))
