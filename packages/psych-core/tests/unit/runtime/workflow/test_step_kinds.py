"""Every kind of step a Spec can hold is run by exactly one entry of the engine's table."""

import typing

from psych_runtime.core.spec.workflow import Step
from psych_runtime.runtime.workflow.engine import STEP_KINDS


def _step_models() -> set[type]:
    union = typing.get_args(Step)[0]
    return set(typing.get_args(union))


def test_every_step_model_has_an_entry_and_every_entry_a_model() -> None:
    assert set(STEP_KINDS) == _step_models()


def test_composites_are_the_kinds_that_run_other_steps() -> None:
    composite = {model.__name__ for model, kind in STEP_KINDS.items() if kind.composite}
    assert composite == {
        "ParallelStep",
        "BranchStep",
        "ForeachStep",
        "LoopStep",
        "WorkflowStepRef",
    }
