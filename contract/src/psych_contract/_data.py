"""Test data for the Store suite: headers, admissions and record batches.

Everything here is built from the core record classes with the envelope filled in
correctly (``run_id``, ``seq``, ``scope``), so a failing case points at the store under
test and never at malformed input. Times are whole seconds in UTC because several
databases keep only microseconds (or less) and would otherwise break equality.
"""

from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from decimal import Decimal
from itertools import count
from typing import TypedDict
from typing import Unpack

from pydantic import JsonValue

from psych_runtime import AgentSpec
from psych_runtime import ModelRef
from psych_runtime import RunId
from psych_runtime import Scope
from psych_runtime import Store
from psych_runtime import ToolOutcome
from psych_runtime import Version
from psych_runtime import VersionHash
from psych_runtime.adapters.store import RunHeader
from psych_runtime.adapters.store import RunState
from psych_runtime.records import AbortRequested
from psych_runtime.records import AttemptId
from psych_runtime.records import Component
from psych_runtime.records import ComponentShown
from psych_runtime.records import Cost
from psych_runtime.records import EntryId
from psych_runtime.records import ModelCallFinished
from psych_runtime.records import ModelTimings
from psych_runtime.records import QueueEnqueued
from psych_runtime.records import QueueKind
from psych_runtime.records import Record
from psych_runtime.records import RunAdmitted
from psych_runtime.records import Task
from psych_runtime.records import TaskListUpdated
from psych_runtime.records import ToolCallFinished
from psych_runtime.records import ToolCallId
from psych_runtime.records import ToolFailure
from psych_runtime.records import TurnStarted
from psych_runtime.records import Usage

T0 = datetime(2030, 1, 1, 12, 0, 0, tzinfo=UTC)
"""The suite's reference instant; every other time is a whole-second offset from it."""

VERSION_HASH = VersionHash("sha256:" + "ab" * 32)
"""A well-formed hash for headers; the store never checks that the Version exists."""

_serial = count(1)
_SESSION = datetime.now(UTC).strftime("%Y%m%d%H%M%S%f")


def at(seconds: float) -> datetime:
    """``T0`` plus a number of seconds (pass whole numbers to stay DB-precision safe)."""
    return T0 + timedelta(seconds=seconds)


def new_run_id(label: str = "run") -> RunId:
    """A run id no other call in this process has returned.

    A counter rather than randomness keeps failures reproducible; the prefix holds the
    process start time so runs left in a shared database by an earlier session cannot
    collide with this one.
    """
    return RunId(f"contract-{label}-{_SESSION}-{next(_serial)}")


def new_key(label: str = "key") -> str:
    """An idempotency key unique to this process, for the same reason as run ids."""
    return f"contract-{label}-{_SESSION}-{next(_serial)}"


def scope(tenant: str = "tenant-a") -> Scope:
    """A Scope for ``tenant``, with a principal and a label so they round-trip too."""
    return Scope(tenant=tenant, principal="contract-suite", labels={"suite": "store"})


class HeaderFields(TypedDict, total=False):
    """What a test may set of a fresh header; the rest follows from these."""

    tenant: str
    """The Run's tenant: ``"tenant-a"`` unless set."""
    state: RunState
    """``RUNNABLE`` unless set."""
    created_at: datetime
    """``T0`` unless set."""
    deadline_at: datetime | None
    """An hour after ``created_at`` when unset or ``None``."""
    idempotency_key: str | None
    """None unless set."""
    runnable_at: datetime | None
    """None (runnable now) unless set."""


def header(run_id: RunId | None = None, **fields: Unpack[HeaderFields]) -> RunHeader:
    """A fresh header as admission would write it: no lease, no attempts yet."""
    created_at = fields.get("created_at", T0)
    deadline_at = fields.get("deadline_at")
    return RunHeader(
        run_id=run_id if run_id is not None else new_run_id(),
        scope=scope(fields.get("tenant", "tenant-a")),
        version_hash=VERSION_HASH,
        state=fields.get("state", RunState.RUNNABLE),
        created_at=created_at,
        deadline_at=deadline_at if deadline_at is not None else created_at + timedelta(hours=1),
        idempotency_key=fields.get("idempotency_key"),
        runnable_at=fields.get("runnable_at"),
    )


def admitted_for(run: RunHeader, message: str = "hello") -> RunAdmitted:
    """The ``run_admitted`` record that belongs beside ``run`` (seq 1, same fields)."""
    return RunAdmitted(
        run_id=run.run_id,
        seq=1,
        at=run.created_at,
        scope=run.scope,
        version_hash=run.version_hash,
        input={"message": message},
        idempotency_key=run.idempotency_key,
        deadline_at=run.deadline_at,
        parent_run_id=run.parent_run_id,
        delegation_depth=run.delegation_depth,
        continues_run_id=run.continues_run_id,
    )


