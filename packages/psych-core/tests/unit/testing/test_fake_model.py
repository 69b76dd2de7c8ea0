"""The scriptable FakeModel behaves like a provider, failures included."""

import asyncio
import json
import time
from collections.abc import AsyncIterator
from decimal import Decimal

import pytest
from pydantic import JsonValue

from psych_runtime.core.messages import UserMessage
from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import CostSource
from psych_runtime.core.metering import Usage
from psych_runtime.model.port import ContextOverflow
from psych_runtime.model.port import ModelClient
from psych_runtime.model.port import ModelError
from psych_runtime.model.port import ModelRequest
from psych_runtime.model.port import ReasoningDelta
from psych_runtime.model.port import StreamDone
from psych_runtime.model.port import StreamEvent
from psych_runtime.model.port import TextDelta
from psych_runtime.model.port import ToolCallDelta
from psych_runtime.model.port import TransientModelError
from psych_runtime.testing.fake_model import FakeModel
from psych_runtime.testing.fake_model import FakeModelScriptExhausted
from psych_runtime.testing.fake_model import FakePermanentFailure
from psych_runtime.testing.fake_model import FakeTransientFailure
from psych_runtime.testing.fake_model import ToolCallScript


def _request(model: str = "gpt-4o", idle: float = 300.0) -> ModelRequest:
    return ModelRequest(
        model=model, messages=(UserMessage(content="hi"),), idle_timeout_seconds=idle
    )


async def _collect(stream: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in stream]


def _calls(events: list[StreamEvent]) -> dict[int, tuple[str | None, str | None, str]]:
    """Reassemble tool-call fragments the way a client would: by index."""
    calls: dict[int, tuple[str | None, str | None, str]] = {}
    for event in events:
        if isinstance(event, ToolCallDelta):
            call_id, name, text = calls.get(event.index, (None, None, ""))
            calls[event.index] = (call_id or event.id, name or event.name, text + event.arguments)
    return calls


def _done(events: list[StreamEvent]) -> StreamDone:
    assert isinstance(events[-1], StreamDone)
    assert sum(isinstance(event, StreamDone) for event in events) == 1
    return events[-1]


async def test_it_is_a_model_client_with_no_known_models_by_default() -> None:
    model = FakeModel()
    assert isinstance(model, ModelClient)
    assert await model.known_models() == frozenset()
    named = FakeModel(known_models=["fake-standard", "fake-reasoning"])
    assert await named.known_models() == frozenset({"fake-standard", "fake-reasoning"})


async def test_text_streams_one_word_per_delta_and_joins_exactly() -> None:
    text = "  A1 has\tshipped,  today. "
    model = FakeModel().turn(text=text)
    events = await _collect(model.stream(_request()))
    deltas = [event for event in events if isinstance(event, TextDelta)]
    assert "".join(delta.text for delta in deltas) == text
    assert len(deltas) == len(text.split())
    assert all(len(delta.text.split()) == 1 for delta in deltas)
    done = _done(events)
    assert done.finish_reason == "stop"
    assert done.usage is None
    assert done.cost is None
    assert done.model == "gpt-4o"


async def test_a_sequence_pins_the_exact_chunks() -> None:
    model = FakeModel().turn(text=["A", "1 ha", "s shipped"], reasoning=["thin", "king"])
    events = await _collect(model.stream(_request()))
    assert [(type(e).__name__, getattr(e, "text", None)) for e in events[:-1]] == [
        ("ReasoningDelta", "thin"),
        ("ReasoningDelta", "king"),
        ("TextDelta", "A"),
        ("TextDelta", "1 ha"),
        ("TextDelta", "s shipped"),
    ]


async def test_emission_order_is_reasoning_text_calls_done() -> None:
    model = FakeModel().turn(
        reasoning="let me look",
        text="Looking it up.",
        tool_calls=[("lookup_order", {"order_id": "A1"})],
    )
    events = await _collect(model.stream(_request()))
    kinds = [event.kind for event in events]
    first_text = kinds.index("text")
    first_call = kinds.index("tool_call")
    assert kinds[0] == "reasoning"
    assert all(kind == "reasoning" for kind in kinds[:first_text])
    assert all(kind == "text" for kind in kinds[first_text:first_call])
    assert all(kind == "tool_call" for kind in kinds[first_call:-1])
    assert kinds[-1] == "done"
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert reasoning == "let me look"


