"""Mapping requests to the chat-completions body and chunks back to stream events."""

import json
from decimal import Decimal

import pytest

from psych_runtime.core.errors import PsychError
from psych_runtime.core.messages import AssistantMessage
from psych_runtime.core.messages import SystemMessage
from psych_runtime.core.messages import ToolCallRequest
from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.messages import ToolResultMessage
from psych_runtime.core.messages import UserMessage
from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import CostSource
from psych_runtime.core.metering import Usage
from psych_runtime.model.openai_wire import MAX_TOKENS_FIELDS
from psych_runtime.model.openai_wire import MaxTokensField
from psych_runtime.model.openai_wire import StreamTally
from psych_runtime.model.openai_wire import UnknownLimitField
from psych_runtime.model.openai_wire import check_limit_field
from psych_runtime.model.openai_wire import output_limit_fields
from psych_runtime.model.openai_wire import provider_cost
from psych_runtime.model.openai_wire import read_chunk
from psych_runtime.model.openai_wire import request_body
from psych_runtime.model.openai_wire import usage_from
from psych_runtime.model.port import ModelRequest
from psych_runtime.model.port import ReasoningDelta
from psych_runtime.model.port import TextDelta
from psych_runtime.model.port import ToolCallDelta

from ...support.tools import LOOKUP

PING = ToolDefinition(name="ping")


def _request(**fields: object) -> ModelRequest:
    base: dict[str, object] = {
        "model": "gpt-test",
        "messages": (
            SystemMessage(content="Be brief."),
            UserMessage(content="Where is A1?"),
            AssistantMessage(
                content="",
                tool_calls=(
                    ToolCallRequest(id="call_1", name="lookup", arguments='{"order_id":"A1"}'),
                ),
            ),
            ToolResultMessage(tool_call_id="call_1", name="lookup", content='{"status":"shipped"}'),
            AssistantMessage(content="It shipped."),
        ),
    }
    base.update(fields)
    return ModelRequest.model_validate(base)


def test_messages_map_to_the_wire_roles() -> None:
    body = request_body(_request())
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Where is A1?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"order_id":"A1"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"status":"shipped"}'},
        {"role": "assistant", "content": "It shipped."},
    ]


def test_an_assistant_call_with_empty_arguments_sends_an_empty_object() -> None:
    request = _request(
        messages=(AssistantMessage(tool_calls=(ToolCallRequest(id="c", name="ping"),)),)
    )
    body = json.loads(json.dumps(request_body(request)))
    assert body["messages"][0]["tool_calls"][0]["function"]["arguments"] == "{}"


def test_tools_become_function_definitions_in_the_order_given() -> None:
    body = request_body(_request(tools=(PING, LOOKUP)))
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}},
        },
        {
            "type": "function",
            "function": {
                "name": "lookup",
                "description": "Find an order.",
                "parameters": LOOKUP.input_schema,
            },
        },
    ]


def test_a_minimal_body_streams_with_usage_and_sets_nothing_optional() -> None:
    body = request_body(_request(messages=(UserMessage(content="hi"),)))
    assert list(body) == ["model", "messages", "stream", "stream_options"]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}


def test_optional_fields_appear_only_when_set_in_a_fixed_order() -> None:
    request = _request(
        tools=(LOOKUP,),
        temperature=0.2,
        top_p=0.9,
        max_output_tokens=256,
        reasoning_effort="low",
        stop=("END",),
        extra={"seed": 7, "temperature": 0.0},
    )
    body = request_body(request)
    assert list(body) == [
        "model", "messages", "tools", "stream", "stream_options",
        "temperature", "top_p", "max_tokens", "reasoning_effort", "stop", "seed",
    ]  # fmt: skip
    assert body["max_tokens"] == 256
    assert body["stop"] == ["END"]
    # extra is merged last and wins.
    assert body["temperature"] == 0.0
    assert body["seed"] == 7


def _limit_fields(body: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in body.items() if k in ("max_tokens", "max_completion_tokens")}


