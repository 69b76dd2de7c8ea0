"""Model output a Run must survive: huge streamed arguments, lone surrogates, deep nesting.

Each of these is the model's (or a tool's) mistake, so each becomes a failed call the
model reads on its next turn, never a failed Run. The same values on the durable
stores are covered in ``tests/e2e/test_hostile_values_every_store.py``.
"""

import json
from collections.abc import Callable
from typing import Any

from psych_runtime import Scope
from psych_runtime import TerminalState
from psych_runtime import ToolOutcome
from psych_runtime.records import Record
from psych_runtime.runtime.model_call import MAX_ANSWER_ARGUMENT_CHARS
from psych_runtime.runtime.model_call import MAX_TOOL_ARGUMENT_CHARS
from psych_runtime.testing import FakeModel
from psych_runtime.testing import ToolCallScript

from .conftest import code_spec
from .conftest import run_once
from .conftest import tool_finishes

# Published and dispatched in the tenant a program that names none acts for.
TENANT = Scope(tenant="default")

received: list[int] = []


async def measure(text: str) -> int:
    """Say how long the text is."""
    received.append(len(text))
    return len(text)


async def echo(value: str) -> str:
    """Hand the value back."""
    return value


async def nested(depth: int) -> list[object]:
    """Build a list nested ``depth`` levels deep."""
    value: list[object] = []
    for _ in range(depth - 1):
        value = [value]
    return value


async def complain(text: str) -> str:
    """Fail with the text in the message."""
    raise ValueError(f"cannot handle {text}")


async def _run(model: FakeModel, *tools: Callable[..., Any]) -> list[Record]:
    spec = code_spec(*(tool.__name__ for tool in tools), name="hostile")
    return (await run_once(spec, model, *tools, scope=TENANT, timeout=60)).log


def _kinds(log: list[Record]) -> list[str | None]:
    return [r.failure.kind if r.failure else None for r in tool_finishes(log)]


async def test_an_oversize_argument_streamed_in_tiny_deltas_fails_only_its_call() -> None:
    # Over a quarter of a million characters in four-character deltas: assembled in
    # linear time, refused as data, and the Run carries on to its answer.
    oversize = '{"text": "' + "a" * MAX_TOOL_ARGUMENT_CHARS + '"}'
    model = (
        FakeModel()
        .turn(tool_calls=[ToolCallScript("measure", raw_arguments=oversize, fragment_chars=4)])
        .turn(text="Too much at once.")
    )
    received.clear()
    log = await _run(model, measure)
    assert log[-1].type == "run_settled" and log[-1].state is TerminalState.COMPLETED
    (finished,) = tool_finishes(log)
    assert finished.outcome is ToolOutcome.ERROR
    assert finished.failure is not None and finished.failure.kind == "malformed_arguments"
    assert str(MAX_TOOL_ARGUMENT_CHARS) in finished.failure.message
    (started,) = [r for r in log if r.type == "tool_call_started"]
    assert started.arguments == {}
    assert received == []
    told = [m for m in model.requests[1].messages if m.role == "tool"]
    assert len(told) == 1 and str(MAX_TOOL_ARGUMENT_CHARS) in told[0].content


async def test_an_argument_just_under_the_cap_reaches_the_tool_whole() -> None:
    size = MAX_TOOL_ARGUMENT_CHARS - len('{"text":""}')
    model = (
        FakeModel()
        .turn(
            tool_calls=[ToolCallScript("measure", arguments={"text": "b" * size}, fragment_chars=4)]
        )
        .turn(text="Measured.")
    )
    received.clear()
    log = await _run(model, measure)
    assert log[-1].type == "run_settled" and log[-1].state is TerminalState.COMPLETED
    assert _kinds(log) == [None]
    assert received == [size]


async def test_calls_beyond_the_answers_argument_budget_fail_and_the_others_run() -> None:
    each = MAX_TOOL_ARGUMENT_CHARS - 100
    fit = MAX_ANSWER_ARGUMENT_CHARS // (each + 20)
    calls = [
        ToolCallScript("measure", arguments={"text": str(i) * each}, fragment_chars=4096)
        for i in range(fit + 1)
    ]
    model = FakeModel().turn(tool_calls=calls).turn(text="Some were too much.")
    received.clear()
    log = await _run(model, measure)
    assert log[-1].type == "run_settled" and log[-1].state is TerminalState.COMPLETED
    assert _kinds(log) == [None] * fit + ["malformed_arguments"]
    last = tool_finishes(log)[-1].failure
    assert last is not None and str(MAX_ANSWER_ARGUMENT_CHARS) in last.message
    assert received == [each] * fit


