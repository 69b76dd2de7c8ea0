"""Building an HTTP tool's request from model arguments, and reading its response."""

import json
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from psych_runtime.core.spec import HttpTool
from psych_runtime.tools.errors import ToolArgumentsInvalid
from psych_runtime.tools.http.request import EXCERPT_CHARS
from psych_runtime.tools.http.request import REDACTED
from psych_runtime.tools.http.request import HttpToolFailed
from psych_runtime.tools.http.request import http_tool_definition
from psych_runtime.tools.http.request import interpret_response
from psych_runtime.tools.http.request import placeholders
from psych_runtime.tools.http.request import prepare_request
from psych_runtime.tools.http.request import query_pairs
from psych_runtime.tools.http.request import redact
from psych_runtime.tools.http.request import render_url
from psych_runtime.tools.http.request import with_query


def _tool(url: str = "https://api.example.com/orders", **fields: Any) -> HttpTool:
    return HttpTool(name="orders", description="Order API.", url=url, **fields)


# --- URL templates ----------------------------------------------------------------


def test_placeholders_are_listed_once_in_order() -> None:
    url = "https://x.test/{a}/items/{b}?again={a}&c={ c }"
    assert placeholders(url) == ("a", "b", "c")


def test_path_values_are_percent_encoded_so_they_stay_one_segment() -> None:
    url, used = render_url("https://x.test/orders/{id}/lines", {"id": "a b/../c?d#e"})
    assert url == "https://x.test/orders/a%20b%2F..%2Fc%3Fd%23e/lines"
    assert used == {"id"}


def test_query_values_cannot_add_parameters_of_their_own() -> None:
    url, _ = render_url("https://x.test/search?q={q}&page=1", {"q": "x&admin=1"})
    assert url == "https://x.test/search?q=x%26admin%3D1&page=1"
    assert httpx.URL(url).params.get_list("admin") == []
    assert httpx.URL(url).params["q"] == "x&admin=1"


def test_numbers_and_booleans_fill_placeholders_as_json_would_write_them() -> None:
    url, used = render_url(
        "https://x.test/{n}/{f}/{b}/{repeat}/{repeat}",
        {"n": 42, "f": 1.5, "b": False, "repeat": "r"},
    )
    assert url == "https://x.test/42/1.5/false/r/r"
    assert used == {"n", "f", "b", "repeat"}


def test_unicode_is_utf8_percent_encoded() -> None:
    url, _ = render_url("https://x.test/city/{name}", {"name": "Zürich"})
    assert url == "https://x.test/city/Z%C3%BCrich"


def test_a_missing_placeholder_argument_is_invalid_and_named() -> None:
    with pytest.raises(ToolArgumentsInvalid) as caught:
        render_url("https://x.test/{a}/{b}", {"a": "1"}, tool="orders")
    assert caught.value.tool == "orders"
    assert len(caught.value.problems) == 1
    assert "b" in caught.value.problems[0] and "missing" in caught.value.problems[0]


@pytest.mark.parametrize("value", [None, [1, 2], {"k": "v"}])
def test_structured_values_cannot_fill_a_placeholder(value: Any) -> None:
    with pytest.raises(ToolArgumentsInvalid):
        render_url("https://x.test/{a}", {"a": value})


@given(st.text(min_size=1, max_size=40).filter(lambda v: v not in {".", ".."}))
def test_any_text_round_trips_through_a_path_segment(value: str) -> None:
    url, _ = render_url("https://x.test/items/{v}/end", {"v": value})
    path = httpx.URL(url).raw_path.decode("ascii")
    segments = path.split("/")
    assert segments[:2] == ["", "items"] and segments[-1] == "end" and len(segments) == 4
    assert unquote(segments[2]) == value


@pytest.mark.parametrize("value", ["", ".", ".."])
def test_values_that_would_collapse_a_path_segment_are_refused(value: str) -> None:
    with pytest.raises(ToolArgumentsInvalid) as caught:
        render_url("https://x.test/items/{v}/end", {"v": value})
    assert caught.value.problems[0].startswith("v:")


