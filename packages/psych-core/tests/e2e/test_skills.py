"""Skills end to end: listed in the prompt, bodies loaded only through ``load_skill``.

Every Run goes through a real Worker and Runtime with the FakeModel and the in-memory
Store; the assertions read the log and what the model was sent.
"""

from typing import Any

import pytest

from psych_runtime import AgentSpec
from psych_runtime import InMemoryStore
from psych_runtime import ModelRef
from psych_runtime import SpecValidationError
from psych_runtime import TerminalState
from psych_runtime import ToolOutcome
from psych_runtime import publish
from psych_runtime.records import Record
from psych_runtime.spec import Skill
from psych_runtime.testing import FakeModel
from psych_runtime.testing import ToolCallScript

from .conftest import ACME
from .conftest import crash_once
from .conftest import finish_of
from .conftest import run_once
from .conftest import tool_call

REFUNDS = Skill(
    name="refunds",
    description="How to decide and issue a refund.",
    body="Refund only within 30 days. Check [[skill:tone]] before replying.",
)
TONE = Skill(name="tone", description="How replies should sound.", body="Warm, brief, no jargon.")


def _spec(**fields: Any) -> AgentSpec:
    defaults: dict[str, Any] = {"instructions": "Help with orders.", "skills": (REFUNDS, TONE)}
    return AgentSpec(name="support", model=ModelRef(model="fake-standard"), **(defaults | fields))


def _load(call_id: str, **arguments: Any) -> ToolCallScript:
    return tool_call("load_skill", call_id, **arguments)


async def _run(spec: AgentSpec, model: FakeModel) -> list[Record]:
    return (await run_once(spec, model, message="Can I get my money back?")).log


async def test_skills_are_listed_and_their_bodies_load_only_on_demand() -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[_load("first", name="refunds")])
        .turn(tool_calls=[_load("again", name="refunds"), _load("other", name="tone")])
        .turn(text="Yes, within 30 days.")
    )
    log = await _run(_spec(), model)

    assert log[-1].type == "run_settled" and log[-1].state is TerminalState.COMPLETED
    first_prompt = next(r for r in log if r.type == "model_call_started").system_prompt
    assert "- refunds: How to decide and issue a refund." in first_prompt
    assert "- tone: How replies should sound." in first_prompt
    assert "Refund only within 30 days" not in first_prompt
    [offered] = [t for t in model.requests[0].tools if t.name == "load_skill"]
    assert offered.input_schema["properties"]["name"]["enum"] == ["refunds", "tone"]
    loaded = finish_of(log, "first")
    assert loaded.outcome is ToolOutcome.OK
    assert loaded.result == {
        "skill": "refunds",
        "instructions": REFUNDS.body,
        "linked_skills": ["tone"],  # the [[skill:tone]] link in the body
    }
    again = finish_of(log, "again").result
    assert again["already_loaded"] is True and again["first_loaded_on_turn"] == 1
    assert again["instructions"] == REFUNDS.body
    assert "already_loaded" not in finish_of(log, "other").result
    assert "linked_skills" not in finish_of(log, "other").result  # tone links nowhere
    tool_messages = (m.content for m in model.requests[1].messages if m.role == "tool")
    assert REFUNDS.body in next(tool_messages)


async def test_an_unknown_skill_is_a_failed_call_the_model_can_correct() -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[_load("wrong", name="shipping")])
        .turn(tool_calls=[_load("right", name="tone")])
        .turn(text="done")
    )
    log = await _run(_spec(), model)

    wrong = finish_of(log, "wrong")
    assert wrong.outcome is ToolOutcome.ERROR
    assert wrong.failure.kind == "invalid_arguments"
    assert "refunds, tone" in wrong.failure.message
    assert finish_of(log, "right").outcome is ToolOutcome.OK


async def test_a_spec_without_skills_offers_no_loader_and_lists_none() -> None:
    model = FakeModel().turn(text="hello")
    log = await _run(AgentSpec(name="plain", model=ModelRef(model="fake-standard")), model)

    assert "load_skill" not in {t.name for t in model.requests[0].tools}
    prompt = next(r for r in log if r.type == "model_call_started").system_prompt
    assert "Skills you can load" not in prompt


async def test_a_broken_skill_link_is_refused_at_publish() -> None:
    broken = _spec(instructions="Start with [[skill:shipping]].")
    with pytest.raises(SpecValidationError) as caught:
        await publish(InMemoryStore(), broken, scope=ACME)
    assert [issue.path for issue in caught.value.issues] == ["instructions"]


async def test_a_skill_load_left_in_doubt_by_a_crash_is_simply_run_again() -> None:
    model = FakeModel().turn(tool_calls=[_load("first", name="tone")]).turn(text="ok")
    recovery = await crash_once(_spec(), model, message="hi", crash_before="tool_call_finished")
    finished = finish_of(recovery.final_log, "first")
    assert finished.outcome is ToolOutcome.OK
    assert finished.result == {"skill": "tone", "instructions": TONE.body}
