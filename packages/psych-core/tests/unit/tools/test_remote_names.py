"""Remote tools' qualified names, the provider's name rule, and the narrowing planes.

Every remote source (MCP servers, A2A peers) names and narrows through these, and
they narrow only through the core's one function.
"""

import pytest

from psych_runtime.core import narrowing
from psych_runtime.core.spec import names
from psych_runtime.spec import A2APeer
from psych_runtime.spec import McpServer
from psych_runtime.tools.remote import OWNER_SEPARATOR
from psych_runtime.tools.remote import admitted
from psych_runtime.tools.remote import offerable
from psych_runtime.tools.remote import qualified

CRM = McpServer(name="crm", url="https://crm.example.com/mcp")


def test_the_separator_and_the_name_rule_are_the_cores() -> None:
    assert OWNER_SEPARATOR == names.OWNER_SEPARATOR
    assert qualified("crm", "find") == "crm__find"


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


def test_an_a2a_peer_narrows_its_skill_ids_the_same_way() -> None:
    peer = A2APeer(name="billing", url="https://b.example.com", allow=("refund*", "lookup"))
    assert admitted(peer, "refund_full", None)
    assert not admitted(peer, "lookup_all", None)
    assert admitted(peer, "lookup", ("billing__*",))
    assert not admitted(peer, "lookup", ("other__*",))


def test_every_plane_must_permit_the_qualified_name() -> None:
    assert admitted(CRM, "find", None, None)
    assert admitted(CRM, "find", ["crm__*"], ["crm__find"])
    assert not admitted(CRM, "find", ["crm__*"], ["crm__export"])
    assert not admitted(CRM, "find", None, [])  # an empty plane permits nothing


def test_admission_is_the_cores_narrowing(monkeypatch: pytest.MonkeyPatch) -> None:
    # The names module narrows through the core's function and has no rule of its own.
    from psych_runtime.tools.remote import names as remote_names

    asked: list[tuple[str, ...]] = []

    def recording(offered: object, **planes: object) -> tuple[str, ...]:
        asked.append(tuple(offered))  # type: ignore[call-overload]
        return narrowing.narrow(offered, **planes)  # type: ignore[arg-type]

    monkeypatch.setattr(remote_names, "narrow", recording)
    assert admitted(CRM, "find", ["crm__*"])
    assert asked == [("find",), ("crm__find",)]
