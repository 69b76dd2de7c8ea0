"""JSON Schema 2020-12: every schema a Spec declares, checked at publish and at run time."""

from typing import Any

import pytest

from psych_runtime.core.json_schema import schema_problems
from psych_runtime.core.json_schema import value_problems

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "mode": {"type": "string", "enum": ["fast", "safe"]},
        "maybe": {"type": ["string", "null"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "address": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
    "required": ["id"],
}


def test_arguments_that_fit_the_schema_pass() -> None:
    arguments: dict[str, Any] = {
        "id": "A1",
        "count": 3,
        "ratio": 2,
        "flag": False,
        "mode": "safe",
        "maybe": None,
        "tags": ["a", "b"],
        "address": {"city": "Oslo"},
        "extra": "allowed unless additionalProperties is false",
    }
    assert value_problems(arguments, SCHEMA) == []


def test_an_integral_float_counts_as_an_integer() -> None:
    assert value_problems({"id": "A1", "count": 3.0}, SCHEMA) == []
    assert value_problems({"id": "A1", "count": 3.5}, SCHEMA) != []


@pytest.mark.parametrize(
    ("arguments", "where"),
    [
        ({}, "id"),
        ({"id": 7}, "id"),
        ({"id": "A1", "count": True}, "count"),
        ({"id": "A1", "ratio": "2"}, "ratio"),
        ({"id": "A1", "flag": 1}, "flag"),
        ({"id": "A1", "mode": "reckless"}, "mode"),
        ({"id": "A1", "maybe": 3}, "maybe"),
        ({"id": "A1", "tags": ["a", 2]}, "tags[1]"),
        ({"id": "A1", "address": {}}, "address.city"),
        ({"id": "A1", "address": "Oslo"}, "address"),
    ],
)
def test_each_kind_of_slip_is_reported_where_it_is(arguments: dict[str, Any], where: str) -> None:
    problems = value_problems(arguments, SCHEMA)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{where}:")


def test_every_problem_is_listed_at_once() -> None:
    problems = value_problems({"count": "x", "flag": "y"}, SCHEMA)
    assert {p.split(":")[0] for p in problems} == {"id", "count", "flag"}


def test_additional_properties_false_refuses_unknown_keys() -> None:
    schema = {"type": "object", "properties": {"a": {}}, "additionalProperties": False}
    assert value_problems({"a": 1}, schema) == []
    assert value_problems({"a": 1, "b": 2}, schema) == ["b: not allowed here"]


def test_an_enum_does_not_confuse_true_with_one() -> None:
    schema = {"type": "object", "properties": {"v": {"enum": [1, "x"]}}}
    assert value_problems({"v": 1}, schema) == []
    assert value_problems({"v": True}, schema) != []


def test_an_empty_schema_checks_nothing() -> None:
    assert value_problems({"anything": [1, {"x": None}]}, {}) == []


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (
            {"type": "object", "properties": {"amount": {"type": "number", "minimum": 0}}},
            {"amount": -1},
        ),
        ({"type": "array", "maxItems": 20}, list(range(21))),
        ({"type": "string", "pattern": "^A[0-9]+$"}, "B7"),
        ({"type": "string", "maxLength": 3}, "abcd"),
        ({"oneOf": [{"type": "integer"}, {"type": "string"}]}, 1.5),
        ({"not": {"const": "x"}}, "x"),
        ({"type": "array", "uniqueItems": True}, [1, 1]),
        ({"$defs": {"id": {"type": "string"}}, "$ref": "#/$defs/id"}, 5),
        ({"type": "number", "multipleOf": 5}, 7),
        ({"type": "object", "minProperties": 1}, {}),
    ],
)
def test_every_keyword_is_enforced_not_only_types(schema: dict[str, Any], value: Any) -> None:
    assert schema_problems(schema) == []
    assert value_problems(value, schema) != []


def test_bounds_report_where_and_what() -> None:
    schema = {"type": "object", "properties": {"amount": {"type": "number", "minimum": 0}}}
    assert value_problems({"amount": -1}, schema) == ["amount: -1 is less than the minimum of 0"]
    assert value_problems({"amount": 0}, schema) == []


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "nonsense"},
        {"type": "object", "properties": {"x": {"type": "str"}}},
        {"minimum": "zero"},
        {"required": "id"},
        {"$ref": "https://schemas.example.com/order.json"},
        {"$ref": "#/$defs/missing"},
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
    ],
)
def test_a_schema_the_validator_cannot_use_is_a_problem(schema: dict[str, Any]) -> None:
    problems = schema_problems(schema)
    assert len(problems) == 1 and problems[0]


def test_a_schema_naming_the_one_dialect_is_accepted() -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}
    assert schema_problems(schema) == []


def test_an_unusable_schema_refuses_every_value_rather_than_none() -> None:
    problems = value_problems({"x": 1}, {"type": "nonsense"})
    assert len(problems) == 1 and problems[0].startswith("(schema):")
