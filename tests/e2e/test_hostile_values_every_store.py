"""Values no store can keep, from the model or a tool, fail a call and never a Run.

A lone surrogate has no UTF-8 form and a value nested thousands deep breaks the
serialiser; the in-memory store would hold either, the durable ones cannot. The agent
loop turns each into a failed call the model reads (or, in the model's own text, a
replacement character), so the Run completes with the same log on every store.
"""

import pytest

import psych_runtime
from psych_runtime.testing import FakeModel
from psych_runtime.testing import ToolCallScript

from .conftest import DURABLE
from .conftest import EVERY

ACME = psych_runtime.Scope(tenant="acme")

_DEEP = "[" * 5_000 + "]" * 5_000


async def echo(value: str) -> str:
    """Hand the value back."""
    return value


async def half(value: str) -> str:
    """Answer with half of a surrogate pair."""
    return f"{value} \ud83d"


async def complain(text: str) -> str:
    """Fail, quoting half of a surrogate pair."""
    raise ValueError(f"cannot handle {text} \ude00")


def _model() -> FakeModel:
    return (
        FakeModel()
        .turn(
            text=["Checking \ud800", " now."],
            tool_calls=[
                ToolCallScript("echo", raw_arguments='{"value": "raw \ud800"}'),
                ToolCallScript("echo", raw_arguments='{"value": "escaped \\ud800"}'),
                ToolCallScript("echo", raw_arguments='{"value": ' + _DEEP + "}"),
                ("half", {"value": "x"}),
                ("complain", {"text": "y"}),
                ("echo", {"value": "fine \U0001f600"}),
            ],
        )
        .turn(text="Done \udfff.")
    )


_VOLATILE = {"run_id", "at", "attempt_id", "worker_id", "deadline_at", "timings", "trace_context"}


def _normalised(log: list[psych_runtime.records.Record]) -> list[dict[str, object]]:
    out = []
    for record in log:
        data = record.model_dump(mode="json")
        for key in (*_VOLATILE, "duration_seconds"):
            data.pop(key, None)
        if isinstance(data.get("failure"), dict):
            data["failure"].pop("traceback", None)  # paths and line numbers differ
        out.append(data)
    return out


async def _run_on(url: str) -> list[psych_runtime.records.Record]:
    store = await psych_runtime.open_store(url)
    spec = psych_runtime.AgentSpec(
        name="hostile",
        model=psych_runtime.ModelRef(model="fake-standard"),
        tools=tuple(psych_runtime.CodeTool(name=n) for n in ("echo", "half", "complain")),
    )
    try:
        async with psych_runtime.session(
            _model(), tools=[echo, half, complain], store=store, scope=ACME
        ) as s:
            reply = await s.ask(spec, "go", timeout=60)
            return await psych_runtime.read_log(s.store, reply.run_id, scope=ACME)
    finally:
        await store.close()


@pytest.mark.slow
async def test_unstorable_values_fail_calls_alike_on_every_store(store_url_for: object) -> None:
    logs = {kind: await _run_on(await store_url_for(kind)) for kind in EVERY}  # type: ignore[operator]
    reference = logs["memory"]
    settled = reference[-1]
    assert settled.type == "run_settled"
    assert settled.state is psych_runtime.TerminalState.COMPLETED
    assert settled.output == {"text": "Done \ufffd."}
    finished = [r for r in reference if r.type == "tool_call_finished"]
    assert [r.failure.kind if r.failure else None for r in finished] == [
        "malformed_arguments",
        "malformed_arguments",
        "malformed_arguments",
        "unstorable_result",
        "ValueError",
        None,
    ]
    assert finished[-1].result == "fine \U0001f600"
    assert finished[4].failure is not None
    assert finished[4].failure.message == "cannot handle y \ufffd"
    answers = [r.text for r in reference if r.type == "model_call_finished"]
    assert answers == ["Checking \ufffd now.", "Done \ufffd."]
    for kind in DURABLE:
        assert _normalised(logs[kind]) == _normalised(reference), kind
