"""Checks of what a caller hands the control calls, made before anything is read.

``dispatch``, ``send``, ``interrupt`` and ``resume`` build records from their
arguments. A value of the wrong type would otherwise surface as a validation error
naming an internal record, or, worse, be coerced (``"yes"`` read as an approval). Each
call checks its arguments here first and refuses a wrong one with its own typed error;
a value of the right kind that no store could keep (a lone surrogate, a non-finite
number, nesting past the stores' depth) is ``UnstorableValue``, as everywhere else.
"""

from collections.abc import Callable
from collections.abc import Mapping

from psych_runtime.core.errors import shown
from psych_runtime.core.records import JsonObject
from psych_runtime.core.storable import check_storable
from psych_runtime.core.storable import unstorable

Refuse = Callable[[str, object, str], Exception]
"""Builds the call's own error from (argument, value, rule)."""


def checked_text(
    value: object, argument: str, refuse: Refuse, *, max_length: int, empty: bool = True
) -> str | None:
    """``value`` if it is None or a storable string of at most ``max_length`` characters.

    Raises:
        Exception: ``refuse``'s error for anything else.
        UnstorableValue: the string holds a lone surrogate.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise refuse(argument, value, f"it must be a string, not {type(value).__name__}")
    if len(value) > max_length:
        raise refuse(argument, value, f"it is longer than {max_length} characters")
    if not empty and not value:
        raise refuse(argument, value, "it must not be empty")
    check_storable(value, what=argument)
    return value


def checked_flag(value: object, argument: str, refuse: Refuse) -> bool | None:
    """``value`` if it is None, True or False; a truthy stand-in (``"yes"``, 1) is refused.

    Raises:
        Exception: ``refuse``'s error for anything else.
    """
    if value is None or value is True or value is False:
        return value
    raise refuse(argument, value, "it must be True, False or None")


def checked_object(value: object, argument: str, refuse: Refuse) -> JsonObject | None:
    """A copy of ``value`` if it is None or a JSON object every store can keep.

    Raises:
        Exception: ``refuse``'s error for a value that is not a mapping with string
            keys holding only JSON values (no sets, bytes or other objects).
        UnstorableValue: the object holds a lone surrogate, a non-finite number or
            nesting deeper than the stores keep.
    """
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise refuse(argument, value, f"it must be a JSON object, not {type(value).__name__}")
    check_storable(value, what=argument)
    problem = unstorable(value, strict=True)
    if problem is not None:
        raise refuse(argument, value, problem)
    return dict(value)


def refuser(call: str, error: Callable[[str, str], Exception]) -> Refuse:
    """A ``Refuse`` that words the message for ``call`` and builds ``error(message, arg)``."""

    def refuse(argument: str, value: object, rule: str) -> Exception:
        return error(f"{call}: {argument}={shown(value)} is refused: {rule}", argument)

    return refuse


__all__ = ["Refuse", "checked_flag", "checked_object", "checked_text", "refuser"]
