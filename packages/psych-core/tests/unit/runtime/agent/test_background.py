"""``background.py``: composed children that run on their own, and waiting on them."""

from collections.abc import Sequence
from typing import Any

import pytest

from psych_runtime.core.ids import AttemptId
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.ids import WorkerId
from psych_runtime.core.records import AttemptStarted
from psych_runtime.core.records import QueueKind
from psych_runtime.core.records import Record
from psych_runtime.core.records import Resumed
from psych_runtime.core.records import SubagentFinished
from psych_runtime.core.records import SubagentMessaged
from psych_runtime.core.records import SubagentSpawned
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import TerminalState
from psych_runtime.core.spec import SpawnEnvelope
from psych_runtime.runtime.agent.background import check_child
from psych_runtime.runtime.agent.background import message_child
from psych_runtime.runtime.agent.background import spawn_child
from psych_runtime.runtime.agent.background import wait_for_children
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.subagent_calls import SubagentRefused
from psych_runtime.runtime.children import WOKEN_BY_CHILDREN
from psych_runtime.runtime.children import report_to_parent
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.journal import Journal
from psych_runtime.runtime.settlement import Ending
from psych_runtime.runtime.settlement import settle
from psych_runtime.store.memory import InMemoryStore
from psych_runtime.store.port import RunState
from psych_runtime.store.port import Store
from psych_runtime.testing import ForwardingStore
from psych_runtime.testing import LogBuilder
from psych_runtime.tools.subagents import SPAWN_SUBAGENT

from .conftest import Attempt
from .conftest import agent
from .conftest import open_attempt
from .conftest import started
from .conftest import tool_turn

SPAWNING = agent(tools=(), spawn=SpawnEnvelope(max_alive=2, max_depth=2))


def _request(name: str = "scout") -> dict[str, Any]:
    return {
        "name": name,
        "purpose": "Find out what happened to order A1.",
        "task": "Look up order A1 and report when it shipped and to which address.",
        "deliverable": "The ship date and the address.",
    }


async def _parent(
    log: LogBuilder | None = None, store: Store | None = None, **spec: Any
) -> Attempt:
    log = tool_turn(log if log is not None else started(), "s1", "s2", "s3")
    for call_id in ("s1", "s2", "s3"):
        log.tool_started(call_id, tool=SPAWN_SUBAGENT)
    chosen = SPAWNING.model_copy(update=spec) if spec else SPAWNING
    return await open_attempt(log, spec=chosen, store=store)


async def _spawn(attempt: Attempt, call_id: str = "s1", name: str = "scout") -> RunId:
    result = await spawn_child(attempt.ctx, ToolCallId(call_id), _request(name))
    assert result["state"] == "running"
    return RunId(result["run_id"])


async def _settle_child(store: Store, child_id: RunId, text: str = "Shipped Monday.") -> None:
    """Run the child to completion as a Worker would, without telling its parent."""
    worker = WorkerId("wrk_child")
    while (claimed := await store.claim(worker, utcnow(), 60)) is not None:
        if claimed.run_id == child_id:
            break
    assert claimed is not None
    journal = await Journal.open(store, child_id, attempt_id=AttemptId("att_child"))
    journal.stage(AttemptStarted, worker_id=worker, attempt_number=1)
    settle(journal, Ending(TerminalState.COMPLETED, output={"text": text}))
    await journal.flush()
    await store.release(child_id, worker, RunState.SETTLED)


# --- spawn -----------------------------------------------------------------------------


async def test_a_spawned_child_is_known_to_the_parent_before_any_worker_may_run_it() -> None:
    attempt = await _parent()
    child_id = await _spawn(attempt)
    (spawned,) = attempt.new(SubagentSpawned)
    assert (spawned.child_run_id, spawned.name, spawned.call_id) == (child_id, "scout", "s1")
    assert spawned.background and spawned.delegation_depth == 1
    assert "subagent_spawned" in [r.type for r in await attempt.durable()]
    header = await attempt.store.get_run(child_id)
    assert header is not None and header.state is RunState.RUNNABLE
    assert header.runnable_at is None and header.parent_run_id == attempt.journal.run_id
    (admitted,) = await attempt.store.read(child_id)
    assert admitted.type == "run_admitted" and str(admitted.input["message"]).startswith("Look up")


async def test_a_retried_spawn_frees_the_child_it_started_instead_of_another() -> None:
    attempt = await _parent()
    child_id = await _spawn(attempt)
    await attempt.store.set_runnable_at(child_id, utcnow().replace(year=2099))
    again = await spawn_child(attempt.ctx, ToolCallId("s1"), _request())
    assert again == {"name": "scout", "run_id": child_id, "state": "running"}
    assert len(attempt.new(SubagentSpawned)) == 1
    header = await attempt.store.get_run(child_id)
    assert header is not None and header.runnable_at is None


async def test_no_more_children_than_the_envelope_allows_may_work_at_once() -> None:
    attempt = await _parent()
    await _spawn(attempt, "s1", "one")
    await _spawn(attempt, "s2", "two")
    with pytest.raises(SubagentRefused) as refused:
        await spawn_child(attempt.ctx, ToolCallId("s3"), _request("three"))
    assert refused.value.kind == "too_many_subagents"


async def test_a_name_a_running_child_has_is_refused() -> None:
    attempt = await _parent()
    await _spawn(attempt, "s1", "scout")
    with pytest.raises(SubagentRefused) as refused:
        await spawn_child(attempt.ctx, ToolCallId("s2"), _request("scout"))
    assert refused.value.kind == "name_taken"


