"""Subagents in detail, on the in-memory store: refusals, edges and crash points.

The every-store scenarios live in ``tests/e2e/test_subagents_every_store.py``; these
cover the rules one by one, each through a real Worker and the public API.
"""

import asyncio
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from psych_contract.subagents import FINDER
from psych_contract.subagents import lead_spawning_the_finder
from psych_runtime import AgentSpec
from psych_runtime import InMemoryStore
from psych_runtime import Limits
from psych_runtime import TerminalState
from psych_runtime import ToolContext
from psych_runtime import report
from psych_runtime.models import StaticPriceTable
from psych_runtime.records import Record
from psych_runtime.spec import SpawnEnvelope
from psych_runtime.spec import SubagentRef
from psych_runtime.spec import SuspensionPolicy
from psych_runtime.testing import FakeModel
from psych_runtime.testing import ModelsByName

from .conftest import ACME
from .conftest import crash_once
from .conftest import price
from .conftest import run_once
from .conftest import tool_finishes

DESCRIPTION = "Does one careful piece of the work."


def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id} is at the depot"


async def _run(
    spec: AgentSpec,
    model: ModelsByName,
    *tools: Callable[..., Any],
    store: InMemoryStore | None = None,
) -> list[Record]:
    return (await run_once(spec, model, *(tools or (lookup,)), message="Go.", store=store)).log


def _lead(**fields: Any) -> AgentSpec:
    return AgentSpec(name="lead", model="lead-m", tools=("lookup",), **fields)


# --- roster ---------------------------------------------------------------------------


async def test_depth_is_counted_from_the_root_and_capped_by_the_delegating_spec() -> None:
    grandchild = AgentSpec(name="leaf", model="leaf-m")
    child = AgentSpec(
        name="middle",
        model="middle-m",
        limits=Limits(max_delegation_depth=1),
        subagents=(SubagentRef(name="leaf", description=DESCRIPTION, spec=grandchild),),
    )
    spec = _lead(subagents=(SubagentRef(name="middle", description=DESCRIPTION, spec=child),))
    model = ModelsByName(
        {
            "lead-m": FakeModel()
            .turn(tool_calls=[("delegate", {"agent": "middle", "task": "Ask the leaf."})])
            .turn(text="done"),
            "middle-m": FakeModel()
            .turn(tool_calls=[("delegate", {"agent": "leaf", "task": "Anything."})])
            .turn(text="the leaf is out of reach"),
        }
    )
    store = InMemoryStore()
    log = await _run(spec, model, store=store)
    [spawned] = [r for r in log if r.type == "subagent_spawned"]
    assert tool_finishes(log)[0].result["text"] == "the leaf is out of reach"
    assert spawned.delegation_depth == 1
    # The middle agent sits at depth 1; its own limit allows 1, so it may not delegate.
    middle_log = await store.read(spawned.child_run_id)
    [refused] = tool_finishes(middle_log)
    assert refused.failure.kind == "delegation_depth"


async def test_a_delegated_child_that_stops_to_ask_is_ended_and_the_parent_goes_on() -> None:
    asker = AgentSpec(
        name="asker", model="asker-m", suspension=SuspensionPolicy(may_ask_questions=True)
    )
    spec = _lead(subagents=(SubagentRef(name="asker", description=DESCRIPTION, spec=asker),))
    question = {"questions": [{"question": "Which order?"}]}
    model = ModelsByName(
        {
            "lead-m": FakeModel()
            .turn(tool_calls=[("delegate", {"agent": "asker", "task": "Find the order."})])
            .turn(text="The helper could not finish."),
            "asker-m": FakeModel().turn(tool_calls=[("ask_question", question)]),
        }
    )
    log = await _run(spec, model)
    assert log[-1].state is TerminalState.COMPLETED
    result = tool_finishes(log)[0].result
    assert result["state"] == "failed" and "cannot do" in result["error"]
    [finished] = [r for r in log if r.type == "subagent_finished"]
    assert finished.failure is not None and finished.failure.kind == "child_suspended"


async def test_unknown_roster_names_are_refused_as_data() -> None:
    clerk = AgentSpec(name="clerk", model="clerk-m")
    spec = _lead(subagents=(SubagentRef(name="clerk", description=DESCRIPTION, spec=clerk),))
    model = ModelsByName(
        {
            "lead-m": FakeModel()
            .turn(tool_calls=[("delegate", {"agent": "nobody", "task": "x"})])
            .turn(text="ok"),
        }
    )
    log = await _run(spec, model)
    [refused] = tool_finishes(log)
    assert refused.failure.kind == "invalid_arguments" and "clerk" in refused.failure.message
    assert not [r for r in log if r.type == "subagent_spawned"]


