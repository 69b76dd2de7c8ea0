"""Tracing a child Run that a parent's Attempt drives inline (a delegation, an agent step).

Such a child never passes through a Worker, so its spans are opened here, under the
parent's delegation or step span, and closed when the parent is done driving it.
"""

import contextlib
from collections.abc import Iterator

from psych_runtime.core.ids import StepId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.runtime.journal import Journal


@contextlib.contextmanager
def trace_child(
    parent: Journal,
    child: Journal,
    *,
    call_id: ToolCallId | None = None,
    step_id: StepId | None = None,
) -> Iterator[None]:
    """Give ``child`` a tracer under the parent's call or step span while the block runs.

    Does nothing when the parent is not traced (no telemetry installed).
    """
    tracer = parent.observer
    if tracer is None:
        yield
        return
    traced = tracer.child(child.state, call_id=call_id, step_id=step_id)
    child.observer = traced
    ended: str | None = None
    try:
        yield
    except BaseException as error:
        ended = f"{type(error).__name__}: {error}"
        raise
    finally:
        child.observer = None
        traced.close(child.state, error=ended)


__all__ = ["trace_child"]
