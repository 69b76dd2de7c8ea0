"""The workflow Spec: deterministic steps whose names are their memoisation keys.

A workflow resumes after a crash by reading completed steps back from the log, which
only works if every step is found again under the same name. That is why step names
are unique across the whole tree of one workflow (branch arms and loop bodies
included) and why step ids are derived from names and positions, never minted.
A nested workflow is a separate namespace: it keeps its own names and its own log.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from typing import Annotated
from typing import Literal
from typing import Self
from typing import get_args

from pydantic import Field
from pydantic import JsonValue
from pydantic import field_validator
from pydantic import model_validator

from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import StepId
from psych_runtime.core.spec.agent import AgentSpec
from psych_runtime.core.spec.agent import check_owner_names
from psych_runtime.core.spec.base import SpecModel
from psych_runtime.core.spec.base import sorted_by_name
from psych_runtime.core.spec.base import sorted_set
from psych_runtime.core.spec.connections import McpServers
from psych_runtime.core.spec.limits import Limits
from psych_runtime.core.spec.limits import SuspensionPolicy
from psych_runtime.core.spec.names import Description
from psych_runtime.core.spec.names import Name
from psych_runtime.core.spec.names import Text
from psych_runtime.core.spec.tools import SpecTools

STEP_KINDS: tuple[str, ...] = (
    "agent",
    "tool",
    "workflow",
    "parallel",
    "branch",
    "foreach",
    "loop",
    "map",
    "set_state",
    "sleep",
    "wait",
    "human",
)
"""Every ``kind`` a workflow step can have."""

_THIRTY_DAYS = 30 * 86_400.0

_SUFFIX = r"(?:\.[A-Za-z0-9_\-]+|\[\d+\])*"
_STEP_NAME = r"[A-Za-z_][A-Za-z0-9_.\-]{0,127}"
_PATH = re.compile(
    rf"^(?:(?:input|state|item){_SUFFIX}|index|iteration"
    rf"|steps\.{_STEP_NAME}\.(?:(?:output|failure){_SUFFIX}|status|skipped))$"
)


def _check_path(path: str) -> str:
    if not _PATH.match(path):
        raise ValueError(
            f"{path!r} is not a data path; a path starts at input, state, item, index, "
            "iteration or steps.<name>.(output|status|failure|skipped), then continues "
            "with .key or [n]"
        )
    return path


DataPath = Annotated[str, Field(min_length=1, max_length=1_024)]


class ValuePath(SpecModel):
    """A value read at run time from the workflow's input, state or earlier steps.

    Attributes:
        kind: always ``"path"``.
        path: for example ``steps.fetch.output.items[0].id`` or ``state.count``.
    """

    kind: Literal["path"] = "path"
    path: DataPath

    @field_validator("path")
    @classmethod
    def _grammar(cls, path: str) -> str:
        return _check_path(path)


class LiteralValue(SpecModel):
    """A fixed JSON value written into the Spec.

    Attributes:
        kind: always ``"literal"``.
        value: the value.
    """

    kind: Literal["literal"] = "literal"
    value: JsonValue = None


ValueRef = Annotated[ValuePath | LiteralValue, Field(discriminator="kind")]
"""Either a path to read or a literal, told apart by ``kind``."""

ConditionOp = Literal[
    "eq", "ne", "gt", "gte", "lt", "lte", "in", "contains", "exists", "truthy", "matches"
]


class Condition(SpecModel):
    """A test on run-time data: one path compared with a value, or a combination.

    Attributes:
        path: the data path tested.
        all_of: true when every listed condition is.
        any_of: true when at least one listed condition is.
        op: how the value at ``path`` is tested.
        value: what it is compared with; a list for ``in``, a regular expression for
            ``matches``, nothing for ``exists`` and ``truthy``.
        negate: invert the result.
    """

    path: DataPath | None = None
    all_of: Annotated[tuple[Condition, ...] | None, Field(min_length=1)] = None
    any_of: Annotated[tuple[Condition, ...] | None, Field(min_length=1)] = None
    op: ConditionOp = "truthy"
    value: JsonValue = None
    negate: bool = False

    @field_validator("path")
    @classmethod
    def _grammar(cls, path: str | None) -> str | None:
        return None if path is None else _check_path(path)

    @model_validator(mode="after")
    def _one_shape(self) -> Self:
        given = [
            name
            for name, part in (
                ("path", self.path),
                ("all_of", self.all_of),
                ("any_of", self.any_of),
            )
            if part is not None
        ]
        if len(given) != 1:
            raise ValueError(
                "a condition needs exactly one of path, all_of or any_of"
                + (f" (got {', '.join(given)})" if given else "")
            )
        if self.path is None:
            if self.op != "truthy" or self.value is not None:
                raise ValueError("op and value apply only to a condition on a path")
            return self
        if self.op in ("exists", "truthy") and self.value is not None:
            raise ValueError(f"op {self.op!r} takes no value")
        if self.op == "in" and not isinstance(self.value, list):
            raise ValueError("op 'in' needs a list value")
        if self.op == "matches":
            if not isinstance(self.value, str):
                raise ValueError("op 'matches' needs a regular expression as its value")
            try:
                re.compile(self.value)
            except re.error as error:
                raise ValueError(f"invalid regular expression {self.value!r}: {error}") from None
        return self


class RetryPolicy(SpecModel):
    """How often a failed step is tried again, and how long to wait in between.

    Attributes:
        max_attempts: attempts in total, the first included.
        backoff_seconds: the wait before the second attempt; 0 retries at once.
        multiplier: growth of the wait with each further attempt.
        max_backoff_seconds: a cap on any single wait.
        retry_on: failure kinds worth retrying; empty retries any kind. A ``denied``
            failure is never retried whatever this says.
    """

    max_attempts: Annotated[int, Field(ge=1, le=100)] = 1
    backoff_seconds: Annotated[float, Field(ge=0, le=_THIRTY_DAYS)] = 0.0
    multiplier: Annotated[float, Field(ge=1, le=10)] = 2.0
    max_backoff_seconds: Annotated[float, Field(ge=0, le=_THIRTY_DAYS)] = 3_600.0
    retry_on: tuple[Annotated[str, Field(min_length=1, max_length=128)], ...] = ()

    @field_validator("retry_on")
    @classmethod
    def _as_set(cls, kinds: tuple[str, ...]) -> tuple[str, ...]:
        return sorted_set(kinds)

    def delay_before(self, attempt: int) -> float:
        """Seconds to wait before the given attempt (1-based).

        The first attempt never waits; the second waits ``backoff_seconds``; each later
        one waits ``multiplier`` times longer, never more than ``max_backoff_seconds``.

        Args:
            attempt: which attempt is about to start.

        Returns:
            The wait in seconds.
        """
        if attempt <= 1 or self.backoff_seconds == 0:
            return 0.0
        exponent = attempt - 2
        try:
            grown = self.backoff_seconds * self.multiplier**exponent
        except OverflowError:
            return self.max_backoff_seconds
        return min(grown, self.max_backoff_seconds)


class StepBase(SpecModel):
    """What every step kind shares.

    Attributes:
        name: the step's key in the log; unique across the workflow's tree.
        description: for people reading the workflow.
        when: run the step only when this holds; otherwise it is recorded as skipped.
        retry: overrides the workflow's default retry policy for this step.
        timeout_seconds: a cap on each attempt.
        on_failure: ``fail`` fails the workflow; ``continue`` records a null output.
        output_schema: JSON Schema the step's output must satisfy.
        ends_workflow: finish the workflow once this step completes.
    """

    name: Name
    description: Description = ""
    when: Condition | None = None
    retry: RetryPolicy | None = None
    timeout_seconds: Annotated[float | None, Field(gt=0)] = None
    on_failure: Literal["fail", "continue"] = "fail"
    output_schema: dict[str, JsonValue] | None = None
    ends_workflow: bool = False


class AgentStep(StepBase):
    """Runs an embedded agent; ``input.message`` becomes its user message.

    Attributes:
        spec: the agent.
        input: the agent's input, key by key.
    """

    kind: Literal["agent"] = "agent"
    spec: AgentSpec
    input: dict[str, ValueRef] = Field(default_factory=dict)


class ToolStep(StepBase):
    """Calls one tool directly, with no model involved.

    Attributes:
        tool: the tool's name; the workflow must grant it or the registry must hold it.
        arguments: fixed arguments.
        arguments_from: arguments read at run time, overriding fixed ones of the same
            name.
    """

    kind: Literal["tool"] = "tool"
    tool: Annotated[str, Field(min_length=1, max_length=256)]
    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    arguments_from: dict[str, ValueRef] = Field(default_factory=dict)


class WorkflowStepRef(StepBase):
    """Runs an embedded workflow, which keeps its own step namespace.

    Attributes:
        spec: the nested workflow.
        input: its input, key by key.
    """

    kind: Literal["workflow"] = "workflow"
    spec: WorkflowSpec
    input: dict[str, ValueRef] = Field(default_factory=dict)


class ParallelStep(StepBase):
    """Runs several steps at once.

    Attributes:
        branches: the steps to run.
        on_branch_failure: ``fail_fast`` cancels the others at the first failure;
            ``wait_all`` lets them finish.
    """

    kind: Literal["parallel"] = "parallel"
    branches: Annotated[tuple[Step, ...], Field(min_length=1)]
    on_branch_failure: Literal["fail_fast", "wait_all"] = "fail_fast"


class BranchCase(SpecModel):
    """One arm of a branch: a condition and the step it guards.

    Attributes:
        name: the arm's key in the branch output.
        when: the condition.
        step: what runs when it holds.
    """

    name: Name
    when: Condition
    step: Step


class BranchStep(StepBase):
    """Chooses among arms by condition.

    Attributes:
        cases: the arms, tested in the author's order.
        otherwise: runs when no arm's condition holds.
        mode: ``first`` runs the first matching arm; ``all`` runs every matching arm.
    """

    kind: Literal["branch"] = "branch"
    cases: Annotated[tuple[BranchCase, ...], Field(min_length=1)]
    otherwise: Step | None = None
    mode: Literal["first", "all"] = "first"

    @field_validator("cases")
    @classmethod
    def _unique_cases(cls, cases: tuple[BranchCase, ...]) -> tuple[BranchCase, ...]:
        sorted_by_name(cases, "branch case")
        return cases


class ForeachStep(StepBase):
    """Runs its body once per item of a list.

    Attributes:
        items: where the list is read from.
        body: the step run per item (``item`` and ``index`` refer to the current one).
        concurrency: items in flight at once.
        on_item_failure: ``fail_fast`` or ``wait_all``.
    """

    kind: Literal["foreach"] = "foreach"
    items: ValuePath
    body: Step
    concurrency: Annotated[int, Field(ge=1, le=64)] = 1
    on_item_failure: Literal["fail_fast", "wait_all"] = "fail_fast"


def _exactly_one(what: str, first: tuple[str, object], second: tuple[str, object]) -> None:
    """Refuse ``what`` unless exactly one of its two alternative fields is given."""
    if (first[1] is None) == (second[1] is None):
        raise ValueError(f"{what} needs exactly one of {first[0]} or {second[0]}")


class LoopStep(StepBase):
    """Repeats its body until a condition holds, or while one holds.

    Attributes:
        body: the step repeated (``iteration`` counts from 0).
        until: stop after an iteration at which this holds.
        while_: keep going while this holds (written ``while`` in data).
        max_iterations: running out of iterations is a failure (``loop_exhausted``).
    """

    kind: Literal["loop"] = "loop"
    body: Step
    until: Condition | None = None
    while_: Condition | None = Field(default=None, alias="while")
    max_iterations: Annotated[int, Field(ge=1, le=10_000)] = 100

    @model_validator(mode="after")
    def _one_stop_rule(self) -> Self:
        _exactly_one("a loop", ("until", self.until), ("while", self.while_))
        return self


class MapStep(StepBase):
    """Builds an output object from paths and literals, with no side effects.

    Attributes:
        output: the object, key by key.
    """

    kind: Literal["map"] = "map"
    output: Annotated[dict[str, ValueRef], Field(min_length=1)]


class SetStateStep(StepBase):
    """Writes keys into the workflow's state.

    Attributes:
        values: the keys written, overlaying earlier values.
    """

    kind: Literal["set_state"] = "set_state"
    values: Annotated[dict[str, ValueRef], Field(min_length=1)]


class SleepStep(StepBase):
    """Parks the workflow for a while, without holding a Worker.

    Attributes:
        seconds: how long, at most thirty days.
        until: a path to the instant to wake at.
    """

    kind: Literal["sleep"] = "sleep"
    seconds: Annotated[float | None, Field(ge=0, le=_THIRTY_DAYS)] = None
    until: ValuePath | None = None

    @model_validator(mode="after")
    def _one_wake_rule(self) -> Self:
        _exactly_one("a sleep", ("seconds", self.seconds), ("until", self.until))
        return self


class WaitStep(StepBase):
    """Parks the workflow until an external event is delivered.

    Attributes:
        event: the event's name.
        payload_schema: JSON Schema the delivered payload must satisfy.
    """

    kind: Literal["wait"] = "wait"
    event: Annotated[str, Field(min_length=1, max_length=256)]
    payload_schema: dict[str, JsonValue] = Field(default_factory=dict)


class HumanStep(StepBase):
    """Asks a person and parks the workflow until they answer.

    Attributes:
        prompt: what the person is asked.
        questions: specific questions, in order.
        expires_seconds: how long to wait; None uses the suspension policy.
    """

    kind: Literal["human"] = "human"
    prompt: Annotated[Text, Field(min_length=1, max_length=8_192)]
    questions: tuple[Annotated[Text, Field(min_length=1, max_length=2_048)], ...] = ()
    expires_seconds: Annotated[float | None, Field(gt=0)] = None


Step = Annotated[
    AgentStep
    | ToolStep
    | WorkflowStepRef
    | ParallelStep
    | BranchStep
    | ForeachStep
    | LoopStep
    | MapStep
    | SetStateStep
    | SleepStep
    | WaitStep
    | HumanStep,
    Field(discriminator="kind"),
]
"""Any step, told apart by ``kind``."""


def child_steps(step: Step) -> tuple[tuple[str, Step], ...]:
    """The steps nested directly inside a composite step, with their relative paths.

    Nested workflows and agents are not entered: their steps are a separate namespace.

    Args:
        step: any step.

    Returns:
        ``(path, child)`` pairs, the path relative to ``step`` in dotted form.
    """
    if isinstance(step, ParallelStep):
        return tuple((f"branches.{i}", child) for i, child in enumerate(step.branches))
    if isinstance(step, BranchStep):
        arms = [(f"cases.{i}.step", case.step) for i, case in enumerate(step.cases)]
        if step.otherwise is not None:
            arms.append(("otherwise", step.otherwise))
        return tuple(arms)
    if isinstance(step, ForeachStep | LoopStep):
        return (("body", step.body),)
    return ()


def _walk(step: Step, path: str) -> Iterator[tuple[str, Step]]:
    yield path, step
    for relative, child in child_steps(step):
        yield from _walk(child, f"{path}.{relative}")


def walk_steps(steps: tuple[Step, ...], prefix: str = "steps") -> Iterator[tuple[str, Step]]:
    """Every step of one workflow's namespace, depth first, with its dotted path."""
    for index, step in enumerate(steps):
        yield from _walk(step, f"{prefix}.{index}")


