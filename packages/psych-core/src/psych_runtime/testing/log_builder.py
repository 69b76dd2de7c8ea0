"""Build Run logs by hand, valid or deliberately broken, for tests.

The builder fills in the parts of every record that are bookkeeping (position, Run,
tenant, time, attempt) so a test spells out only what it is about. It never checks
that the log makes sense: a test of the reducer needs to write the contradictions
the reducer must catch, so every default can be overridden per record, envelope
fields included.
"""

from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Self

from pydantic import BaseModel

from psych_runtime.core.ids import AttemptId
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import VersionHash
from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import Usage
from psych_runtime.core.records import RECORD_ADAPTER
from psych_runtime.core.records import CompactionReason
from psych_runtime.core.records import Component
from psych_runtime.core.records import ModelTimings
from psych_runtime.core.records import QueueKind
from psych_runtime.core.records import Record
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import Task
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.scope import Scope

LOG_START = datetime(2026, 1, 1, tzinfo=UTC)
"""The timestamp of the first record a builder writes."""

RECORD_INTERVAL = timedelta(seconds=1)
"""How far the builder's clock moves after each record."""

_DEFAULT_FAILURES: dict[ToolOutcome, ToolFailure] = {
    ToolOutcome.ERROR: ToolFailure(kind="tool_error", message="the tool failed"),
    ToolOutcome.UNKNOWN: ToolFailure(kind="orphaned", message="the call's fate is unknown"),
}


