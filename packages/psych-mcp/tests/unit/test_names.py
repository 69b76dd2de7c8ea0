"""Qualified names, the provider's name rule, and the two narrowing planes."""

import pytest

from psych_mcp._names import OWNER_SEPARATOR, admitted, matches, offerable, qualified
from psych_runtime.core import narrowing
from psych_runtime.core.spec import names
from psych_runtime.spec import McpServer

CRM = McpServer(name="crm", url="https://crm.example.com/mcp")


def test_the_separator_and_the_name_rule_are_the_cores() -> None:
    assert OWNER_SEPARATOR == names.OWNER_SEPARATOR
    assert qualified("crm", "find") == "crm__find"


@pytest.mark.parametrize(
    ("name", "pattern"),
    [
        ("find", "find"),
        ("find", "fin*"),
        ("find", "*"),
        ("find", "finder"),
        ("find", "find*x"),
        ("crm__find", "crm__*"),
        ("", "*"),
        ("find", ""),
    ],
)
def test_matching_agrees_with_the_cores_narrowing(name: str, pattern: str) -> None:
    assert matches(name, pattern) == narrowing.matches(name, pattern)


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("crm__find", True),
        ("crm__find-all", True),
        ("crm__" + "x" * 59, True),
        ("crm__" + "x" * 60, False),  # 65 characters
        ("crm__find.all", False),
        ("crm__find all", False),
        ("crm__héllo", False),
        ("crm.v2__find", False),  # a server name may hold a dot; a function name may not
    ],
)
def test_only_names_a_provider_accepts_are_offerable(name: str, ok: bool) -> None:
    assert offerable(name) is ok


def test_allow_rules_narrow_by_the_servers_own_tool_name() -> None:
    narrowed = CRM.model_copy(update={"allow": ("find*", "export")})
    assert admitted(narrowed, "find_contact", None)
    assert admitted(narrowed, "export", None)
    assert not admitted(narrowed, "delete_all", None)
    assert admitted(CRM, "delete_all", None)  # no allow rules: everything offered


def test_the_tenant_plane_narrows_by_the_qualified_name() -> None:
    assert admitted(CRM, "find", ["crm__find"])
    assert admitted(CRM, "find", ["crm__*"])
    assert not admitted(CRM, "find", ["find"])
    assert not admitted(CRM, "find", [])
    narrowed = CRM.model_copy(update={"allow": ("export",)})
    assert not admitted(narrowed, "find", ["crm__*"])  # both planes must agree
