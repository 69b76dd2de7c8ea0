"""Child Runs: admitting them, and carrying their endings back to their parents.

A child is a Run of its own (its own log and header, ``parent_run_id`` set), admitted
exactly once per parent call through an idempotency key derived from the parent and
the call, so a parent that crashes and retries the call finds the same child.

Whoever settles a child (the parent's own Attempt for a blocking delegation, any
Worker for a background child, by completion, failure, force, exhausted attempts or
an expired suspension) calls ``report_to_parent`` before the child is released
settled. It appends ``subagent_finished`` to the parent's log once (a repeat finds
the child already finished and writes nothing) and, when that was the last child a
suspended parent waited for, ``resumed`` as well, and wakes it. Doing this before
the release means a crash in between leaves the child leased, so the Worker that
reclaims it does the report again: no ending is lost.
"""

from datetime import datetime
from datetime import timedelta
from typing import Any

from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import VersionHash
from psych_runtime.core.ids import WorkerId
from psych_runtime.core.projections.latency import measure_latency
from psych_runtime.core.projections.report import subtree_totals
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import Record
from psych_runtime.core.records import Resumed
from psych_runtime.core.records import SubagentFinished
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.scope import Scope
from psych_runtime.core.state import RunStateView
from psych_runtime.runtime.admitted import admission_records
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.external import append_external
from psych_runtime.runtime.ids import new_run_id
from psych_runtime.runtime.reads import FOLDS
from psych_runtime.store.port import RunHeader
from psych_runtime.store.port import RunState
from psych_runtime.store.port import Store
from psych_runtime.telemetry.context import child_trace_context

INLINE_WORKER = WorkerId("wrk_inline")
"""The worker id a nested child's Attempts are recorded under (its parent's Attempt)."""

WOKEN_BY_CHILDREN: JsonObject = {"woken_by": "children"}
"""The payload of the ``resumed`` that ends a wait on children."""


async def admit_child(
    store: Store,
    parent: RunStateView,
    *,
    version_hash: VersionHash,
    key: str,
    input: JsonObject,
    deadline_seconds: float,
    state: RunState,
    runnable_at: datetime | None = None,
    trace_context: dict[str, str] | None = None,
) -> RunHeader:
    """Admit (or find, after a retry) the child a parent's step or call starts.

    The child's deadline is its own Spec's, cut to the parent's: a child never
    outlives the Run that waits for it.

    Args:
        store: where the parent lives; the child goes beside it.
        parent: the parent's fold.
        version_hash: the child's pinned Version (already stored).
        key: the idempotency key, unique to the parent and the call or step.
        input: the child's input (``{"message": task}`` for a delegation).
        deadline_seconds: the child Spec's own deadline budget.
        state: ``NESTED`` for a child its parent drives inline, ``RUNNABLE`` for one
            any Worker may claim.
        runnable_at: keep a runnable child parked until then.
        trace_context: the W3C trace context a child claimed by a Worker joins (the
            span of the call that started it); None joins the parent's trace.
    """
    now = utcnow()
    deadline = now + timedelta(seconds=deadline_seconds)
    if parent.effective_deadline_at is not None:
        deadline = min(deadline, parent.effective_deadline_at)
    assert parent.run_id is not None and parent.scope is not None
    header, admitted = admission_records(
        new_run_id(),
        parent.scope,
        version_hash,
        state,
        now,
        deadline,
        key,
        input=input,
        trace_context=child_trace_context(trace_context, parent.trace_context),
        parent=parent,
        runnable_at=runnable_at,
    )
    return (await store.create_run(header, admitted)).header


async def child_ending(store: Store, child_id: RunId, name: str) -> dict[str, Any]:
    """The fields of the ``subagent_finished`` a settled child's parent gets.

    Its figures cover the child's whole subtree, read from the child's own log.
    """
    fold = await FOLDS.fold(store, child_id)
    state = fold.state
    totals = subtree_totals(state, measure_latency(fold.records).wall_clock_seconds)
    return {
        "child_run_id": child_id,
        "name": name,
        "state": state.terminal_state,
        "output": state.output,
        "failure": state.failure,
        "usage": totals.usage,
        "unreported_usage_calls": totals.unreported_usage_calls,
        "cost": totals.cost,
        "unpriced_model_calls": totals.unpriced_model_calls,
        "runs": totals.runs,
        "run_seconds": totals.run_seconds,
    }


async def report_to_parent(store: Store, child: RunStateView) -> bool:
    """Write a settled child's ending into its parent's log, once; wake a waiting parent.

    Nothing is written when the Run has no parent, when the parent does not know it
    as a child (a workflow's agent step), when the parent already has its ending, or
    when the parent has settled.

    Returns:
        Whether an ending was written.
    """
    parent_id = child.parent_run_id
    child_id = child.run_id
    if parent_id is None or child_id is None or not child.settled:
        return False
    header = await store.get_run(parent_id)
    if header is None:
        return False
    known = (await FOLDS.fold(store, parent_id)).state.children.get(child_id)
    if known is None or not known.alive:
        return False
    ending = await child_ending(store, child_id, known.name)
    woke = False

    def build(state: RunStateView, seq: int, scope: Scope) -> list[Record] | None:
        nonlocal woke
        mine = state.children.get(child_id)
        if state.settled or mine is None or not mine.alive:
            return None
        now = utcnow()
        finished = SubagentFinished(run_id=parent_id, seq=seq, at=now, scope=scope, **ending)
        batch: list[Record] = [finished]
        others = [c for c in state.live_children if c.run_id != child_id]
        woke = state.suspended and state.suspend_reason is SuspendReason.CHILDREN and not others
        if woke:
            batch.append(
                Resumed(
                    run_id=parent_id, seq=seq + 1, at=now, scope=scope, payload=WOKEN_BY_CHILDREN
                )
            )
        return batch

    written = await append_external(store, parent_id, header, build) is not None
    if woke:
        await store.set_runnable_at(parent_id, None)
    return written


__all__ = [
    "INLINE_WORKER",
    "WOKEN_BY_CHILDREN",
    "admit_child",
    "child_ending",
    "report_to_parent",
]