def test_dots_and_empty_strings_are_fine_in_the_query() -> None:
    url, _ = render_url("https://x.test/items?a={a}&b={b}", {"a": "..", "b": ""})
    assert url == "https://x.test/items?a=..&b="


# --- where leftover arguments go -----------------------------------------------------


def test_get_sends_leftover_arguments_as_query_parameters() -> None:
    tool = _tool("https://x.test/orders/{id}?expand=lines", method="GET")
    prepared = prepare_request(tool, {"id": "A1", "verbose": True, "limit": 5})
    assert prepared.method == "GET"
    assert prepared.body is None
    url = httpx.URL(prepared.url)
    assert url.path == "/orders/A1"
    assert list(url.params.multi_items()) == [
        ("expand", "lines"),
        ("verbose", "true"),
        ("limit", "5"),
    ]


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
def test_body_methods_send_leftover_arguments_as_json(method: str) -> None:
    tool = _tool("https://x.test/orders/{id}", method=method, headers={"X-Team": "ops"})
    prepared = prepare_request(tool, {"id": "A1", "note": "late", "lines": [1, 2]})
    assert prepared.url == "https://x.test/orders/A1"
    assert prepared.body == {"note": "late", "lines": [1, 2]}
    assert dict(prepared.headers) == {"X-Team": "ops"}


def test_a_body_method_with_nothing_left_sends_an_empty_object() -> None:
    prepared = prepare_request(_tool("https://x.test/orders/{id}/cancel"), {"id": "A1"})
    assert prepared.body == {}


def test_delete_sends_leftover_arguments_in_the_query() -> None:
    tool = _tool("https://x.test/orders/{id}", method="DELETE")
    prepared = prepare_request(tool, {"id": "A1", "reason": "dup order"})
    assert prepared.body is None
    assert prepared.url == "https://x.test/orders/A1?reason=dup%20order"


def test_query_pairs_skip_nulls_repeat_lists_and_serialise_nested_values() -> None:
    pairs = query_pairs({"a": None, "tag": ["x", 2, True], "filter": {"k": [1]}, "s": "v"})
    assert pairs == [
        ("tag", "x"),
        ("tag", "2"),
        ("tag", "true"),
        ("filter", '{"k":[1]}'),
        ("s", "v"),
    ]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://x.test/p", "https://x.test/p?k=v%20w"),
        ("https://x.test/p?a=1", "https://x.test/p?a=1&k=v%20w"),
        ("https://x.test/p?", "https://x.test/p?k=v%20w"),
        ("https://x.test/p#frag", "https://x.test/p?k=v%20w#frag"),
    ],
)
def test_query_parameters_are_appended_after_existing_ones(url: str, expected: str) -> None:
    assert with_query(url, [("k", "v w")]) == expected
    assert with_query(url, []) == url


# --- the schema check ----------------------------------------------------------------


def test_a_placeholder_the_schema_already_requires_is_reported_once() -> None:
    tool = _tool(
        "https://x.test/orders/{id}",
        input_schema={"type": "object", "properties": {"id": {}}, "required": ["id"]},
    )
    with pytest.raises(ToolArgumentsInvalid) as caught:
        prepare_request(tool, {})
    assert caught.value.problems == ("id: required but missing",)


def test_prepare_request_reports_schema_and_placeholder_problems_together() -> None:
    tool = _tool(
        "https://x.test/orders/{id}/{line}",
        input_schema={"type": "object", "properties": {"qty": {"type": "integer"}}},
    )
    with pytest.raises(ToolArgumentsInvalid) as caught:
        prepare_request(tool, {"id": "A1", "qty": "two"})
    problems = caught.value.problems
    assert any(p.startswith("qty:") for p in problems)
    assert any(p.startswith("line:") for p in problems)
    assert "orders" in str(caught.value)


# --- the definition offered to the model ----------------------------------------------


def test_a_get_is_read_only_a_delete_destructive_and_other_methods_writes() -> None:
    assert http_tool_definition(_tool(method="GET")).annotations == {"read-only"}
    assert http_tool_definition(_tool(method="DELETE")).annotations == {"destructive"}
    for method in ("POST", "PUT", "PATCH"):
        assert http_tool_definition(_tool(method=method)).annotations == {"write"}