@pytest.mark.parametrize(
    "model", ["gpt-test", "gpt-4o", "gpt-4.1-mini", "gpt-oss-20b", "gemma-3-270m", "olmo-2"]
)
def test_auto_sends_max_tokens_which_every_other_server_reads(model: str) -> None:
    # llama.cpp's Python server, older vLLM and Ollama ignore max_completion_tokens,
    # so the limit must travel as max_tokens unless the server is known to be OpenAI.
    body = request_body(_request(model=model, max_output_tokens=24))
    assert _limit_fields(body) == {"max_tokens": 24}


@pytest.mark.parametrize(
    "model",
    [
        "o1",
        "o1-mini",
        "o3-mini",
        "o4-mini-2025-04-16",
        "gpt-5",
        "gpt-5.1-codex",
        "GPT-5-mini",
        "openai/o3",
        "azure/gpt-5-nano",
        "ft:gpt-5-mini:acme::abc123",
    ],
)
def test_auto_sends_max_completion_tokens_to_openai_reasoning_models(model: str) -> None:
    # These refuse max_tokens outright, behind any proxy.
    body = request_body(_request(model=model, max_output_tokens=24))
    assert _limit_fields(body) == {"max_completion_tokens": 24}


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        ("https://api.openai.com/v1", "max_completion_tokens"),
        ("https://API.OpenAI.com/v1/", "max_completion_tokens"),
        ("http://127.0.0.1:8000/v1", "max_tokens"),
        ("https://api.openai.com.example/v1", "max_tokens"),
        ("https://litellm.internal/v1", "max_tokens"),
    ],
)
def test_auto_sends_max_completion_tokens_to_openai_itself(base_url: str, expected: str) -> None:
    body = request_body(_request(model="gpt-4o", max_output_tokens=24), base_url=base_url)
    assert _limit_fields(body) == {expected: 24}


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ("max_tokens", {"max_tokens": 64}),
        ("max_completion_tokens", {"max_completion_tokens": 64}),
        ("both", {"max_tokens": 64, "max_completion_tokens": 64}),
    ],
)
@pytest.mark.parametrize("model", ["gpt-test", "o3-mini"])
def test_an_explicit_setting_sends_exactly_the_fields_it_names(
    setting: MaxTokensField, expected: dict[str, int], model: str
) -> None:
    body = request_body(
        _request(model=model, max_output_tokens=64),
        max_tokens_field=setting,
        base_url="https://api.openai.com/v1",
    )
    assert _limit_fields(body) == expected
    # Both names sit where the one did, in a fixed order, so the bytes stay stable.
    assert [k for k in body if k in expected] == list(expected)


@pytest.mark.parametrize("setting", MAX_TOKENS_FIELDS)
def test_no_limit_field_is_sent_without_a_limit(setting: MaxTokensField) -> None:
    body = request_body(_request(model="o3"), max_tokens_field=setting)
    assert _limit_fields(body) == {}


def test_every_setting_is_one_of_the_documented_four() -> None:
    assert set(MAX_TOKENS_FIELDS) == {"auto", "max_tokens", "max_completion_tokens", "both"}
    for setting in MAX_TOKENS_FIELDS:
        assert check_limit_field(setting) == setting


@pytest.mark.parametrize("setting", ["max-tokens", "MAX_TOKENS", "", "max_output_tokens"])
def test_an_unknown_setting_is_refused_by_name(setting: str) -> None:
    with pytest.raises(UnknownLimitField, match="max_tokens_field must be one of") as caught:
        check_limit_field(setting)
    assert isinstance(caught.value, PsychError)
    assert repr(setting) in str(caught.value)


def test_output_limit_fields_names_the_fields_without_a_body() -> None:
    assert output_limit_fields("auto", model="llama-3") == ("max_tokens",)
    assert output_limit_fields("auto", model="o1") == ("max_completion_tokens",)
    assert output_limit_fields("auto", model="x", base_url="https://api.openai.com/v1") == (
        "max_completion_tokens",
    )


def test_the_same_request_serialises_to_the_same_bytes() -> None:
    one = json.dumps(request_body(_request(tools=(LOOKUP, PING))))
    two = json.dumps(request_body(_request(tools=(LOOKUP, PING))))
    assert one == two


