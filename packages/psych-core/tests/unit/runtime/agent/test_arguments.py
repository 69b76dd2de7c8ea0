"""``arguments.py``: a model's argument text becomes a storable object, or a reason why not."""

import pytest

from psych_runtime.core.storable import MAX_JSON_DEPTH
from psych_runtime.runtime.agent.arguments import parse_arguments
from psych_runtime.runtime.agent.arguments import read_arguments


@pytest.mark.parametrize("raw", ["", "   ", "\n\t", "{}"])
def test_no_arguments_at_all_are_an_empty_object(raw: str) -> None:
    assert parse_arguments(raw) == ({}, None)


def test_an_object_is_taken_as_it_is() -> None:
    assert parse_arguments(' {"order_id": "A1", "n": [1, 2.5, null]} ') == (
        {"order_id": "A1", "n": [1, 2.5, None]},
        None,
    )


def test_text_that_is_not_json_says_where_it_went_wrong() -> None:
    value, problem = parse_arguments('{"order_id": "A1",}')
    assert value is None
    assert problem is not None and problem.startswith("the arguments are not valid JSON (")
    assert "at position 18" in problem


@pytest.mark.parametrize("raw", ["[1, 2]", '"A1"', "42", "null", "true"])
def test_json_that_is_not_an_object_is_refused(raw: str) -> None:
    assert parse_arguments(raw) == (None, "the arguments must be a JSON object")


def test_nesting_past_what_the_stores_keep_is_refused() -> None:
    deep = '{"a": ' * (MAX_JSON_DEPTH + 1) + "1" + "}" * (MAX_JSON_DEPTH + 1)
    value, problem = parse_arguments(deep)
    assert value is None and problem is not None and "cannot be used" in problem


def test_nesting_the_parser_cannot_follow_is_refused_the_same_way() -> None:
    hopeless = "[" * 100_000 + "]" * 100_000
    value, problem = parse_arguments(hopeless)
    assert value is None
    assert problem == f"the arguments nest deeper than the {MAX_JSON_DEPTH} levels allowed"


@pytest.mark.parametrize(
    "raw",
    [
        '{"text": "\\ud800"}',  # a lone surrogate, written as its escape
        '{"n": NaN}',
        '{"n": Infinity}',
        '{"n": -Infinity}',
    ],
)
def test_values_no_store_can_keep_are_refused_naming_where_they_are(raw: str) -> None:
    value, problem = parse_arguments(raw)
    assert value is None
    assert problem is not None and problem.startswith("the arguments cannot be used: arguments")


async def test_long_argument_text_is_read_off_the_event_loop_with_the_same_answer() -> None:
    long_object = '{"text": "' + "a" * 40_000 + '"}'
    assert await read_arguments(long_object) == parse_arguments(long_object)
    assert (await read_arguments(long_object))[0] == {"text": "a" * 40_000}
    broken = '{"text": "' + "a" * 40_000
    value, problem = await read_arguments(broken)
    assert value is None and problem is not None and "not valid JSON" in problem
    short = '{"order_id": "A1"}'
    assert await read_arguments(short) == ({"order_id": "A1"}, None)
