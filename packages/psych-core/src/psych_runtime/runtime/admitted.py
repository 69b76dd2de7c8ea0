"""A new Run's header and its ``run_admitted`` record, made together."""

from datetime import datetime

from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import VersionHash
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import RunAdmitted
from psych_runtime.core.scope import Scope
from psych_runtime.core.state import RunStateView
from psych_runtime.store.port import RunHeader
from psych_runtime.store.port import RunState


def admission_records(
    run_id: RunId,
    scope: Scope,
    version_hash: VersionHash,
    state: RunState,
    now: datetime,
    deadline: datetime,
    idempotency_key: str | None,
    *,
    input: JsonObject,
    trace_context: dict[str, str],
    continues: RunId | None = None,
    replay_of: RunId | None = None,
    replay_from: str | None = None,
    breakpoints: tuple[str, ...] = (),
    step_mode: bool = False,
    parent: RunStateView | None = None,
    runnable_at: datetime | None = None,
) -> tuple[RunHeader, RunAdmitted]:
    """A new Run's header and its first record, built from one set of facts.

    The header is what the store indexes and the ``run_admitted`` record what every
    fold starts from; both name the same Version, scope, deadline, key and parent, so
    they are made here together, for a dispatched Run and a child alike.
    """
    depth = parent.delegation_depth + 1 if parent is not None else 0
    parent_run_id = parent.run_id if parent is not None else None
    header = RunHeader(
        run_id=run_id,
        scope=scope,
        version_hash=version_hash,
        state=state,
        created_at=now,
        deadline_at=deadline,
        idempotency_key=idempotency_key,
        continues_run_id=continues,
        parent_run_id=parent_run_id,
        delegation_depth=depth,
        runnable_at=runnable_at,
    )
    admitted = RunAdmitted(
        run_id=run_id,
        seq=1,
        at=now,
        scope=scope,
        version_hash=version_hash,
        input=input,
        idempotency_key=idempotency_key,
        deadline_at=deadline,
        continues_run_id=continues,
        replays_run_id=replay_of,
        replay_from_step=replay_from,
        breakpoints=breakpoints,
        step_mode=step_mode,
        parent_run_id=parent_run_id,
        delegation_depth=depth,
        trace_context=trace_context,
    )
    return header, admitted
