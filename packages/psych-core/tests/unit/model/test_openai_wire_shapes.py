"""The chat-completions mapping at the edges servers disagree on, on plain dicts."""

from typing import Any

import pytest

from psych_runtime.core.messages import UserMessage
from psych_runtime.model.openai_wire import StreamTally
from psych_runtime.model.openai_wire import read_chunk
from psych_runtime.model.openai_wire import refuses_stream_options
from psych_runtime.model.openai_wire import request_body
from psych_runtime.model.port import ModelRequest
from psych_runtime.model.port import StreamEvent
from psych_runtime.model.port import ToolCallDelta
from psych_runtime.runtime.model_call import _CallAssembler

from ...support.tools import LOOKUP


def request(**fields: Any) -> ModelRequest:
    return ModelRequest.model_validate(
        {"model": "m", "messages": (UserMessage(content="hi"),), **fields}
    )


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        ("auto", "auto"),
        ("required", "required"),
        ("none", "none"),
        ("lookup", {"type": "function", "function": {"name": "lookup"}}),
    ],
)
def test_the_tool_choice_goes_beside_the_tools(choice: str, sent: Any) -> None:
    body = request_body(request(tools=(LOOKUP,), tool_choice=choice))
    assert body["tool_choice"] == sent
    assert list(body)[:4] == ["model", "messages", "tools", "tool_choice"]


def test_no_tool_choice_without_tools_or_without_a_setting() -> None:
    assert "tool_choice" not in request_body(request(tool_choice="required"))
    assert "tool_choice" not in request_body(request(tools=(LOOKUP,)))


def test_usage_can_be_left_unasked() -> None:
    assert request_body(request())["stream_options"] == {"include_usage": True}
    assert "stream_options" not in request_body(request(), include_usage=False)


@pytest.mark.parametrize(
    ("body", "refused"),
    [
        ('{"error": {"message": "Unsupported parameter: \'stream_options\'"}}', True),
        ('{"detail": [{"type": "extra_forbidden", "loc": ["body", "stream_options"]}]}', True),
        ("stream_options.include_usage must be a boolean", False),
        ("Unsupported parameter: 'max_tokens'", False),
    ],
)
def test_a_refusal_of_stream_options_is_recognised(body: str, refused: bool) -> None:
    assert refuses_stream_options(body) is refused


def deltas(*calls: list[dict[str, Any]], **delta: Any) -> list[StreamEvent]:
    tally = StreamTally()
    events: list[StreamEvent] = []
    for fragments in calls:
        chunk = {"choices": [{"index": 0, "delta": {"tool_calls": fragments, **delta}}]}
        events += read_chunk(chunk, tally, "m")
    return events


def assembled(events: list[StreamEvent]) -> list[tuple[str | None, str, str]]:
    assembler = _CallAssembler()
    for event in events:
        assert isinstance(event, ToolCallDelta)
        assembler.add(event)
    return [(c.id, c.name, c.arguments) for c in assembler.assembled()]


def fragment(index: int = 0, **function: Any) -> dict[str, Any]:
    call_id = function.pop("id", None)
    out: dict[str, Any] = {"index": index, "function": function}
    if call_id is not None:
        out["id"] = call_id
    return out


def test_a_repeated_id_and_name_are_not_appended_again() -> None:
    events = deltas(
        [fragment(id="c1", name="lookup", arguments="")],
        [fragment(id="c1", name="lookup", arguments='{"a":')],
        [fragment(id="c1", name="lookup", arguments=" 1}")],
    )
    assert assembled(events) == [("c1", "lookup", '{"a": 1}')]


def test_a_name_streamed_in_pieces_is_joined() -> None:
    events = deltas(
        [fragment(id="c1", name="look", arguments="")],
        [fragment(name="up", arguments="{}")],
    )
    assert assembled(events) == [("c1", "lookup", "{}")]


def test_whole_calls_sharing_an_index_stay_apart() -> None:
    events = deltas(
        [
            fragment(id="c1", name="lookup", arguments='{"a": 1}'),
            fragment(id="c2", name="lookup", arguments='{"a": 2}'),
        ],
        [fragment(id="c3", name="ping", arguments="")],
        [fragment(1, id="c4", name="late", arguments="{}")],
    )
    assert assembled(events) == [
        ("c1", "lookup", '{"a": 1}'),
        ("c2", "lookup", '{"a": 2}'),
        ("c3", "ping", ""),
        ("c4", "late", "{}"),
    ]


def test_a_new_id_mid_arguments_renames_nothing() -> None:
    # Some gateways mint an id per chunk; the call is still the one that began.
    events = deltas(
        [fragment(id="c1", name="lookup", arguments='{"a"')],
        [fragment(id="c9", name="lookup", arguments=": 1}")],
    )
    assert assembled(events) == [("c1", "lookup", '{"a": 1}')]


def test_the_legacy_function_call_is_read_alone_and_ignored_beside_tool_calls() -> None:
    tally = StreamTally()
    legacy = {"name": "lookup", "arguments": '{"a": 1}'}
    alone = read_chunk({"choices": [{"index": 0, "delta": {"function_call": legacy}}]}, tally, "m")
    assert assembled(alone) == [(None, "lookup", '{"a": 1}')]
    beside = deltas([fragment(id="c1", name="lookup", arguments='{"a": 1}')], function_call=legacy)
    assert assembled(beside) == [("c1", "lookup", '{"a": 1}')]
    # A null legacy field next to an empty tool_calls list adds nothing.
    empty = read_chunk(
        {"choices": [{"index": 0, "delta": {"function_call": None, "tool_calls": []}}]},
        StreamTally(),
        "m",
    )
    assert empty == []
