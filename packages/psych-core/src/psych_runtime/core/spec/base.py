"""The base every Spec model shares, and the helpers that canonicalise collections.

A Spec is data that is hashed and stored, so three things hold for every part of it:
it cannot change after construction, it refuses keys it does not know (a typo must not
vanish silently from the hash), and it never holds a live Python object. The last rule
is checked before field validation so that the error names the callable plainly
instead of surfacing as an obscure type mismatch.
"""

import math
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Protocol

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import model_validator


class LiveObjectInSpec(ValueError):
    """A callable (or a value JSON cannot carry) was put where Spec data belongs."""


def _describe(value: object) -> str:
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if isinstance(name, str):
        return f"{type(value).__name__} {name!r}"
    return type(value).__name__


def _join(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


MAX_SPEC_DEPTH = 96
"""The deepest nesting of containers a Spec's raw input may have.

The same bound a stored record has (``core.storable.MAX_RECORD_DEPTH``): a Version is
stored as JSON and read back by the stores' parsers, and a deeper Spec is a mistake or
an attack, never a design.
"""


def refuse_live_objects(value: object, path: str = "") -> None:
    """Walk plain containers and refuse callables, non-finite floats and deep nesting.

    Already-built models are not entered: each one ran this check when it was
    constructed. Mapping keys are checked as well as values. The walk keeps its own
    stack, so a hostile input cannot turn the check into a ``RecursionError``.

    Args:
        value: the raw input about to be validated.
        path: where ``value`` sits, for the error message.

    Raises:
        LiveObjectInSpec: naming the offending value and its path.
    """
    stack: list[tuple[object, str, int]] = [(value, path, 0)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, BaseModel | str | bytes | int | bool) or item is None:
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise LiveObjectInSpec(
                    f"{where or 'the value'} is {item!r}; a Spec holds only finite numbers"
                )
            continue
        if callable(item):
            at = f" at {where!r}" if where else ""
            raise LiveObjectInSpec(
                f"found {_describe(item)}{at}: a Spec refers to tools and other code by "
                "name and can never hold a callable; register the function and use its name"
            )
        if isinstance(item, Mapping | list | tuple | set | frozenset) and depth >= MAX_SPEC_DEPTH:
            shown = where if len(where) <= 80 else where[:77] + "..."
            raise LiveObjectInSpec(
                f"{shown or 'the value'} nests deeper than {MAX_SPEC_DEPTH} levels; "
                "a Spec is never that deep"
            )
        if isinstance(item, Mapping):
            for key, child in item.items():
                stack.append((key, where, depth + 1))
                stack.append((child, _join(where, key), depth + 1))
        elif isinstance(item, list | tuple | set | frozenset):
            for index, child in enumerate(item):
                stack.append((child, _join(where, index), depth + 1))


class SpecModel(BaseModel):
    """Frozen, strict-keyed, callable-free base of every Spec model."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        allow_inf_nan=False,
        # Spelled the pre-2.11 way so the declared pydantic floor (2.9) behaves the same:
        # a loop's ``while`` is accepted under its alias and its Python name alike.
        populate_by_name=True,
    )

    @model_validator(mode="before")
    @classmethod
    def _refuse_live_objects(cls, data: object) -> object:
        refuse_live_objects(data)
        return data


class _Named(Protocol):
    @property
    def name(self) -> str: ...


def _duplicates(names: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    repeated: set[str] = set()
    for name in names:
        (repeated if name in seen else seen).add(name)
    return sorted(repeated)


def sorted_by_name[N: _Named](items: tuple[N, ...], what: str) -> tuple[N, ...]:
    """Refuse repeated names, then order by name so author order does not reach the hash.

    Args:
        items: the named parts as given.
        what: what they are, for the error message (``"tool"``, ``"skill"``...).

    Returns:
        The same parts sorted by name.

    Raises:
        ValueError: when two parts share a name.
    """
    repeated = _duplicates(item.name for item in items)
    if repeated:
        raise ValueError(f"duplicate {what} name(s): {', '.join(repeated)}")
    key: Callable[[N], str] = lambda item: item.name  # noqa: E731
    return tuple(sorted(items, key=key))


def sorted_set(values: tuple[str, ...]) -> tuple[str, ...]:
    """Collapse repeats and sort: the collection is a set that happens to be a tuple."""
    return tuple(sorted(set(values)))


def sorted_unique(values: tuple[str, ...], what: str) -> tuple[str, ...]:
    """Sort, refusing repeats rather than collapsing them (a repeat is likely a typo)."""
    repeated = _duplicates(values)
    if repeated:
        raise ValueError(f"duplicate {what}: {', '.join(repeated)}")
    return tuple(sorted(values))


__all__ = [
    "LiveObjectInSpec",
    "SpecModel",
    "refuse_live_objects",
    "sorted_by_name",
    "sorted_set",
    "sorted_unique",
]
