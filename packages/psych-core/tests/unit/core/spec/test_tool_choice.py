"""``ModelRef.tool_choice``: its forms, its place in the hash, and its check at publish."""

import json
from typing import Any

import pytest
from pydantic import ValidationError

from psych_runtime.core.spec import A2APeer
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.spec import CodeTool
from psych_runtime.core.spec import McpServer
from psych_runtime.core.spec import ModelRef
from psych_runtime.core.spec import NamedToolChoice
from psych_runtime.core.spec import Skill
from psych_runtime.core.spec import SubagentRef
from psych_runtime.core.validation import SpecValidationError
from psych_runtime.core.validation import collect_issues
from psych_runtime.core.validation import validate
from psych_runtime.core.version import Version
from psych_runtime.core.version import canonical_json
from psych_runtime.core.version import spec_hash


def agent(**model: Any) -> AgentSpec:
    return AgentSpec(
        name="courier",
        model=ModelRef("m", **model),
        tools=(CodeTool(name="lookup"), CodeTool(name="refund")),
    )


@pytest.mark.parametrize("mode", ["auto", "required", "none"])
def test_the_modes_are_kept_as_written(mode: str) -> None:
    assert ModelRef("m", tool_choice=mode).tool_choice == mode


def test_a_plain_tool_name_means_that_tool() -> None:
    named = ModelRef("m", tool_choice="lookup")
    assert named.tool_choice == NamedToolChoice(name="lookup")
    assert named == ModelRef("m", tool_choice=NamedToolChoice(name="lookup"))
    assert named == ModelRef.model_validate({"model": "m", "tool_choice": {"name": "lookup"}})
    # A tool that happens to be called like a mode is named in the long form.
    assert ModelRef("m", tool_choice=NamedToolChoice(name="none")).tool_choice == (
        NamedToolChoice(name="none")
    )


@pytest.mark.parametrize("bad", ["", {"name": ""}, {"tool": "x"}, 3])
def test_a_malformed_choice_is_refused(bad: object) -> None:
    with pytest.raises(ValidationError):
        ModelRef.model_validate({"model": "m", "tool_choice": bad})


def test_an_unset_choice_leaves_the_hash_as_it_was() -> None:
    # Specs published before tool_choice existed must keep their hash: it is absent
    # from the canonical form while unset (the golden hash test pins that form).
    raw = canonical_json(agent())
    assert b"tool_choice" not in raw
    assert spec_hash(agent()) == spec_hash(agent(tool_choice=None))


def test_each_choice_changes_the_hash() -> None:
    hashes = {
        spec_hash(agent()),
        spec_hash(agent(tool_choice="auto")),
        spec_hash(agent(tool_choice="required")),
        spec_hash(agent(tool_choice="none")),
        spec_hash(agent(tool_choice="lookup")),
        spec_hash(agent(tool_choice="refund")),
    }
    assert len(hashes) == 6
    assert json.loads(canonical_json(agent(tool_choice="lookup")))["model"]["tool_choice"] == {
        "name": "lookup"
    }


def test_a_choice_survives_export_and_import() -> None:
    from datetime import UTC
    from datetime import datetime

    version = Version.of(agent(tool_choice="lookup"), datetime(2026, 1, 1, tzinfo=UTC))
    again = Version.import_json(version.export_json())
    assert again.hash == version.hash
    assert isinstance(again.spec, AgentSpec)
    assert again.spec.model.tool_choice == NamedToolChoice(name="lookup")


@pytest.mark.parametrize("name", ["lookup", "load_skill", "crm__find_contact", "billing__pay"])
def test_a_named_tool_the_spec_can_offer_publishes(name: str) -> None:
    spec = AgentSpec(
        name="courier",
        model=ModelRef("m", tool_choice=name),
        tools=(CodeTool(name="lookup"),),
        skills=(Skill(name="s", description="when", body="how"),),
        mcp_servers=(McpServer(name="crm", url="https://crm.example/mcp"),),
        a2a_peers=(A2APeer(name="billing", url="https://billing.example"),),
    )
    # MCP servers and peers are run by plugins, so only this check is asked here.
    assert collect_issues(spec) == ()


def test_a_named_tool_the_spec_cannot_offer_is_refused_at_publish() -> None:
    with pytest.raises(SpecValidationError) as raised:
        validate(agent(tool_choice="lookpu"))
    [issue] = raised.value.issues
    assert issue.path == "model.tool_choice.name"
    assert "'lookpu'" in issue.message


def test_a_server_tool_outside_its_allow_list_is_refused() -> None:
    spec = AgentSpec(
        name="courier",
        model=ModelRef("m", tool_choice="crm__delete_all"),
        mcp_servers=(McpServer(name="crm", url="https://crm.example/mcp", allow=("find_*",)),),
    )
    [issue] = collect_issues(spec)
    assert issue.path == "model.tool_choice.name"
    assert "crm__delete_all" in issue.message


def test_a_subagent_choice_is_checked_against_the_subagent() -> None:
    child = AgentSpec(name="child", model=ModelRef("m", tool_choice="lookup"))
    parent = AgentSpec(
        name="parent",
        model=ModelRef("m"),
        tools=(CodeTool(name="lookup"),),
        subagents=(SubagentRef(name="child", description="does one careful thing", spec=child),),
    )
    with pytest.raises(SpecValidationError) as raised:
        validate(parent)
    assert [issue.path for issue in raised.value.issues] == [
        "subagents.0.spec.model.tool_choice.name"
    ]