def admission(
    run_id: RunId | None = None, *, message: str = "hello", **fields: Unpack[HeaderFields]
) -> tuple[RunHeader, RunAdmitted]:
    """Both arguments of ``create_run``, consistent with each other."""
    run = header(run_id, **fields)
    return run, admitted_for(run, message)


async def admitted_run(store: Store) -> RunId:
    """Admit one Run with the defaults of ``admission`` into ``store``; its id."""
    run, admitted = admission()
    await store.create_run(run, admitted)
    return run.run_id


_Builder = Callable[[RunId, int, Scope, datetime], Record]


def _queued(run_id: RunId, seq: int, sc: Scope, when: datetime) -> Record:
    payload: dict[str, JsonValue] = {"n": seq, "text": f"message {seq}", "nested": [1, None]}
    return QueueEnqueued(
        run_id=run_id,
        seq=seq,
        at=when,
        scope=sc,
        queue=QueueKind.STEER,
        entry_id=EntryId(f"entry-{seq}"),
        payload=payload,
    )


def _turn(run_id: RunId, seq: int, sc: Scope, when: datetime) -> Record:
    return TurnStarted(
        run_id=run_id, seq=seq, at=when, scope=sc, attempt_id=AttemptId("att-1"), turn=seq
    )


def _model(run_id: RunId, seq: int, sc: Scope, when: datetime) -> Record:
    return ModelCallFinished(
        run_id=run_id,
        seq=seq,
        at=when,
        scope=sc,
        attempt_id=AttemptId("att-1"),
        turn=1,
        model="contract-model",
        usage=Usage(input=seq, output=2 * seq, cache_read=3, cache_write=2, cache_write_1h=1),
        cost=Cost(amount=Decimal("0.0012"), model="contract-model", input_amount=Decimal("0.001")),
        timings=ModelTimings(queue_wait_seconds=0.25, time_to_first_token_seconds=0.5),
        finish_reason="stop",
        text=f"answer {seq} \u00e9\u4e2d",
        tool_calls=(ToolCallId(f"call-{seq}"),),
    )


def _tool(run_id: RunId, seq: int, sc: Scope, when: datetime) -> Record:
    return ToolCallFinished(
        run_id=run_id,
        seq=seq,
        at=when,
        scope=sc,
        attempt_id=AttemptId("att-1"),
        call_id=ToolCallId(f"call-{seq}"),
        outcome=ToolOutcome.ERROR,
        failure=ToolFailure(kind="timeout", message="slow", transient=True),
        duration_seconds=1.5,
    )


def _tasks(run_id: RunId, seq: int, sc: Scope, when: datetime) -> Record:
    return TaskListUpdated(
        run_id=run_id,
        seq=seq,
        at=when,
        scope=sc,
        tasks=(Task(title=f"task {seq}", status="in_progress"), Task(title="later")),
    )


def _component(run_id: RunId, seq: int, sc: Scope, when: datetime) -> Record:
    return ComponentShown(
        run_id=run_id,
        seq=seq,
        at=when,
        scope=sc,
        component=Component(kind="metric", title=f"metric {seq}", data={"value": 1.25}),
    )


def _abort(run_id: RunId, seq: int, sc: Scope, when: datetime) -> Record:
    return AbortRequested(run_id=run_id, seq=seq, at=when, scope=sc, reason=f"stop {seq}")


_BUILDERS: tuple[_Builder, ...] = (_queued, _turn, _model, _tool, _tasks, _component, _abort)


def batch(run: RunHeader, first_seq: int, size: int) -> list[Record]:
    """``size`` records for ``run`` at ``first_seq`` onwards.

    The types rotate through several record kinds (nested models, decimals, non-ASCII
    text, optional fields) so a store that serialises records is exercised on more
    than one shape. Every record's content depends on its seq, so a store that returns
    the right count in the wrong order still fails an equality check.
    """
    return [
        _BUILDERS[seq % len(_BUILDERS)](run.run_id, seq, run.scope, at(seq))
        for seq in range(first_seq, first_seq + size)
    ]


def version(name: str, published_s: int = 0) -> Version:
    """A small agent Version; equal names give equal hashes, whatever ``published_s``.

    The description has non-ASCII text and the model a float setting, two things a
    store that re-serialises the Spec could alter (and so change the hash).
    """
    spec = AgentSpec(
        name=name,
        description="r\u00e9sum\u00e9 \u2014 contract",
        model=ModelRef(model="contract-model", temperature=0.5),
    )
    return Version.of(spec, published_at=at(published_s))


def consumer_record(run: RunHeader, seq: int, note: str = "") -> Record:
    """A record a consumer appends without a fence (an abort request).

    ``note`` becomes the abort reason, so records from different writers differ.
    """
    return AbortRequested(
        run_id=run.run_id, seq=seq, at=at(seq), scope=run.scope, reason=note or f"stop {seq}"
    )


__all__ = [
    "T0",
    "VERSION_HASH",
    "HeaderFields",
    "admission",
    "admitted_for",
    "at",
    "batch",
    "consumer_record",
    "header",
    "new_key",
    "new_run_id",
    "scope",
    "version",
]
