"""Reading run-time data by path, and testing conditions on it.

A path starts at one root: ``input`` (the Run's input), ``state`` (the workflow state),
``item``, ``index`` and ``iteration`` (inside a foreach or a loop), or
``steps.<name>`` followed by ``output``, ``failure``, ``status`` or ``skipped``; then
``.key`` and ``[n]`` walk into the value. A path that leads nowhere reads as missing:
``exists`` is false, every comparison is false, and a value reference gives None.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Final

from pydantic import JsonValue

from psych_runtime.core.spec.workflow import Condition
from psych_runtime.core.spec.workflow import LiteralValue
from psych_runtime.core.spec.workflow import ValuePath


class _Missing:
    """What a path that leads nowhere reads as."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()

_SEGMENT = re.compile(r"\.([A-Za-z0-9_\-]+)|\[(\d+)\]")


@dataclass(frozen=True, slots=True)
class StepView:
    """What later steps may read of a finished step.

    Attributes:
        status: ``completed``, ``failed`` or ``skipped``.
        output: its output (None when it failed or was skipped).
        failure: its failure as ``{"kind": ..., "message": ...}``, when it failed.
    """

    status: str
    output: JsonValue = None
    failure: JsonValue = None

    @property
    def skipped(self) -> bool:
        """Whether its ``when`` condition was false."""
        return self.status == "skipped"


@dataclass(frozen=True, slots=True)
class Frame:
    """The data visible to one step: the Run's input, state, earlier steps, the item."""

    input: Mapping[str, JsonValue]
    state: Mapping[str, JsonValue] = field(default_factory=dict)
    steps: Mapping[str, StepView] = field(default_factory=dict)
    item: JsonValue | _Missing = MISSING
    index: int | _Missing = MISSING
    iteration: int | _Missing = MISSING

    def with_step(self, name: str, view: StepView) -> "Frame":
        """This frame with one more finished step."""
        return replace(self, steps={**self.steps, name: view})

    def with_state(self, state: Mapping[str, JsonValue]) -> "Frame":
        """This frame with the workflow state replaced."""
        return replace(self, state=state)

    def for_item(self, item: JsonValue, index: int) -> "Frame":
        """The frame of one foreach item."""
        return replace(self, item=item, index=index)

    def for_iteration(self, iteration: int) -> "Frame":
        """The frame of one loop iteration."""
        return replace(self, iteration=iteration)


def _walk(value: object, rest: str) -> object:
    position = 0
    while position < len(rest):
        match = _SEGMENT.match(rest, position)
        if match is None:
            return MISSING
        key, index = match.group(1), match.group(2)
        if key is not None and isinstance(value, Mapping) and key in value:
            value = value[key]
        elif index is not None and isinstance(value, list) and int(index) < len(value):
            value = value[int(index)]
        else:
            return MISSING
        position = match.end()
    return value


_FIELD = re.compile(r"(output|failure|status|skipped)(?=$|[.\[])")


def _step_value(path: str, frame: Frame) -> object:
    # Step names may hold dots, so the longest known name that fits wins.
    for name in sorted(frame.steps, key=len, reverse=True):
        head = f"steps.{name}."
        match = _FIELD.match(path, len(head)) if path.startswith(head) else None
        if match is None:
            continue
        view = frame.steps[name]
        fields: dict[str, object] = {
            "output": view.output,
            "failure": view.failure,
            "status": view.status,
            "skipped": view.skipped,
        }
        return _walk(fields[match.group(1)], path[match.end() :])
    return MISSING


def resolve(path: str, frame: Frame) -> object:
    """The value at ``path`` in ``frame``, or ``MISSING``."""
    if path.startswith("steps."):
        return _step_value(path, frame)
    root, _, _ = path.partition(".")
    root = root.split("[", 1)[0]
    rest = path[len(root) :]
    values: dict[str, object] = {
        "input": dict(frame.input),
        "state": dict(frame.state),
        "item": frame.item,
        "index": frame.index,
        "iteration": frame.iteration,
    }
    if root not in values:
        return MISSING
    start = values[root]
    return MISSING if start is MISSING else _walk(start, rest)


def value_of(ref: ValuePath | LiteralValue, frame: Frame) -> JsonValue:
    """What a value reference gives: a literal as written, a path's value or None."""
    if isinstance(ref, LiteralValue):
        return ref.value
    found = resolve(ref.path, frame)
    return None if isinstance(found, _Missing) else found  # type: ignore[return-value]


def render(mapping: Mapping[str, ValuePath | LiteralValue], frame: Frame) -> dict[str, JsonValue]:
    """Every reference of ``mapping`` read in ``frame``, key by key."""
    return {key: value_of(ref, frame) for key, ref in mapping.items()}


def _compare(op: str, found: object, wanted: JsonValue) -> bool:
    try:
        match op:
            case "eq":
                return found == wanted
            case "ne":
                return found != wanted
            case "gt":
                return found > wanted  # type: ignore[operator]
            case "gte":
                return found >= wanted  # type: ignore[operator]
            case "lt":
                return found < wanted  # type: ignore[operator]
            case "lte":
                return found <= wanted  # type: ignore[operator]
            case "in":
                return isinstance(wanted, list) and found in wanted
            case "contains":
                if isinstance(found, str):
                    return isinstance(wanted, str) and wanted in found
                if isinstance(found, list | dict):
                    return wanted in found
                return False
            case "matches":
                return (
                    isinstance(found, str)
                    and isinstance(wanted, str)
                    and bool(re.search(wanted, found))
                )
    except TypeError:
        return False  # an ordering between a number and a string, say
    return False


def holds(condition: Condition, frame: Frame) -> bool:
    """Whether ``condition`` is true in ``frame``."""
    if condition.all_of is not None:
        result = all(holds(part, frame) for part in condition.all_of)
    elif condition.any_of is not None:
        result = any(holds(part, frame) for part in condition.any_of)
    else:
        assert condition.path is not None  # the model guarantees exactly one shape
        found = resolve(condition.path, frame)
        if condition.op == "exists":
            result = not isinstance(found, _Missing)
        elif isinstance(found, _Missing):
            result = False
        elif condition.op == "truthy":
            result = bool(found)
        else:
            result = _compare(condition.op, found, condition.value)
    return result != condition.negate


__all__ = ["MISSING", "Frame", "StepView", "holds", "render", "resolve", "value_of"]