async def test_a_spawn_below_the_envelopes_depth_is_refused() -> None:
    attempt = await _parent(LogBuilder().admitted(delegation_depth=2).attempt())
    with pytest.raises(SubagentRefused) as refused:
        await spawn_child(attempt.ctx, ToolCallId("s1"), _request())
    assert refused.value.kind == "delegation_depth"
    assert attempt.new() == []


# --- check and message -----------------------------------------------------------------


async def test_checking_a_child_reads_its_own_log() -> None:
    attempt = await _parent()
    child_id = await _spawn(attempt)
    snapshot = await check_child(attempt.ctx, {"name": "scout"})
    assert snapshot == {
        "name": "scout",
        "run_id": child_id,
        "state": "queued",
        "turns": 0,
        "tool_calls": 0,
        "latest_text": "",
    }
    await _settle_child(attempt.store, child_id)
    snapshot = await check_child(attempt.ctx, {"name": "scout"})
    assert snapshot["state"] == "completed" and snapshot["output"] == {"text": "Shipped Monday."}


async def test_a_message_is_queued_into_the_childs_log_as_a_steer_and_recorded() -> None:
    attempt = await _parent()
    child_id = await _spawn(attempt)
    sent = await message_child(
        attempt.ctx, ToolCallId("s2"), {"name": "scout", "message": "Check B2 too."}
    )
    assert sent == {"name": "scout", "delivered": True}
    steer = (await attempt.store.read(child_id))[-1]
    assert steer.type == "queue_enqueued" and steer.queue is QueueKind.STEER
    assert steer.payload == {"message": "Check B2 too."}
    (messaged,) = attempt.new(SubagentMessaged)
    assert (messaged.child_run_id, messaged.entry_id) == (child_id, steer.entry_id)


async def test_a_child_that_finished_takes_no_more_messages() -> None:
    attempt = await _parent()
    child_id = await _spawn(attempt)
    await _settle_child(attempt.store, child_id)
    with pytest.raises(SubagentRefused) as refused:
        await message_child(attempt.ctx, ToolCallId("s2"), {"name": "scout", "message": "Hi."})
    assert refused.value.kind == "subagent_finished"
    assert "has just finished" in str(refused.value)


# --- waiting for children --------------------------------------------------------------


async def test_an_answer_with_no_child_at_work_stands() -> None:
    attempt = await _parent()
    assert await wait_for_children(attempt.ctx) is None
    assert attempt.new() == []


async def test_an_answer_while_a_child_works_suspends_the_run_on_its_children() -> None:
    attempt = await _parent()
    await _spawn(attempt)
    attempt.mark()
    assert await wait_for_children(attempt.ctx) is Next.STOP
    assert attempt.state.suspended and attempt.state.suspend_reason is SuspendReason.CHILDREN
    assert [r.type for r in await attempt.durable()] == ["suspended"]


async def test_children_that_settled_unreported_are_collected_and_the_run_goes_on() -> None:
    attempt = await _parent()
    child_id = await _spawn(attempt)
    await _settle_child(attempt.store, child_id)
    attempt.mark()
    assert await wait_for_children(attempt.ctx) is Next.CONTINUE
    (finished,) = attempt.new(SubagentFinished)
    assert finished.child_run_id == child_id and finished.output == {"text": "Shipped Monday."}
    assert not attempt.state.suspended


class SettlesOnSuspension(ForwardingStore):
    """Settles a child, and reports it to its parent, as the parent's suspension is written.

    ``before`` reports it just before the suspension lands (the parent's append then
    conflicts and is written after the child's ending), otherwise just after it.
    """

    def __init__(self, inner: InMemoryStore, *, before: bool) -> None:
        super().__init__(inner)
        self.before = before
        self.child: RunId | None = None

    async def before_append(self, run_id: RunId, records: Sequence[Record]) -> None:
        if self.before and any(r.type == "suspended" for r in records):
            await self._report()

    async def after_append(self, run_id: RunId, records: Sequence[Record]) -> None:
        if not self.before and any(r.type == "suspended" for r in records):
            await self._report()

    async def _report(self) -> None:
        if self.child is None:
            return
        child, self.child = self.child, None
        await _settle_child(self.inner, child)
        state = (await Journal.open(self.inner, child)).state
        assert await report_to_parent(self.inner, state)


@pytest.mark.parametrize(
    ("before", "expected", "woken_by_the_child"),
    [
        # The child's report found the parent suspended and woke it itself.
        pytest.param(
            False,
            ["suspended", "subagent_finished", "resumed"],
            True,
            id="the-child-reports-while-the-parent-suspends",
        ),
        # The report landed first; the suspension then went in after it, so this
        # Attempt stages the wake-up itself.
        pytest.param(
            True,
            ["subagent_finished", "suspended", "resumed"],
            False,
            id="the-child-reported-just-before-the-parent-suspended",
        ),
    ],
)
async def test_a_run_whose_last_child_reports_around_its_suspension_goes_on(
    before: bool, expected: list[str], woken_by_the_child: bool
) -> None:
    store = SettlesOnSuspension(InMemoryStore(), before=before)
    attempt = await _parent(store=store)
    store.child = await _spawn(attempt)
    attempt.mark()
    assert await wait_for_children(attempt.ctx) is Next.CONTINUE
    assert attempt.types() == expected
    (resumed,) = attempt.new(Resumed)
    assert resumed.payload == WOKEN_BY_CHILDREN
    if woken_by_the_child:
        assert all(r.attempt_id is None for r in attempt.new()[1:])
    else:
        assert resumed.attempt_id is not None
    assert not attempt.state.suspended and not attempt.state.live_children