class WorkflowSpec(SpecModel):
    """A workflow: named steps run in a fixed order, each one memoised in the log.

    Attributes:
        kind: always ``"workflow"``.
        name: the workflow's name.
        description: what it is for.
        steps: the top-level steps, in order.
        tools: static tools the workflow's tool steps may call.
        mcp_servers: MCP servers whose tools tool steps may call.
        limits: bounds on the Run; ``max_steps`` counts step starts.
        suspension: how long suspensions may wait.
        input_schema: JSON Schema the input must satisfy before any step starts.
        initial_state: the state before the first ``set_state`` step.
        output: the workflow's output, key by key; None collects every top-level
            step's output under its name.
        retry: the retry policy of steps that set none.
    """

    kind: Literal["workflow"] = "workflow"
    name: Name
    description: Description = ""
    steps: Annotated[tuple[Step, ...], Field(min_length=1)]
    tools: SpecTools = ()
    mcp_servers: McpServers = ()
    limits: Limits = Limits()
    suspension: SuspensionPolicy = SuspensionPolicy()
    input_schema: dict[str, JsonValue] | None = None
    initial_state: dict[str, JsonValue] = Field(default_factory=dict)
    output: dict[str, ValueRef] | None = None
    retry: RetryPolicy = RetryPolicy()

    @model_validator(mode="after")
    def _names_unique(self) -> Self:
        check_owner_names(self.tools, self.mcp_servers, ())
        seen: dict[str, str] = {}
        clashes: list[str] = []
        for path, step in walk_steps(self.steps):
            if step.name in seen:
                clashes.append(f"{step.name!r} at {seen[step.name]} and {path}")
            else:
                seen[step.name] = path
        if clashes:
            raise ValueError(
                "step names must be unique across the workflow (branch arms and loop "
                "bodies included): " + "; ".join(clashes)
            )
        return self