def test_the_definition_carries_the_specs_description_and_schema() -> None:
    schema = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
    definition = http_tool_definition(_tool("https://x.test/{id}", input_schema=schema))
    assert definition.name == "orders"
    assert definition.description == "Order API."
    assert definition.input_schema == schema


def test_without_a_schema_the_placeholders_become_required_strings() -> None:
    definition = http_tool_definition(_tool("https://x.test/{team}/members/{member}"))
    assert definition.input_schema == {
        "type": "object",
        "properties": {"team": {"type": "string"}, "member": {"type": "string"}},
        "required": ["team", "member"],
    }


# --- reading the response --------------------------------------------------------------


def _interpret(response: httpx.Response, secret: str | None = None) -> Any:
    return interpret_response(
        response, method="GET", url="https://x.test/orders/A1?token=q", secret=secret
    )


def test_a_json_response_is_parsed() -> None:
    assert _interpret(httpx.Response(200, json={"status": "shipped"})) == {"status": "shipped"}
    vendor = httpx.Response(
        201, content=b'{"a": [1]}', headers={"content-type": "application/problem+json"}
    )
    assert _interpret(vendor) == {"a": [1]}


def test_other_content_is_returned_as_text() -> None:
    response = httpx.Response(200, text="plain words", headers={"content-type": "text/plain"})
    assert _interpret(response) == "plain words"
    broken = httpx.Response(200, content=b"{not json", headers={"content-type": "application/json"})
    assert _interpret(broken) == "{not json"


def test_an_empty_success_is_none() -> None:
    assert _interpret(httpx.Response(204)) is None


def test_a_big_success_is_not_cut() -> None:
    body = "x" * 200_000
    assert _interpret(httpx.Response(200, text=body)) == body


def test_an_error_status_becomes_a_failure_quoting_the_body() -> None:
    response = httpx.Response(404, json={"error": "no order A1"})
    with pytest.raises(HttpToolFailed) as caught:
        _interpret(response)
    failure = caught.value
    assert failure.kind == "http_404"
    assert not failure.transient
    message = str(failure)
    assert "404" in message and "no order A1" in message
    assert "https://x.test/orders/A1" in message
    assert "token=q" not in message


def test_the_quoted_body_is_truncated() -> None:
    with pytest.raises(HttpToolFailed) as caught:
        _interpret(httpx.Response(500, text="e" * 10_000))
    assert caught.value.transient
    assert str(caught.value).count("e") < EXCERPT_CHARS + 50
    assert str(caught.value).endswith("...")


@pytest.mark.parametrize(("status", "transient"), [(400, False), (408, True), (429, True)])
def test_which_statuses_are_transient(status: int, transient: bool) -> None:
    with pytest.raises(HttpToolFailed) as caught:
        _interpret(httpx.Response(status))
    assert caught.value.kind == f"http_{status}"
    assert caught.value.transient is transient


def test_a_redirect_is_reported_not_followed() -> None:
    response = httpx.Response(302, headers={"location": "https://elsewhere.test/x"})
    with pytest.raises(HttpToolFailed) as caught:
        _interpret(response)
    assert caught.value.kind == "http_302"
    assert "https://elsewhere.test/x" in str(caught.value)


def test_an_echoed_secret_is_redacted_from_results_and_errors() -> None:
    secret = "tok-123456789"
    echoed = httpx.Response(
        200, json={"headers": {"authorization": f"Bearer {secret}"}, secret: [secret]}
    )
    result = _interpret(echoed, secret)
    assert secret not in json.dumps(result)
    assert result == {"headers": {"authorization": f"Bearer {REDACTED}"}, REDACTED: [REDACTED]}
    with pytest.raises(HttpToolFailed) as caught:
        _interpret(httpx.Response(401, text=f"bad token {secret}"), secret)
    assert secret not in str(caught.value)
    assert REDACTED in str(caught.value)


def test_very_short_secrets_are_not_searched_for() -> None:
    assert redact("a cab", "a") == "a cab"
    assert redact(["xyz-secret"], None) == ["xyz-secret"]
