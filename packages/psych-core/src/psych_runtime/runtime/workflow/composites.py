"""Composite steps: parallel, branch, foreach and loop, which run other steps.

A composite is never retried as a whole; its children are, each under its own policy,
and each child is memoised under its own id, so after a crash a composite picks up
exactly where its children got to. Children run concurrently (parallel branches,
foreach items with ``concurrency > 1``) inside one Attempt; a child that must wait
for a person or a timer lets its siblings finish what they are doing, and then the
Attempt stops.
"""

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from typing import Literal

from pydantic import JsonValue

from psych_runtime.core.ids import StepId
from psych_runtime.core.records import JsonObject
from psych_runtime.core.spec.workflow import BranchStep
from psych_runtime.core.spec.workflow import ForeachStep
from psych_runtime.core.spec.workflow import LoopStep
from psych_runtime.core.spec.workflow import ParallelStep
from psych_runtime.core.spec.workflow import Step
from psych_runtime.core.spec.workflow import WorkflowStepRef
from psych_runtime.runtime.workflow.context import StepFailed
from psych_runtime.runtime.workflow.context import Suspend
from psych_runtime.runtime.workflow.context import failure
from psych_runtime.runtime.workflow.values import Frame
from psych_runtime.runtime.workflow.values import StepView
from psych_runtime.runtime.workflow.values import holds
from psych_runtime.runtime.workflow.values import resolve

Path = tuple[str | int, ...]
StepRunner = Callable[[Step, Frame, Path, StepId | None], Awaitable[StepView]]
"""Runs one child step (memoised, retried, recorded) and says how it ended."""

StateReader = Callable[[], dict[str, JsonValue]]
"""The workflow state as the log has it now."""


async def _together(
    jobs: Sequence[Callable[[], Awaitable[StepView]]],
    *,
    concurrency: int,
    on_failure: Literal["fail_fast", "wait_all"],
) -> list[StepView]:
    """Run child jobs, at most ``concurrency`` at a time, and collect their views.

    ``fail_fast`` cancels the others at the first failure; ``wait_all`` lets every job
    end and then reports the first failure. A job that suspends does not stop the
    others; once they have ended, the suspension is raised.
    """
    limit = asyncio.Semaphore(concurrency)
    results: list[StepView | BaseException | None] = [None] * len(jobs)

    async def one(index: int) -> None:
        async with limit:
            try:
                results[index] = await jobs[index]()
            except Suspend as waiting:
                results[index] = waiting
            except StepFailed as failed:
                results[index] = failed
                if on_failure == "fail_fast":
                    raise

    tasks = [asyncio.ensure_future(one(index)) for index in range(len(jobs))]
    try:
        await asyncio.gather(*tasks)
    except StepFailed:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for result in results:
        if isinstance(result, StepFailed):
            raise result
    for result in results:
        if isinstance(result, Suspend):
            raise result
    return [result for result in results if isinstance(result, StepView)]


async def run_parallel(
    step: ParallelStep, frame: Frame, path: Path, sid: StepId, run: StepRunner
) -> JsonObject:
    """Every branch at once; the output maps each branch's name to its output."""
    jobs = [
        (lambda child=child, index=index: run(child, frame, (*path, index, child.name), sid))
        for index, child in enumerate(step.branches)
    ]
    views = await _together(jobs, concurrency=len(jobs), on_failure=step.on_branch_failure)
    return {child.name: view.output for child, view in zip(step.branches, views, strict=True)}


async def run_branch(
    step: BranchStep, frame: Frame, path: Path, sid: StepId, run: StepRunner
) -> JsonObject:
    """The first case whose condition holds (or every one, in ``all`` mode)."""
    chosen = [case for case in step.cases if holds(case.when, frame)]
    if step.mode == "first":
        chosen = chosen[:1]
    output: JsonObject = {}
    for case in chosen:
        view = await run(case.step, frame, (*path, case.name, case.step.name), sid)
        output[case.name] = view.output
    if not chosen and step.otherwise is not None:
        view = await run(step.otherwise, frame, (*path, "otherwise", step.otherwise.name), sid)
        output["otherwise"] = view.output
    names: list[JsonValue] = [case.name for case in chosen]
    if not names and step.otherwise is not None:
        names = ["otherwise"]
    # ``first`` picks one arm (its name, or None); ``all`` lists every arm that ran.
    output["chosen"] = (names[0] if names else None) if step.mode == "first" else names
    return output


async def run_foreach(
    step: ForeachStep, frame: Frame, path: Path, sid: StepId, run: StepRunner
) -> JsonObject:
    """The body once per item of a list, up to ``concurrency`` items at a time."""
    items = resolve(step.items.path, frame)
    if not isinstance(items, list):
        raise StepFailed(
            failure("invalid_items", f"{step.items.path} is not a list: {type(items).__name__}")
        )
    body = step.body
    jobs = [
        (
            lambda item=item, index=index: run(
                body, frame.for_item(item, index), (*path, index, body.name), sid
            )
        )
        for index, item in enumerate(items)
    ]
    views = await _together(jobs, concurrency=step.concurrency, on_failure=step.on_item_failure)
    return {"items": [view.output for view in views], "count": len(views)}


async def run_loop(
    step: LoopStep, frame: Frame, path: Path, sid: StepId, run: StepRunner, state: StateReader
) -> JsonObject:
    """The body again and again: while a condition holds, or until one does."""
    body = step.body
    last: JsonValue = None
    current = frame
    for iteration in range(step.max_iterations):
        current = current.for_iteration(iteration).with_state(state())
        if step.while_ is not None and not holds(step.while_, current):
            return {"iterations": iteration, "last": last}
        view = await run(body, current, (*path, iteration, body.name), sid)
        last = view.output
        current = current.with_step(body.name, view).with_state(state())
        if step.until is not None and holds(step.until, current):
            return {"iterations": iteration + 1, "last": last}
    if step.while_ is not None and not holds(
        step.while_, current.for_iteration(step.max_iterations).with_state(state())
    ):
        return {"iterations": step.max_iterations, "last": last}
    raise StepFailed(
        failure("loop_exhausted", f"the loop ran {step.max_iterations} times without ending")
    )


NestedRunner = Callable[[WorkflowStepRef, Frame, Path, StepId], Awaitable[JsonObject]]
"""Runs a nested workflow in its own namespace and returns its output."""


__all__ = [
    "NestedRunner",
    "Path",
    "StateReader",
    "StepRunner",
    "run_branch",
    "run_foreach",
    "run_loop",
    "run_parallel",
]
