"""``subagent_calls.py``: the caps and lookups ``delegate`` and the spawning built-ins share."""

import pytest

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.reducer import reduce
from psych_runtime.core.spec import Limits
from psych_runtime.core.state import RunStateView
from psych_runtime.runtime.agent.subagent_calls import SubagentRefused
from psych_runtime.runtime.agent.subagent_calls import alive
from psych_runtime.runtime.agent.subagent_calls import check_depth
from psych_runtime.runtime.agent.subagent_calls import check_fanout
from psych_runtime.runtime.agent.subagent_calls import child_input
from psych_runtime.runtime.agent.subagent_calls import child_of_call
from psych_runtime.runtime.agent.subagent_calls import named_child
from psych_runtime.runtime.agent.subagent_calls import stored_version
from psych_runtime.testing import LogBuilder

from .conftest import agent
from .conftest import open_attempt
from .conftest import started
from .conftest import tool_turn


def _state(log: LogBuilder) -> RunStateView:
    return reduce(log.build())


def test_a_child_deeper_than_the_cap_is_refused() -> None:
    state = _state(LogBuilder().admitted(delegation_depth=2).attempt())
    check_depth(state, 3)
    with pytest.raises(SubagentRefused) as refused:
        check_depth(state, 2)
    assert refused.value.kind == "delegation_depth"
    assert "3 levels deep, but at most 2" in str(refused.value)


def _spawning(*calls: tuple[str, str]) -> LogBuilder:
    """One turn in which each ``(call_id, child_run_id)`` delegated and got its child."""
    log = tool_turn(started(), *(call_id for call_id, _ in calls))
    for call_id, child in calls:
        log.tool_started(call_id, tool="delegate")
        log.spawned(child, name=f"n_{child}", call_id=call_id)
    return log


async def test_fanout_counts_the_children_started_earlier_in_this_turn() -> None:
    spec = agent(limits=Limits(max_fanout_per_turn=2))
    attempt = await open_attempt(_spawning(("d1", "run_a")), spec=spec)
    check_fanout(attempt.ctx, ToolCallId("d2"))

    attempt = await open_attempt(_spawning(("d1", "run_a"), ("d2", "run_b")), spec=spec)
    # The call that started a child does not count against itself when retried.
    check_fanout(attempt.ctx, ToolCallId("d2"))
    with pytest.raises(SubagentRefused) as refused:
        check_fanout(attempt.ctx, ToolCallId("d3"))
    assert refused.value.kind == "fanout_exceeded"


async def test_children_of_earlier_turns_do_not_count_towards_this_turns_fanout() -> None:
    log = _spawning(("d1", "run_a"), ("d2", "run_b"))
    for call_id in ("d1", "d2"):
        log.tool_finished(call_id)
    tool_turn(log, "d3")
    attempt = await open_attempt(log, spec=agent(limits=Limits(max_fanout_per_turn=2)))
    check_fanout(attempt.ctx, ToolCallId("d3"))


def test_a_childs_input_is_its_task_and_its_parents_end_user() -> None:
    plain = _state(started())
    assert child_input(plain, "Find A1.") == {"message": "Find A1."}
    named = _state(LogBuilder().admitted(input={"end_user_id": "ann", "x": 1}).attempt())
    assert child_input(named, "Find A1.") == {"message": "Find A1.", "end_user_id": "ann"}


def test_a_child_is_found_by_the_call_that_started_it_and_by_its_name() -> None:
    log = _spawning(("d1", "run_a"), ("d2", "run_b"))
    log.child_finished("run_a", name="n_run_a")
    log.spawned("run_c", name="n_run_a", call_id="d3")  # the name is free again
    state = _state(log)
    child = child_of_call(state, ToolCallId("d2"))
    assert child is not None and child.run_id == "run_b"
    assert child_of_call(state, ToolCallId("d9")) is None
    assert named_child(state, "n_run_a").run_id == "run_c"  # the most recent one
    assert not alive(state, "run_a") and alive(state, "run_c") and not alive(state, "run_z")


def test_an_unknown_name_is_refused_naming_the_children_there_are() -> None:
    state = _state(_spawning(("d1", "run_a")))
    with pytest.raises(SubagentRefused) as refused:
        named_child(state, "ghost")
    assert refused.value.kind == "unknown_subagent"
    assert str(refused.value) == "no subagent is named 'ghost'; started: n_run_a"
    with pytest.raises(SubagentRefused, match="started: none"):
        named_child(_state(started()), "ghost")


async def test_a_childs_spec_is_published_for_the_runs_tenant_once() -> None:
    attempt = await open_attempt()
    child = agent(instructions="Research orders.")
    first = await stored_version(attempt.ctx, child)
    again = await stored_version(attempt.ctx, child)
    assert first.hash == again.hash and first.published_at == again.published_at
    assert await attempt.store.get_version(first.hash, tenant="acme") is not None
    assert await attempt.store.get_version(first.hash, tenant="other") is None