async def test_lone_surrogates_in_model_text_become_replacement_characters() -> None:
    # A pair split across two deltas is joined back into its character; a lone half
    # has none to stand for and becomes U+FFFD, the rest of the text kept.
    model = (
        FakeModel()
        .turn(text=["Thinking \ud800", " about it."], tool_calls=[("echo", {"value": "x"})])
        .turn(text=["Done \ud83d", "\ude00 ok \udfff"])
    )
    log = await _run(model, echo)
    assert log[-1].type == "run_settled" and log[-1].state is TerminalState.COMPLETED
    assert log[-1].output == {"text": "Done \U0001f600 ok \ufffd"}
    texts = [r.text for r in log if r.type == "model_call_finished"]
    assert texts[0] == "Thinking \ufffd about it."


async def test_unstorable_arguments_are_malformed_and_the_run_goes_on() -> None:
    deep = '{"value": ' + "[" * 5_000 + "]" * 5_000 + "}"
    middling = '{"value": ' + "[" * 100 + "]" * 100 + "}"
    model = (
        FakeModel()
        .turn(
            tool_calls=[
                ToolCallScript("echo", raw_arguments='{"value": "bad \ud800 half"}'),
                ToolCallScript("echo", raw_arguments='{"value": "bad \\ud800 half"}'),
                ToolCallScript("echo", raw_arguments='{"bad \\udc00 key": "x"}'),
                ToolCallScript("echo", raw_arguments=deep),
                ToolCallScript("echo", raw_arguments=middling),
                ToolCallScript("echo", raw_arguments='{"value": "fine \\ud83d\\ude00"}'),
            ]
        )
        .turn(text="Some arguments were unusable.")
    )
    log = await _run(model, echo)
    assert log[-1].type == "run_settled" and log[-1].state is TerminalState.COMPLETED
    assert _kinds(log) == ["malformed_arguments"] * 5 + [None]
    assert tool_finishes(log)[-1].result == "fine \U0001f600"
    started = [r for r in log if r.type == "tool_call_started"]
    assert [r.arguments for r in started[:5]] == [{}] * 5
    told = [m.content for m in model.requests[1].messages if m.role == "tool"]
    assert "surrogate" in told[0] and "surrogate" in told[1] and "surrogate" in told[2]
    assert "deeper" in told[3] and "deeper" in told[4]


async def test_an_unstorable_result_fails_its_call_as_data() -> None:
    model = (
        FakeModel()
        .turn(
            tool_calls=[
                ("echo", {"value": "x"}),
                ("nested", {"depth": 5_000}),
                ("nested", {"depth": 100}),
                ("nested", {"depth": 10}),
                ("complain", {"text": "y"}),
            ]
        )
        .turn(text="Some results could not be kept.")
    )

    async def echo(value: str) -> str:
        """Answer with a lone surrogate."""
        return f"{value} \udbff"

    async def complain(text: str) -> str:
        """Fail with a lone surrogate in the message."""
        raise ValueError(f"cannot handle {text} \udc80")

    log = await _run(model, echo, nested, complain)
    assert log[-1].type == "run_settled" and log[-1].state is TerminalState.COMPLETED
    # Nesting the serialiser itself refuses is not JSON data at all; nesting it takes
    # but a store could not is refused before it reaches one.
    assert _kinds(log) == [
        "unstorable_result", "invalid_result", "unstorable_result", None, "ValueError",
    ]  # fmt: skip
    finished = tool_finishes(log)
    assert finished[0].failure is not None and "surrogate" in finished[0].failure.message
    assert finished[1].failure is not None and "depth" in finished[1].failure.message
    assert finished[2].failure is not None and "deeper" in finished[2].failure.message
    assert json.dumps(finished[3].result) == "[" * 10 + "]" * 10
    assert finished[4].failure is not None
    assert finished[4].failure.message == "cannot handle y \ufffd"
    assert finished[4].failure.traceback is not None
    assert "\ufffd" in finished[4].failure.traceback