async def test_empty_turn_is_just_a_completion() -> None:
    events = await _collect(FakeModel().turn().stream(_request()))
    assert len(events) == 1
    assert _done(events).finish_reason == "stop"


async def test_tool_calls_fragment_and_reassemble() -> None:
    arguments: dict[str, JsonValue] = {"order_id": "A1", "items": [1, 2, 3], "note": "frágil"}
    model = FakeModel().turn(tool_calls=[("lookup_order", arguments), ("refund", {"amount": 5})])
    events = await _collect(model.stream(_request()))
    calls = _calls(events)
    assert sorted(calls) == [0, 1]
    first_id, first_name, first_text = calls[0]
    second_id, second_name, second_text = calls[1]
    assert (first_name, second_name) == ("lookup_order", "refund")
    assert json.loads(first_text) == arguments
    assert json.loads(second_text) == {"amount": 5}
    assert first_id
    assert second_id
    assert first_id != second_id
    assert _done(events).finish_reason == "tool_calls"
    for index in (0, 1):
        fragments = [e for e in events if isinstance(e, ToolCallDelta) and e.index == index]
        assert len(fragments) > 1
        assert fragments[0].id is not None
        assert fragments[0].name is not None
        assert all(f.id is None and f.name is None for f in fragments[1:])
        assert all(len(f.arguments) <= 4 for f in fragments)


async def test_minted_ids_are_deterministic_and_unique_across_turns() -> None:
    def script() -> FakeModel:
        return (
            FakeModel()
            .turn(tool_calls=[("a", {}), ("b", {})])
            .turn(tool_calls=[ToolCallScript("c", arguments={}, call_id="call_3"), ("d", {})])
        )

    async def ids(model: FakeModel) -> list[str | None]:
        found: list[str | None] = []
        for _ in range(2):
            events = await _collect(model.stream(_request()))
            found.extend(call_id for call_id, _, _ in _calls(events).values())
        return found

    first, second = await ids(script()), await ids(script())
    assert first == second
    assert len(set(first)) == 4
    assert first[:2] == ["call_1", "call_2"]
    assert first[2] == "call_3"
    assert all(isinstance(i, str) and i.startswith("call_") for i in first)


async def test_raw_arguments_are_sent_verbatim() -> None:
    broken = '{"order_id": "A1"'
    model = FakeModel().turn(tool_calls=[ToolCallScript("lookup_order", raw_arguments=broken)])
    events = await _collect(model.stream(_request()))
    assert _calls(events)[0][2] == broken


async def test_empty_raw_arguments_still_carry_id_and_name() -> None:
    model = FakeModel().turn(tool_calls=[ToolCallScript("ping", raw_arguments="", call_id="x")])
    events = await _collect(model.stream(_request()))
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert len(deltas) == 1
    assert (deltas[0].id, deltas[0].name, deltas[0].arguments) == ("x", "ping", "")


async def test_custom_fragments_are_used_as_given() -> None:
    script = ToolCallScript(
        "lookup_order",
        arguments={"order_id": "A1"},
        fragments=['{"order_', 'id":"A1"}'],
        call_id="c1",
    )
    events = await _collect(FakeModel().turn(tool_calls=[script]).stream(_request()))
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [d.arguments for d in deltas] == ['{"order_', 'id":"A1"}']
    assert deltas[0].id == "c1"


def test_tool_call_script_refuses_inconsistent_input() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        ToolCallScript("x")
    with pytest.raises(ValueError, match="exactly one"):
        ToolCallScript("x", arguments={}, raw_arguments="{}")
    with pytest.raises(ValueError, match="join"):
        ToolCallScript("x", raw_arguments="{}", fragments=["{", "]"])
    with pytest.raises(ValueError, match="at least one"):
        ToolCallScript("x", raw_arguments="", fragments=[])
    with pytest.raises(ValueError, match="sequence"):
        ToolCallScript("x", raw_arguments="{}", fragments="{}")


