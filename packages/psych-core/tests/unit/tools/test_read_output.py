"""Cutting pages out of a large result: the pure half of read_tool_output."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from psych_runtime.tools.errors import ToolArgumentsInvalid
from psych_runtime.tools.large_results.read_tool import MAX_LIMIT
from psych_runtime.tools.large_results.read_tool import MAX_LINE_CHARS
from psych_runtime.tools.large_results.read_tool import MAX_PAGE_CHARS
from psych_runtime.tools.large_results.read_tool import READ_TOOL_OUTPUT_DEFINITION
from psych_runtime.tools.large_results.read_tool import parse_read_request
from psych_runtime.tools.large_results.read_tool import read_page
from psych_runtime.tools.large_results.read_tool import reading_text
from psych_runtime.tools.large_results.read_tool import split_lines


def page(lines: list[str], **arguments: object) -> dict[str, object]:
    request, pattern = parse_read_request({"handle": "res_x", **arguments})  # type: ignore[dict-item]
    return read_page("res_x", lines, request, pattern)


def test_a_window_is_a_slice_with_the_position_of_the_next() -> None:
    lines = [f"line {i}" for i in range(10)]
    assert page(lines, offset=2, limit=3) == {
        "handle": "res_x",
        "total_lines": 10,
        "offset": 2,
        "lines": ["line 2", "line 3", "line 4"],
        "next_offset": 5,
        "truncated": False,
    }
    assert page(lines, offset=8, limit=3)["next_offset"] is None
    assert page(lines, offset=10)["lines"] == []
    assert page(lines, offset=99)["next_offset"] is None


def test_long_lines_are_cut_and_the_page_says_so() -> None:
    lines = ["x" * (MAX_LINE_CHARS + 5), "short"]
    result = page(lines)
    assert result["lines"] == ["x" * MAX_LINE_CHARS, "short"]
    assert result["truncated"] is True
    assert result["next_offset"] is None


def test_a_page_stops_at_its_character_budget_and_resumes_exactly() -> None:
    lines = ["y" * 1_500] * 20
    first = page(lines, limit=20)
    assert len(first["lines"]) == MAX_PAGE_CHARS // 1_500  # type: ignore[arg-type]
    assert first["truncated"] is True
    assert first["next_offset"] == len(first["lines"])  # type: ignore[arg-type]


def test_a_pattern_skips_lines_and_reports_where_matches_are() -> None:
    lines = ["a", "match 1", "b", "c", "match 2", "match 3", "d"]
    result = page(lines, pattern="^match", limit=2)
    assert result["lines"] == ["match 1", "match 2"]
    assert result["line_numbers"] == [1, 4]
    assert result["next_offset"] == 5
    rest = page(lines, pattern="^match", offset=5)
    assert rest["line_numbers"] == [5] and rest["next_offset"] is None


def test_a_limit_above_the_cap_is_lowered() -> None:
    lines = ["z"] * (MAX_LIMIT + 10)
    result = page(lines, limit=MAX_LIMIT * 5)
    assert len(result["lines"]) == MAX_LIMIT  # type: ignore[arg-type]
    assert result["next_offset"] == MAX_LIMIT


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"handle": "res_x", "pattern": "(open"}, "pattern"),
        ({"handle": "res_x", "offset": -1}, "offset"),
        ({"handle": "res_x", "limit": 0}, "limit"),
        ({"handle": "res_x", "regex": "a"}, "regex"),
        ({"offset": 3}, "handle"),
        ({"handle": ""}, "handle"),
    ],
)
def test_bad_arguments_name_the_field(arguments: dict[str, object], field: str) -> None:
    with pytest.raises(ToolArgumentsInvalid) as caught:
        parse_read_request(arguments)  # type: ignore[arg-type]
    assert field in str(caught.value)


def test_structured_values_read_as_indented_sorted_json() -> None:
    text = reading_text({"b": [1, 2], "a": "x"})
    assert split_lines(text) == ["{", '  "a": "x",', '  "b": [', "    1,", "    2", "  ]", "}"]
    assert reading_text("as is\n") == "as is\n"


def test_only_newlines_split_lines() -> None:
    assert split_lines("a\r\nb\x0cc\u2028d\n") == ["a\r", "b\x0cc\u2028d", ""]


def test_the_definition_is_a_read_only_tool_needing_a_handle() -> None:
    definition = READ_TOOL_OUTPUT_DEFINITION
    assert definition.name == "read_tool_output"
    assert definition.annotations == frozenset({"read-only"})
    assert definition.input_schema["required"] == ["handle"]
    json.dumps(definition.input_schema)


@given(
    st.lists(st.text(alphabet=st.characters(exclude_characters="\n"), max_size=2_500), max_size=60),
    st.integers(min_value=1, max_value=50),
)
def test_following_next_offset_reassembles_the_text(lines: list[str], limit: int) -> None:
    text = "\n".join(lines)
    source = split_lines(text)
    collected: list[str] = []
    offset: int | None = 0
    while offset is not None:
        result = page(source, offset=offset, limit=limit)
        shown = result["lines"]
        assert isinstance(shown, list)
        assert sum(len(line) for line in shown) <= MAX_PAGE_CHARS
        assert len(shown) <= limit
        collected.extend(shown)
        nxt = result["next_offset"]
        assert nxt is None or (isinstance(nxt, int) and nxt > offset)
        offset = nxt
    if all(len(line) <= MAX_LINE_CHARS for line in source):
        assert "\n".join(collected) == text
    else:
        assert [line[:MAX_LINE_CHARS] for line in source] == collected