def test_openai_usage_splits_cached_tokens_out_of_the_prompt() -> None:
    usage = usage_from(
        {
            "prompt_tokens": 1200,
            "completion_tokens": 300,
            "prompt_tokens_details": {"cached_tokens": 1000},
            "completion_tokens_details": {"reasoning_tokens": 120},
        }
    )
    assert usage == Usage(input=200, output=300, cache_read=1000, reasoning=120)


def test_cache_writes_are_read_in_either_spelling() -> None:
    openai_style = usage_from(
        {
            "prompt_tokens": 500,
            "completion_tokens": 10,
            "prompt_tokens_details": {"cached_tokens": 100, "cache_creation_tokens": 300},
        }
    )
    anthropic_style = usage_from(
        {
            "prompt_tokens": 500,
            "completion_tokens": 10,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 300,
            "cache_creation": {"ephemeral_5m_input_tokens": 200, "ephemeral_1h_input_tokens": 100},
        }
    )
    assert openai_style == Usage(input=100, output=10, cache_read=100, cache_write=300)
    assert anthropic_style == Usage(
        input=100, output=10, cache_read=100, cache_write=300, cache_write_1h=100
    )


def test_usage_tolerates_missing_and_odd_fields() -> None:
    assert usage_from({}) == Usage()
    assert usage_from({"prompt_tokens": None, "completion_tokens": True}) == Usage()
    # A provider that reports more cached tokens than prompt tokens never yields a
    # negative count.
    assert (
        usage_from({"prompt_tokens": 5, "prompt_tokens_details": {"cached_tokens": 9}}).input == 0
    )
    assert usage_from({"input_tokens": 7, "output_tokens": 3}) == Usage(input=7, output=3)


def test_provider_cost_is_read_as_an_exact_decimal() -> None:
    cost = provider_cost({"cost": 0.0123}, "gpt-test")
    assert cost == Cost(
        amount=Decimal("0.0123"), currency="USD", model="gpt-test", source=CostSource.PROVIDER
    )
    assert provider_cost({}, "m") is None
    assert provider_cost({"cost": -1}, "m") is None
    assert provider_cost({"cost": "NaN"}, "m") is None
    assert provider_cost({"cost": True}, "m") is None


def test_a_chunk_yields_reasoning_then_text_and_records_the_finish() -> None:
    tally = StreamTally()
    chunk = {
        "model": "gpt-test-2025",
        "choices": [
            {
                "index": 0,
                "delta": {"reasoning_content": "thinking", "content": "Hi"},
                "finish_reason": "stop",
            },
            {"index": 1, "delta": {"content": "ignored second choice"}},
        ],
    }
    assert read_chunk(chunk, tally, "gpt-test") == [
        ReasoningDelta(text="thinking"),
        TextDelta(text="Hi"),
    ]
    assert tally.finish_reason == "stop"
    assert tally.model == "gpt-test-2025"


def test_reasoning_is_also_read_from_the_reasoning_field() -> None:
    events = read_chunk(
        {"choices": [{"index": 0, "delta": {"reasoning": "hmm"}}]}, StreamTally(), "m"
    )
    assert events == [ReasoningDelta(text="hmm")]


def test_tool_call_fragments_keep_their_index_id_and_name() -> None:
    tally = StreamTally()
    chunk = {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 1,
                            "id": "call_b",
                            "type": "function",
                            "function": {"name": "b", "arguments": ""},
                        },
                        {"index": 0, "function": {"arguments": '{"x":'}},
                    ]
                },
            }
        ]
    }
    assert read_chunk(chunk, tally, "m") == [
        ToolCallDelta(index=1, id="call_b", name="b", arguments=""),
        ToolCallDelta(index=0, arguments='{"x":'),
    ]
    assert tally.saw_tool_call


def test_the_usage_chunk_fills_the_tally() -> None:
    tally = StreamTally()
    events = read_chunk(
        {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "cost": 0.5}},
        tally,
        "gpt-test",
    )
    assert events == []
    assert tally.usage == Usage(input=3, output=2)
    assert tally.cost is not None and tally.cost.amount == Decimal("0.5")
    assert tally.cost.model == "gpt-test"