async def test_usage_cost_and_finish_reason_are_reported() -> None:
    cost = Cost(amount=Decimal("0.01"), source=CostSource.PROVIDER)
    model = (
        FakeModel()
        .turn(text="a", usage=Usage(input=10, output=5), cost=cost, finish_reason="length")
        .turn(text="b", usage={"input": 3, "cache_read": 7})
        .turn(text="c", tool_calls=[("x", {})], finish_reason="stop")
    )
    first = _done(await _collect(model.stream(_request())))
    assert first.usage == Usage(input=10, output=5)
    assert first.cost == cost
    assert first.finish_reason == "length"
    second = _done(await _collect(model.stream(_request())))
    assert second.usage == Usage(input=3, cache_read=7)
    assert second.cost is None
    third = _done(await _collect(model.stream(_request(model="other"))))
    assert third.finish_reason == "stop"
    assert third.model == "other"


async def test_requests_are_recorded_even_when_never_iterated() -> None:
    model = FakeModel().turn(text="one").turn(text="two")
    with pytest.raises(LookupError):
        _ = model.last_request
    first, second = _request(model="m1"), _request(model="m2")
    model.stream(first)
    assert list(model.requests) == [first]
    assert model.last_request is first
    assert model.remaining == 1
    events = await _collect(model.stream(second))
    assert list(model.requests) == [first, second]
    assert model.last_request is second
    assert model.remaining == 0
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "two"


async def test_scripting_methods_chain_on_the_same_object() -> None:
    model = FakeModel()
    chained = (
        model.turn()
        .stalls(0)
        .aborts_mid_token()
        .raises_transient()
        .raises_permanent()
        .raises_overflow()
    )
    assert chained is model
    assert model.remaining == 6


async def test_running_past_the_script_raises() -> None:
    model = FakeModel().turn(text="only one")
    await _collect(model.stream(_request()))
    with pytest.raises(FakeModelScriptExhausted) as info:
        await _collect(model.stream(_request()))
    assert info.value.scripted == 1
    assert info.value.call_number == 2
    assert isinstance(info.value, ModelError)
    assert not info.value.transient
    with pytest.raises(FakeModelScriptExhausted) as again:
        await _collect(model.stream(_request()))
    assert again.value.call_number == 3
    assert len(model.requests) == 3


async def test_an_unscripted_fake_raises_on_its_first_call() -> None:
    with pytest.raises(FakeModelScriptExhausted) as info:
        await _collect(FakeModel().stream(_request()))
    assert (info.value.scripted, info.value.call_number) == (0, 1)


async def test_stall_outlasts_the_idle_timeout_then_completes_bare() -> None:
    idle = 0.2
    model = FakeModel().stalls()
    stream = model.stream(_request(idle=idle))
    started = time.monotonic()
    first = await anext(stream)
    waited = time.monotonic() - started
    assert waited > idle
    assert isinstance(first, StreamDone)
    assert first.usage is None
    assert first.finish_reason == "stop"
    with pytest.raises(StopAsyncIteration):
        await anext(stream)


async def test_stall_trips_a_reader_enforcing_the_idle_timeout() -> None:
    idle = 0.1
    stream = FakeModel().stalls().stream(_request(idle=idle))
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(anext(stream), timeout=idle)


async def test_stall_with_the_idle_timeout_disabled_or_explicit() -> None:
    disabled = FakeModel().stalls().stream(_request(idle=0))
    started = time.monotonic()
    await _collect(disabled)
    assert time.monotonic() - started >= 0.1
    explicit = FakeModel().stalls(0.15).stream(_request(idle=300))
    started = time.monotonic()
    await _collect(explicit)
    assert 0.15 <= time.monotonic() - started < 5


