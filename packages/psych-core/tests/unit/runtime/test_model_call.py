"""Assembling one model answer: bounded, fair to the event loop, and always storable."""

import asyncio

from psych_runtime.core.messages import UserMessage
from psych_runtime.core.storable import unstorable
from psych_runtime.model.port import ModelRequest
from psych_runtime.runtime.model_call import MAX_TOOL_ARGUMENT_CHARS
from psych_runtime.runtime.model_call import call_model
from psych_runtime.runtime.model_call import replace_lone_surrogates
from psych_runtime.testing.fake_model import FakeModel
from psych_runtime.testing.fake_model import ToolCallScript

REQUEST = ModelRequest(model="fake", messages=(UserMessage(content="hi"),))


async def test_a_stream_that_never_waits_still_lets_other_tasks_run() -> None:
    # The fake never suspends between deltas, like a client reading buffered data. A
    # task standing in for the Worker's heartbeat must get the loop while it streams.
    raw = '{"text": "' + "a" * 40_000 + '"}'
    model = FakeModel().turn(tool_calls=[ToolCallScript("t", raw_arguments=raw, fragment_chars=1)])
    ticks = 0
    streaming = True

    async def heartbeat() -> None:
        nonlocal ticks
        while streaming:
            ticks += 1
            await asyncio.sleep(0)

    beating = asyncio.create_task(heartbeat())
    await asyncio.sleep(0)
    ticks = 0
    answer = await call_model(model, REQUEST)
    streaming = False
    await beating
    assert answer.calls[0].arguments == raw
    # One turn of the loop at least every few hundred of the 40,000 deltas.
    assert ticks >= 40


async def test_an_oversize_call_keeps_no_arguments_and_says_why() -> None:
    raw = "x" * (MAX_TOOL_ARGUMENT_CHARS + 1)
    model = FakeModel().turn(
        tool_calls=[
            ToolCallScript("big", raw_arguments=raw, fragment_chars=1000),
            ToolCallScript("small", raw_arguments='{"a": 1}'),
        ]
    )
    answer = await call_model(model, REQUEST)
    big, small = answer.calls
    assert big.name == "big" and big.arguments == ""
    assert big.refusal is not None and str(MAX_TOOL_ARGUMENT_CHARS + 1) in big.refusal
    assert small.arguments == '{"a": 1}' and small.refusal is None


async def test_text_reasoning_and_names_come_out_storable() -> None:
    model = FakeModel().turn(
        text=["a\ud83d", "\ude00b\ud800"],
        reasoning=["\udc00why"],
        tool_calls=[ToolCallScript("bad\ud800name", raw_arguments='{"k": "\ud800"}')],
    )
    answer = await call_model(model, REQUEST)
    assert answer.text == "a\U0001f600b\ufffd"
    assert answer.reasoning == "\ufffdwhy"
    assert answer.calls[0].name == "bad\ufffdname"
    # Argument text is left for the agent loop to refuse, not quietly changed.
    assert answer.calls[0].arguments == '{"k": "\ud800"}'
    assert unstorable([answer.text, answer.reasoning, answer.calls[0].name]) is None


def test_replace_lone_surrogates_joins_pairs_and_replaces_halves() -> None:
    assert replace_lone_surrogates("plain") == "plain"
    assert replace_lone_surrogates("\ud83d\ude00") == "\U0001f600"
    assert replace_lone_surrogates("\ude00\ud83d") == "\ufffd\ufffd"
    assert replace_lone_surrogates("x\udfffy") == "x\ufffdy"