# --- composed children ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_fields", "kind", "words"),
    [
        ({"task": "too short"}, "invalid_arguments", "task"),
        ({"model": "gpt-elsewhere"}, "invalid_arguments", "finder-m"),
        ({"name": "bad name!"}, "invalid_arguments", "name"),
    ],
    ids=["brief-task", "model-outside-envelope", "bad-name"],
)
async def test_a_bad_spawn_request_is_refused_before_anything_runs(
    request_fields: dict[str, Any], kind: str, words: str
) -> None:
    model = ModelsByName(
        {
            "lead-m": FakeModel()
            .turn(tool_calls=[("spawn_subagent", FINDER | request_fields)])
            .turn(text="ok"),
        }
    )
    log = await _run(_lead(spawn=SpawnEnvelope(models=("finder-m",))), model)
    [refused] = tool_finishes(log)
    assert refused.failure.kind == kind and words in refused.failure.message
    assert not [r for r in log if r.type == "subagent_spawned"]


async def test_check_message_and_the_live_children_cap() -> None:
    twin = FINDER | {"name": "twin"}
    model = ModelsByName(
        {
            "lead-m": FakeModel()
            .turn(tool_calls=[("spawn_subagent", FINDER), ("spawn_subagent", twin)])
            .turn(tool_calls=[("check_subagent", {"name": "finder"})])
            .turn(tool_calls=[("check_subagent", {"name": "ghost"})])
            .turn(text="waiting")
            .turn(tool_calls=[("message_subagent", {"name": "finder", "message": "thanks"})])
            .turn(text="A1 is at the depot."),
            "finder-m": FakeModel()
            .turn(tool_calls=[("lookup", {"order_id": "A1"})])
            .turn(text="A1 is at the depot."),
        }
    )
    log = await _run(_lead(spawn=SpawnEnvelope(models=("finder-m",), max_alive=1)), model)
    finishes = tool_finishes(log)
    assert finishes[0].result["state"] == "running"
    assert finishes[1].failure.kind == "too_many_subagents"
    snapshot = finishes[2].result
    assert snapshot["name"] == "finder" and snapshot["state"] in ("queued", "running", "completed")
    assert finishes[3].failure.kind == "unknown_subagent"
    assert finishes[4].failure.kind == "subagent_finished"  # messaging a finished child
    assert log[-1].state is TerminalState.COMPLETED


async def test_a_failed_background_child_reaches_its_parent_as_a_failure() -> None:
    model = lead_spawning_the_finder(
        relayed="finder failed; answering myself",
        finder=FakeModel().raises_permanent(400, message="bad request"),
    )
    log = await _run(_lead(spawn=SpawnEnvelope(models=("finder-m",))), model)
    [finished] = [r for r in log if r.type == "subagent_finished"]
    assert finished.state is TerminalState.FAILED
    assert log[-1].state is TerminalState.COMPLETED
    text = str(model.routes["lead-m"].requests[-1].messages[-1])  # type: ignore[attr-defined]
    assert "Subagent finder finished (failed)" in text


async def test_a_child_ending_is_shown_after_the_turn_it_landed_in() -> None:
    # The child's ending is written while the parent's own call is still open; the
    # model must still get each call's result right after its call, and the ending
    # after that.
    store = InMemoryStore()

    async def hold(context: ToolContext) -> str:
        """Wait until the subagent has reported back."""
        async with asyncio.timeout(10):
            while not any(r.type == "subagent_finished" for r in await store.read(context.run_id)):
                await asyncio.sleep(0.01)
        return "held"

    lead_model = (
        FakeModel()
        .turn(tool_calls=[("spawn_subagent", FINDER)])
        .turn(tool_calls=[("hold", {})])
        .turn(text="all done")
    )
    model = ModelsByName(
        {"lead-m": lead_model, "finder-m": FakeModel().turn(text="A1 is at the depot.")}
    )
    spec = AgentSpec(
        name="lead",
        model="lead-m",
        tools=("lookup", "hold"),
        spawn=SpawnEnvelope(models=("finder-m",)),
    )
    log = await _run(spec, model, lookup, hold, store=store)
    assert log[-1].state is TerminalState.COMPLETED
    last = lead_model.requests[-1].messages
    roles = [m.role for m in last]
    assert roles[-3:] == ["assistant", "tool", "user"]
    assert "Subagent finder finished (completed)" in str(last[-1])


# --- crashes ----------------------------------------------------------------------------


