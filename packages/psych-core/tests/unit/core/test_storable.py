"""Which JSON-like values every store can keep, and the reasons given for the rest."""

import math

import pytest

from psych_runtime import PsychError, UnstorableValue
from psych_runtime.core.storable import MAX_JSON_DEPTH, check_storable, unstorable


def _nested(depth: int) -> object:
    value: object = "leaf"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        0,
        1.5,
        "",
        "plain text, emoji \U0001f600 and \x00 NUL",
        {"a": [1, 2, {"b": None}]},
        ("tuple", "values"),
        _nested(MAX_JSON_DEPTH),
        {"k": _nested(MAX_JSON_DEPTH - 1)},
    ],
)
def test_values_every_store_keeps_pass(value: object) -> None:
    assert unstorable(value) is None
    check_storable(value)


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("\ud800", "lone surrogate (U+D800)"),
        ("ok \udfff", "at character 3"),
        ({"outer": ["fine", {"inner": "x\udc00"}]}, "$['outer'][1]['inner']"),
        ({"key\ud83d": 1}, "key holding a lone surrogate"),
        ({"n": math.nan}, "non-finite"),
        ([math.inf], "$[0]"),
        (_nested(MAX_JSON_DEPTH + 1), f"deeper than {MAX_JSON_DEPTH}"),
        ({"k": _nested(MAX_JSON_DEPTH)}, f"deeper than {MAX_JSON_DEPTH}"),
    ],
)
def test_unstorable_values_are_named_with_their_path(value: object, fragment: str) -> None:
    reason = unstorable(value)
    assert reason is not None
    assert fragment in reason
    with pytest.raises(UnstorableValue) as caught:
        check_storable(value, what="tool arguments")
    assert isinstance(caught.value, PsychError)
    assert isinstance(caught.value, ValueError)
    assert str(caught.value).startswith("tool arguments cannot be stored")
    assert caught.value.reason == reason


def test_a_hostile_depth_does_not_exhaust_the_check_itself() -> None:
    reason = unstorable(_nested(100_000))
    assert reason is not None
    assert "deeper than" in reason
    # The reported path is shortened rather than repeating every level.
    assert len(reason) < 300


def test_a_surrogate_pair_spelled_correctly_is_fine() -> None:
    assert unstorable("\U0001f600".encode("utf-16", "surrogatepass").decode("utf-16")) is None