def test_negative_delays_are_refused() -> None:
    with pytest.raises(ValueError):
        FakeModel().stalls(-1)
    with pytest.raises(ValueError):
        FakeModel().turn(chunk_delay_seconds=-0.1)
    with pytest.raises(ValueError):
        FakeModel().aborts_mid_token("x", chunk_delay_seconds=-0.1)


async def test_chunk_delay_is_applied_before_every_delta() -> None:
    model = FakeModel().turn(text="one two three", chunk_delay_seconds=0.03)
    started = time.monotonic()
    events = await _collect(model.stream(_request()))
    assert len(events) == 4
    assert time.monotonic() - started >= 3 * 0.03


async def test_nothing_sleeps_unless_a_delay_was_scripted(monkeypatch: pytest.MonkeyPatch) -> None:
    async def no_sleep(delay: float) -> None:
        raise AssertionError(f"unexpected sleep({delay})")

    monkeypatch.setattr("psych_runtime.testing.fake_model.asyncio.sleep", no_sleep)
    model = (
        FakeModel()
        .turn(text="a b c", reasoning="r", tool_calls=[("x", {"k": "value"})])
        .aborts_mid_token("half")
    )
    assert len(await _collect(model.stream(_request()))) > 5
    assert len(await _collect(model.stream(_request()))) == 1


async def test_abort_mid_token_ends_without_completion() -> None:
    model = FakeModel().aborts_mid_token("The answer is 4").aborts_mid_token()
    events = await _collect(model.stream(_request()))
    assert all(isinstance(event, TextDelta) for event in events)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "The answer is 4"
    assert await _collect(model.stream(_request())) == []


async def test_transient_failure_carries_status_and_retry_after() -> None:
    model = (
        FakeModel().raises_transient().raises_transient(429, message="slow down", retry_after=2.5)
    )
    stream = model.stream(_request())
    assert len(model.requests) == 1  # recorded before the error surfaces
    with pytest.raises(FakeTransientFailure) as info:
        await _collect(stream)
    assert isinstance(info.value, TransientModelError)
    assert info.value.transient
    assert info.value.status_code == 503
    assert info.value.kind == "http_503"
    assert info.value.retry_after is None
    with pytest.raises(FakeTransientFailure) as second:
        await _collect(model.stream(_request()))
    assert second.value.status_code == 429
    assert second.value.kind == "http_429"
    assert second.value.retry_after == 2.5
    assert str(second.value) == "slow down"


async def test_permanent_failure_is_not_transient() -> None:
    model = FakeModel().raises_permanent().raises_permanent(401, message="bad key")
    with pytest.raises(FakePermanentFailure) as info:
        await _collect(model.stream(_request()))
    assert isinstance(info.value, ModelError)
    assert not isinstance(info.value, TransientModelError)
    assert not info.value.transient
    assert (info.value.status_code, info.value.kind) == (400, "http_400")
    with pytest.raises(FakePermanentFailure) as second:
        await _collect(model.stream(_request()))
    assert (second.value.status_code, second.value.kind) == (401, "http_401")
    assert str(second.value) == "bad key"


async def test_overflow_raises_context_overflow() -> None:
    model = FakeModel().raises_overflow().raises_overflow(message="too long!")
    with pytest.raises(ContextOverflow) as info:
        await _collect(model.stream(_request()))
    assert info.value.kind == "context_overflow"
    assert not info.value.transient
    with pytest.raises(ContextOverflow, match="too long!"):
        await _collect(model.stream(_request()))


async def test_each_scripted_failure_raises_a_fresh_exception() -> None:
    model = FakeModel().raises_transient().raises_transient()
    raised: list[BaseException] = []
    for _ in range(2):
        with pytest.raises(FakeTransientFailure) as info:
            await _collect(model.stream(_request()))
        raised.append(info.value)
    assert raised[0] is not raised[1]


async def test_the_quickstart_script_runs() -> None:
    model = FakeModel().turn(text="A1 has shipped.")
    assert await model.known_models() == frozenset()
    events = await _collect(model.stream(_request(model="gpt-4o")))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "A1 has shipped."
