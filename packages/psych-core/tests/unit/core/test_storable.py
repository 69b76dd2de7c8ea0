"""Which JSON-like values every store can keep, and the reasons given for the rest."""

import math

import pytest

from psych_runtime import PsychError
from psych_runtime import UnstorableValue
from psych_runtime.core.storable import MAX_JSON_DEPTH
from psych_runtime.core.storable import check_storable
from psych_runtime.core.storable import unstorable


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


def _leaf_paths(value: object, path: tuple[str | int, ...] = ()) -> list[tuple[object, ...]]:
    """Every path to a string or float leaf of a dumped record, and the leaf's value."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaf_paths(v, (*path, k))]
    if isinstance(value, list | tuple):
        return [p for i, v in enumerate(value) for p in _leaf_paths(v, (*path, i))]
    if isinstance(value, str | float) and not isinstance(value, bool):
        return [(*path, value)]
    return []


def _replaced(value: object, path: tuple[object, ...], new: object) -> object:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: _replaced(v, rest, new) if k == head else v for k, v in value.items()}
    assert isinstance(value, list | tuple)
    return [_replaced(v, rest, new) if i == head else v for i, v in enumerate(value)]


def test_every_text_and_float_field_of_real_records_is_looked_at() -> None:
    # The check skips fields whose declared type cannot hold a bad value; this proves
    # the skipping never hides one. Each string leaf of each record gets a lone
    # surrogate and each float a NaN or an infinity; whenever the record type accepts
    # the change, the check must refuse the result.
    from psych_contract import _data as data
    from psych_runtime.records import Record

    run = data.header(data.new_run_id())
    records: list[Record] = [data.admitted_for(run), *data.batch(run, 2, 24)]
    looked_at = 0
    for record in records:
        assert unstorable(record) is None
        dumped = record.model_dump(mode="python")
        for *path, leaf in _leaf_paths(dumped):
            bad_values = ["ok \ud800"] if isinstance(leaf, str) else [math.nan, math.inf]
            for bad in bad_values:
                try:
                    spoiled = type(record).model_validate(_replaced(dumped, tuple(path), bad))
                except ValueError:
                    continue  # this field does not take such a value at all
                looked_at += 1
                assert unstorable(spoiled) is not None, (record.type, path, bad)
    assert looked_at > 50