def derive_step_id(run_id: RunId, path: tuple[str | int, ...]) -> StepId:
    r"""Derive a step's id from the Run and the step's position, the same on every replay.

    Each path element is framed by a 0x1F separator and a type tag (``i`` or ``s``) so
    that ``("1",)`` and ``(1,)`` or ``("a", "b")`` and ``("a\x1fsb",)`` cannot meet.

    Args:
        run_id: the Run the step belongs to.
        path: ``(workflow_name, index, step_name)`` for a top-level step, extended with
            further elements for nested ones.

    Returns:
        ``stp_`` followed by 32 hex characters.

    Raises:
        TypeError: when an element is neither a str nor an int (bools included).
    """
    digest = hashlib.sha256(run_id.encode())
    for element in path:
        if isinstance(element, bool) or not isinstance(element, int | str):
            raise TypeError(f"step path elements are str or int, not {type(element).__name__}")
        tag = b"i" if isinstance(element, int) else b"s"
        digest.update(b"\x1f" + tag + str(element).encode())
    return StepId("stp_" + digest.hexdigest()[:32])


# The models refer to one another (a step holds steps), so they are completed once all
# are defined; the step classes are read from ``Step``'s union, the one list of them.
for _model in (Condition, BranchCase, *get_args(get_args(Step)[0]), WorkflowSpec):
    _model.model_rebuild()

__all__ = [
    "STEP_KINDS",
    "AgentStep",
    "BranchCase",
    "BranchStep",
    "Condition",
    "ConditionOp",
    "ForeachStep",
    "HumanStep",
    "LiteralValue",
    "LoopStep",
    "MapStep",
    "ParallelStep",
    "RetryPolicy",
    "SetStateStep",
    "SleepStep",
    "Step",
    "StepBase",
    "ToolStep",
    "ValuePath",
    "ValueRef",
    "WaitStep",
    "WorkflowSpec",
    "WorkflowStepRef",
    "derive_step_id",
    "walk_steps",
]
