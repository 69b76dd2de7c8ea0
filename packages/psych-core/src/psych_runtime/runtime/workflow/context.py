"""What every part of one workflow Attempt shares, and how steps report their end.

Control flow between steps uses two exceptions, each caught where it means something:
``Suspend`` unwinds the whole Attempt once a suspension is staged (the Worker parks the
Run); ``StepFailed`` carries a failure up to the composite step or the workflow that
decides what it means.
"""

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass

from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import StepId
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.spec import WorkflowSpec
from psych_runtime.core.state import StepRecord
from psych_runtime.runtime.abort import AbortSignal
from psych_runtime.runtime.agent.deps import AgentDeps
from psych_runtime.runtime.journal import Journal


class Suspend(Exception):
    """The Attempt stops here: a suspension is staged (or another branch holds one)."""


class StepFailed(Exception):
    """A step failed for good; the failure travels up to whoever decides its meaning."""

    def __init__(self, failure: ToolFailure) -> None:
        super().__init__(f"{failure.kind}: {failure.message}")
        self.failure = failure


AgentRunner = Callable[[AgentSpec, StepId, str, JsonObject], Awaitable["AgentOutcome"]]
"""Runs an agent step as a nested Run: (spec, step id, message, input) to its outcome."""


@dataclass(frozen=True, slots=True)
class AgentOutcome:
    """How a nested agent Run ended: its output, or its own failure."""

    child_run_id: RunId
    output: JsonObject | None
    failure: ToolFailure | None


@dataclass(frozen=True, slots=True)
class ReplaySource:
    """An earlier Run whose completed top-level steps a replay reuses.

    Attributes:
        run_id: the earlier Run.
        steps: its steps, as its log has them.
        from_index: top-level steps before this index are reused, not run.
    """

    run_id: RunId
    steps: Mapping[StepId, StepRecord]
    from_index: int


@dataclass
class WorkflowContext:
    """One Attempt of one workflow Run.

    Attributes:
        deps: the tools, egress and approval rules the process runs with.
        journal: the only way the Attempt reads and writes the Run's log.
        spec: the workflow the Run pinned (for nested workflows, the root).
        abort: fired by the Worker when the Attempt must stop.
        run_agent: runs an agent step as a nested Run.
        suspended: whether a suspension is already staged in this Attempt (only one
            may be; a second branch that must wait simply stops).
        replay: the earlier Run a replay reuses steps of, if this Run is a replay.
    """

    deps: AgentDeps
    journal: Journal
    spec: WorkflowSpec
    abort: AbortSignal
    run_agent: AgentRunner
    suspended: bool = False
    replay: ReplaySource | None = None

    @property
    def run_id(self) -> RunId:
        """The workflow Run."""
        return self.journal.run_id


def failure(kind: str, message: str) -> ToolFailure:
    """A step failure with ``kind`` (the stable classifier) and a readable message."""
    return ToolFailure(kind=kind, message=message[:8192])


__all__ = [
    "AgentOutcome",
    "AgentRunner",
    "ReplaySource",
    "StepFailed",
    "Suspend",
    "WorkflowContext",
    "failure",
]