@pytest.mark.parametrize("crash_before", ["subagent_spawned", "tool_call_finished"])
async def test_a_crash_around_a_spawn_starts_one_child(crash_before: str) -> None:
    model = lead_spawning_the_finder(relayed="A1 is at the depot.")
    store = InMemoryStore()
    spec = _lead(spawn=SpawnEnvelope(models=("finder-m",)))
    recovery = await crash_once(
        spec, model, lookup, message="Where is A1?", store=store, crash_before=crash_before
    )
    log = recovery.final_log
    assert log[-1].state is TerminalState.COMPLETED
    spawned = [r for r in log if r.type == "subagent_spawned"]
    assert len(spawned) == 1
    assert len([r for r in log if r.type == "subagent_finished"]) == 1
    children = [h for h in store._headers.values() if h.parent_run_id == log[0].run_id]
    assert len(children) == 1


@pytest.mark.parametrize("crash_before", ["subagent_spawned", "subagent_finished"])
async def test_a_crash_around_a_delegation_runs_the_child_once(crash_before: str) -> None:
    clerk = AgentSpec(name="clerk", model="clerk-m", tools=("lookup",))
    spec = _lead(subagents=(SubagentRef(name="clerk", description=DESCRIPTION, spec=clerk),))
    clerk_model = FakeModel().turn(tool_calls=[("lookup", {"order_id": "A1"})]).turn(text="depot")
    model = ModelsByName(
        {
            "lead-m": FakeModel()
            .turn(tool_calls=[("delegate", {"agent": "clerk", "task": "Where is A1?"})])
            .turn(text="At the depot."),
            "clerk-m": clerk_model,
        }
    )
    store = InMemoryStore()
    recovery = await crash_once(
        spec, model, lookup, message="Where is A1?", store=store, crash_before=crash_before
    )
    log = recovery.final_log
    assert log[-1].state is TerminalState.COMPLETED
    assert len([r for r in log if r.type == "subagent_spawned"]) == 1
    assert len([r for r in log if r.type == "subagent_finished"]) == 1
    assert len(clerk_model.requests) == 2  # the child's turns were not taken again
    full = await report(store, log[0].run_id, child_depth=1, scope=ACME)
    assert full.subtree.runs == 2 and full.subagents[0].report is not None


async def test_a_child_whose_question_expires_still_reports_its_ending() -> None:
    # The child inherits the parent's suspension policy: it may ask, but only briefly.
    policy = SuspensionPolicy(may_ask_questions=True, question_expires_seconds=0.3)
    question = {"questions": [{"question": "Which depot?"}]}
    model = lead_spawning_the_finder(
        relayed="finder gave up; A1 location unknown",
        finder=FakeModel().turn(tool_calls=[("ask_question", question)]),
    )
    log = await _run(_lead(spawn=SpawnEnvelope(models=("finder-m",)), suspension=policy), model)
    [finished] = [r for r in log if r.type == "subagent_finished"]
    assert finished.state is TerminalState.ABANDONED
    assert finished.failure is not None and finished.failure.kind == "suspension_expired"
    assert log[-1].state is TerminalState.COMPLETED


async def test_the_subtree_adds_priced_costs_and_owns_up_to_unpriced_ones() -> None:
    clerk = AgentSpec(name="clerk", model="clerk-m")
    unpriced = AgentSpec(name="guess", model="guess-m")
    spec = _lead(
        subagents=(
            SubagentRef(name="clerk", description=DESCRIPTION, spec=clerk),
            SubagentRef(name="guess", description=DESCRIPTION, spec=unpriced),
        )
    )
    usage = {"input": 1_000_000, "output": 0}
    lead_model = (
        FakeModel()
        .turn(tool_calls=[("delegate", {"agent": "clerk", "task": "t"})], usage=usage)
        .turn(tool_calls=[("delegate", {"agent": "guess", "task": "t"})], usage=usage)
        .turn(text="done", usage=usage)
    )
    model = ModelsByName(
        {
            "lead-m": lead_model,
            "clerk-m": FakeModel().turn(text="clerk", usage=usage),
            "guess-m": FakeModel().turn(text="guess", usage=usage),
        }
    )
    prices = StaticPriceTable(
        {"lead-m": price("2", "0", "0", "0"), "clerk-m": price("3", "0", "0", "0")}
    )
    store, run_id, _ = await run_once(spec, model, lookup, message="Go.", prices=prices)
    full = await report(store, run_id, scope=ACME)
    assert full.totals.cost is not None and full.totals.cost.amount == Decimal(6)
    assert full.subtree.cost is not None and full.subtree.cost.amount == Decimal(9)
    # The unpriced child's calls are counted, never added in as zero.
    assert full.subtree.unpriced_model_calls == 1 and full.subtree.cost_is_incomplete
    assert full.subtree.runs == 3 and full.subtree.complete
