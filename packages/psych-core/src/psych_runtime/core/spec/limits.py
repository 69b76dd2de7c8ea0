"""Bounds on a Run, how long a suspension may wait, and when history is summarised.

Durations are floats in seconds throughout the Spec and counts are ints, so ``30`` and
``30.0`` in a duration validate to the same value and hash alike.
"""

from typing import Annotated
from typing import Self

from pydantic import Field
from pydantic import model_validator

from psych_runtime.core.spec.base import SpecModel
from psych_runtime.core.spec.models import ModelId
from psych_runtime.core.spec.names import Text

_DAY = 86_400.0


class Limits(SpecModel):
    """Every bound a Run is held to; all have defaults.

    Attributes:
        max_steps: for an agent, how many settled tool results end the Run (calls
            the runtime refused to run do not count); for a workflow, how many step
            starts (retries and iterations included).
        max_turns: model turns before the Run stops.
        max_tool_calls_per_turn: tool calls one model answer may make.
        deadline_seconds: wall-clock budget from dispatch.
        transient_retry_budget: retries of transient failures across the whole Run.
        max_delegation_depth: how deep a chain of subagents may go.
        max_fanout_per_turn: blocking delegations in one turn.
        failure_streak_threshold: consecutive failures after which a tool is withheld.
        failure_streak_hard_stop: consecutive failures after which the Run fails.
        repeat_call_threshold: identical repeated calls after which a call is refused.
        repeat_call_hard_stop: identical repeated calls after which the turn stops.
        stream_idle_seconds: silence tolerated from a model stream; 0 turns it off.
        large_result_bytes: tool results above this are elided from the prompt.
        max_history_records: how much of a continued thread is replayed; 0 = none.
    """

    max_steps: Annotated[int, Field(ge=1, le=10_000)] = 48
    max_turns: Annotated[int, Field(ge=1, le=1_000)] = 32
    max_tool_calls_per_turn: Annotated[int, Field(ge=1, le=256)] = 16
    deadline_seconds: Annotated[float, Field(gt=0, le=_DAY)] = 900.0
    transient_retry_budget: Annotated[int, Field(ge=0, le=100)] = 8
    max_delegation_depth: Annotated[int, Field(ge=0, le=16)] = 3
    max_fanout_per_turn: Annotated[int, Field(ge=1, le=64)] = 4
    failure_streak_threshold: Annotated[int, Field(ge=1, le=1_000)] = 3
    failure_streak_hard_stop: Annotated[int, Field(ge=1, le=1_000)] = 6
    repeat_call_threshold: Annotated[int, Field(ge=1, le=1_000)] = 3
    repeat_call_hard_stop: Annotated[int, Field(ge=1, le=1_000)] = 6
    stream_idle_seconds: Annotated[float, Field(ge=0, le=3_600)] = 300.0
    large_result_bytes: Annotated[int, Field(ge=1)] = 32_768
    max_history_records: Annotated[int, Field(ge=0, le=20_000)] = 300

    @model_validator(mode="after")
    def _stops_after_warnings(self) -> Self:
        if self.failure_streak_hard_stop < self.failure_streak_threshold:
            raise ValueError(
                "failure_streak_hard_stop must be at least failure_streak_threshold: the "
                "tool is withheld before the Run is failed"
            )
        if self.repeat_call_hard_stop < self.repeat_call_threshold:
            raise ValueError(
                "repeat_call_hard_stop must be at least repeat_call_threshold: a repeat "
                "is refused before the turn is stopped"
            )
        return self


class SuspensionPolicy(SpecModel):
    """How long each kind of suspension may wait before the Run is abandoned.

    Attributes:
        approval_expires_seconds: a pending approval.
        question_expires_seconds: a question put to the user.
        external_expires_seconds: an external event or webhook.
        children_expires_seconds: background subagents the parent waits on.
        may_ask_questions: whether the model is offered ``ask_question``.
    """

    approval_expires_seconds: Annotated[float, Field(gt=0)] = _DAY
    question_expires_seconds: Annotated[float, Field(gt=0)] = _DAY
    external_expires_seconds: Annotated[float, Field(gt=0)] = 7 * _DAY
    children_expires_seconds: Annotated[float, Field(gt=0)] = 3_600.0
    may_ask_questions: bool = False


class CompactionPolicy(SpecModel):
    """When and how older turns are summarised to keep the prompt within budget.

    Attributes:
        trigger_tokens: prompt size (as the provider reported it) that starts a
            compaction.
        keep_recent_turns: the newest turns always kept verbatim.
        model: the model that writes the summary; None uses the agent's own.
        max_summary_tokens: a cap on the summary's length.
        summary_instructions: extra guidance added to the built-in instruction.
    """

    trigger_tokens: Annotated[int, Field(gt=0)]
    keep_recent_turns: Annotated[int, Field(ge=1, le=100)] = 3
    model: ModelId | None = None
    max_summary_tokens: Annotated[int, Field(ge=1, le=32_000)] = 2_048
    summary_instructions: Annotated[Text | None, Field(max_length=4_000)] = None


__all__ = ["CompactionPolicy", "Limits", "SuspensionPolicy"]