class LogBuilder:
    """A chainable writer of one Run's records, for tests.

    Each helper appends one record and returns the builder, so a log reads as a
    sentence::

        log = LogBuilder().admitted().attempt().turn().model_started().model_finished()

    Every keyword a helper does not name is passed to the record as a field, which is
    how a test overrides a default, including ``seq``, ``run_id``, ``scope``, ``at``
    or ``attempt_id`` when it wants a broken log.

    Attributes:
        records: the records written so far, in order.
        run_id: the Run every record is stamped with unless overridden.
        scope: the tenancy stamp every record carries unless overridden.
        version_hash: the Version that admission (and spawned children) pin by default.
    """

    def __init__(
        self,
        run_id: str = "run_test",
        scope: Scope | None = None,
        version_hash: str = "sha256:test",
    ) -> None:
        self.run_id = RunId(run_id)
        self.scope = scope if scope is not None else Scope(tenant="acme")
        self.version_hash = VersionHash(version_hash)
        self.records: list[Record] = []
        self._clock = LOG_START
        self._attempts = 0
        self._attempt_id: AttemptId | None = None
        self._turns = 0

    # --- bookkeeping -------------------------------------------------------------------

    @property
    def next_seq(self) -> int:
        """The position the next record will be stamped with."""
        return len(self.records) + 1

    @property
    def now(self) -> datetime:
        """The time the next record will be stamped with."""
        return self._clock

    @property
    def current_turn(self) -> int:
        """The turn number helpers stamp: the latest ``turn()``, and never below one."""
        return max(self._turns, 1)

    def advance(self, seconds: float) -> Self:
        """Move the clock forward, e.g. to make a suspension last a known time."""
        self._clock += timedelta(seconds=seconds)
        return self

    def build(self) -> list[Record]:
        """Return the records written so far, as a new list."""
        return list(self.records)

    # --- escape hatches ----------------------------------------------------------------

    def append(self, **fields: object) -> Self:
        """Append a record given by its ``type`` and fields; the envelope is filled in.

        Fields given here win over the filled-in envelope, so a test can write a
        record at the wrong position, for another Run or for another tenant.
        """
        data: dict[str, object] = {
            "run_id": self.run_id,
            "seq": self.next_seq,
            "at": self._clock,
            "scope": self.scope,
            "attempt_id": self._attempt_id,
        }
        data.update(fields)
        self.records.append(RECORD_ADAPTER.validate_python(data))
        self._clock += RECORD_INTERVAL
        return self

    def raw(self, record_cls: type[BaseModel], **fields: object) -> Self:
        """Append a record of the given class with exactly the fields supplied."""
        type_name = record_cls.model_fields["type"].default
        if not isinstance(type_name, str):
            raise TypeError(f"{record_cls.__name__} is not a record type")
        return self.append(type=type_name, **fields)

    def _add(
        self, type_name: str, defaults: dict[str, object], overrides: dict[str, object]
    ) -> Self:
        return self.append(type=type_name, **{**defaults, **overrides})

    # --- lifecycle ---------------------------------------------------------------------

    def admitted(self, **kw: object) -> Self:
        """Admit the Run; the deadline defaults to one hour after admission."""
        defaults: dict[str, object] = {
            "version_hash": self.version_hash,
            "deadline_at": self._clock + timedelta(hours=1),
        }
        return self._add("run_admitted", defaults, kw)

    def attempt(self, *, reclaimed: bool = False, **kw: object) -> Self:
        """Start attempt N (id ``att_N``, worker ``wrk_N``); later records carry its id."""
        self._attempts += 1
        number = self._attempts
        self._attempt_id = AttemptId(f"att_{number}")
        defaults: dict[str, object] = {
            "worker_id": f"wrk_{number}",
            "attempt_number": number,
            "reclaimed_expired_lease": reclaimed,
        }
        return self._add("attempt_started", defaults, kw)

    def settled(self, state: TerminalState = TerminalState.COMPLETED, **kw: object) -> Self:
        """Settle the Run."""
        return self._add("run_settled", {"state": state}, kw)

    # --- turns and model calls ---------------------------------------------------------

    def turn(self, **kw: object) -> Self:
        """Open the next turn."""
        self._turns += 1
        return self._add("turn_started", {"turn": self._turns}, kw)

    def first_model_call(self, **admission: object) -> Self:
        """Admit the Run, start its first Attempt and turn, and send that turn's model request.

        Where most logs under test begin; ``admission`` goes to ``admitted``.
        """
        return self.admitted(**admission).attempt().turn().model_started()

    def model_started(self, model: str = "gpt-4o", **kw: object) -> Self:
        """Record a model request leaving in the current turn."""
        return self._add("model_call_started", {"turn": self.current_turn, "model": model}, kw)

    def model_finished(
        self,
        model: str = "gpt-4o",
        usage: Usage | None = None,
        cost: Cost | None = None,
        **kw: object,
    ) -> Self:
        """Record the model's answer; usage defaults to 10 input and 5 output tokens."""
        defaults: dict[str, object] = {
            "turn": self.current_turn,
            "model": model,
            "usage": usage if usage is not None else Usage(input=10, output=5),
            "cost": cost,
            "timings": ModelTimings(),
            "finish_reason": "stop",
        }
        return self._add("model_call_finished", defaults, kw)

    def model_failed(self, model: str = "gpt-4o", **kw: object) -> Self:
        """Record a failed model call (an HTTP 500 unless told otherwise)."""
        defaults: dict[str, object] = {
            "turn": self.current_turn,
            "model": model,
            "failure": ToolFailure(kind="http_500", message="the provider failed"),
        }
        return self._add("model_call_failed", defaults, kw)

    def compacted(self, from_seq: int, to_seq: int, **kw: object) -> Self:
        """Record a compaction replacing records ``from_seq..to_seq``."""
        defaults: dict[str, object] = {
            "reason": CompactionReason.THRESHOLD,
            "replaced_from_seq": from_seq,
            "replaced_to_seq": to_seq,
            "summary": "Summary of the earlier conversation.",
        }
        return self._add("compaction_applied", defaults, kw)

    # --- tools -------------------------------------------------------------------------

    def tool_started(self, call_id: str, tool: str = "refund", **kw: object) -> Self:
        """Record a tool call about to run in the current turn."""
        defaults: dict[str, object] = {
            "call_id": call_id,
            "tool": tool,
            "turn": self.current_turn,
        }
        return self._add("tool_call_started", defaults, kw)

    def tool_finished(
        self, call_id: str, outcome: ToolOutcome = ToolOutcome.OK, **kw: object
    ) -> Self:
        """Record a tool call's ending; failed outcomes get a stock failure."""
        defaults: dict[str, object] = {"call_id": call_id, "outcome": outcome}
        if outcome in _DEFAULT_FAILURES:
            defaults["failure"] = _DEFAULT_FAILURES[outcome]
        return self._add("tool_call_finished", defaults, kw)

    # --- workflow steps ----------------------------------------------------------------

    def step_started(
        self,
        step_id: str,
        name: str = "step",
        kind: str = "tool",
        attempt_number: int = 1,
        **kw: object,
    ) -> Self:
        """Record an attempt of a workflow step starting."""
        defaults: dict[str, object] = {
            "step_id": step_id,
            "name": name,
            "kind": kind,
            "attempt_number": attempt_number,
        }
        return self._add("step_started", defaults, kw)

    def step_completed(self, step_id: str, **kw: object) -> Self:
        """Record the current attempt of a workflow step ending."""
        return self._add("step_completed", {"step_id": step_id}, kw)

    # --- subagents ---------------------------------------------------------------------

    def spawned(self, child_run_id: str, name: str = "researcher", **kw: object) -> Self:
        """Record a child Run being spawned (pinning this builder's Version by default)."""
        defaults: dict[str, object] = {
            "child_run_id": child_run_id,
            "name": name,
            "call_id": f"call_spawn_{child_run_id}",
            "child_version_hash": self.version_hash,
        }
        return self._add("subagent_spawned", defaults, kw)

    def messaged_child(self, child_run_id: str, name: str = "researcher", **kw: object) -> Self:
        """Record a message sent into a child."""
        defaults: dict[str, object] = {
            "child_run_id": child_run_id,
            "name": name,
            "call_id": f"call_message_{self.next_seq}",
            "entry_id": f"entry_{self.next_seq}",
            "message": "Any progress?",
        }
        return self._add("subagent_messaged", defaults, kw)

    def child_finished(self, child_run_id: str, name: str = "researcher", **kw: object) -> Self:
        """Record a child's ending in this (the parent's) log."""
        defaults: dict[str, object] = {
            "child_run_id": child_run_id,
            "name": name,
            "state": TerminalState.COMPLETED,
        }
        return self._add("subagent_finished", defaults, kw)

    # --- interrupts, queues, suspension ------------------------------------------------

    def abort(self, reason: str = "user stopped it", **kw: object) -> Self:
        """Record a request to stop."""
        return self._add("abort_requested", {"reason": reason}, kw)

    def enqueued(self, entry_id: str, queue: QueueKind = QueueKind.STEER, **kw: object) -> Self:
        """Record a message queued for the Run."""
        return self._add("queue_enqueued", {"entry_id": entry_id, "queue": queue}, kw)

    def cancelled(self, entry_id: str, **kw: object) -> Self:
        """Record a queued message being withdrawn."""
        return self._add("queue_cancelled", {"entry_id": entry_id}, kw)

    def consumed(self, entry_id: str, **kw: object) -> Self:
        """Record a queued message reaching the model."""
        return self._add("queue_consumed", {"entry_id": entry_id}, kw)

    def suspended(self, reason: SuspendReason = SuspendReason.APPROVAL, **kw: object) -> Self:
        """Record the Run parking itself; it expires a day later by default."""
        defaults: dict[str, object] = {
            "reason": reason,
            "expires_at": self._clock + timedelta(days=1),
        }
        return self._add("suspended", defaults, kw)

    def resumed(self, **kw: object) -> Self:
        """Record a suspension ending."""
        return self._add("resumed", {}, kw)

    # --- content -----------------------------------------------------------------------

    def tasks(self, *tasks: Task | str, **kw: object) -> Self:
        """Replace the task list; plain strings become pending tasks with that title."""
        items = tuple(task if isinstance(task, Task) else Task(title=task) for task in tasks)
        return self._add("task_list_updated", {"tasks": items}, kw)

    def component(
        self, component: Component | None = None, *, kind: str = "card", **kw: object
    ) -> Self:
        """Show a UI component (an empty card of the given kind unless one is passed)."""
        shown = component if component is not None else Component.model_validate({"kind": kind})
        return self._add("component_shown", {"component": shown}, kw)


__all__ = ["LOG_START", "RECORD_INTERVAL", "LogBuilder"]
