"""The entry point, the registered tool source, and a plugin that stays cheap to load."""

import textwrap
from collections.abc import Iterator

import pytest

import psych_mcp
import psych_runtime
from psych_contract.plugin import (
    check_entry_point,
    check_the_runtime_builds_the_source,
    modules_loaded_by,
    plugin_alone,
)
from psych_mcp import McpTools, plugin
from psych_runtime import InMemoryStore
from psych_runtime.adapters import ToolSourceFactory, reset_plugin_manager
from psych_runtime.plugins.installed import installed_capabilities, tool_source_factories
from psych_runtime.spec import AgentSpec, McpServer

SPEC = AgentSpec(
    name="ops",
    model="fake",
    mcp_servers=(McpServer(name="crm", url="https://crm.example.com/mcp"),),
)


@pytest.fixture
def mcp_plugin_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A plugin manager with autoload off and only this plugin, from its entry point."""
    with plugin_alone(monkeypatch, "mcp"):
        yield


@pytest.fixture
def no_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with plugin_alone(monkeypatch):
        yield


def test_the_distribution_declares_the_entry_point() -> None:
    check_entry_point("mcp", plugin, distribution="psych-mcp")


@pytest.mark.usefixtures("mcp_plugin_only")
def test_it_offers_the_mcp_servers_capability() -> None:
    (factory,) = tool_source_factories()
    assert isinstance(factory, ToolSourceFactory)
    assert (factory.name, factory.capability, factory.package) == (
        "mcp",
        "mcp_servers",
        "psych-mcp",
    )
    assert installed_capabilities() == {"mcp_servers"}


def test_autoloading_finds_it_among_the_installed_plugins() -> None:
    reset_plugin_manager()
    try:
        assert "mcp_servers" in installed_capabilities()
    finally:
        reset_plugin_manager()


@pytest.mark.usefixtures("mcp_plugin_only")
async def test_a_runtime_without_tool_sources_builds_one_with_its_policy_and_secrets() -> None:
    await check_the_runtime_builds_the_source(McpTools)
    assert isinstance(plugin.build_mcp_tools(), McpTools)


@pytest.mark.usefixtures("mcp_plugin_only")
async def test_publish_accepts_mcp_servers_without_a_validation_context() -> None:
    version = await psych_runtime.publish(
        InMemoryStore(), SPEC, scope=psych_runtime.Scope(tenant="acme")
    )
    assert version.spec == SPEC


@pytest.mark.usefixtures("no_plugins")
async def test_without_the_plugin_such_a_spec_is_refused() -> None:
    with pytest.raises(psych_runtime.SpecValidationError, match="MCP servers"):
        await psych_runtime.publish(InMemoryStore(), SPEC, scope=psych_runtime.Scope(tenant="acme"))


def test_the_doctor_check_finds_the_sdk() -> None:
    found: list[psych_runtime.adapters.DoctorCheck] = []
    plugin.psych_doctor_checks(found.append)
    (check,) = found
    assert check.name == "mcp sdk"
    result = check.run()
    assert result.ok, result.detail


@pytest.mark.parametrize(
    "code",
    [
        "import psych_mcp",
        "import psych_mcp.plugin",
        "from psych_mcp import McpTools; McpTools()",
        "import psych_runtime; psych_runtime.Runtime(psych_runtime.InMemoryStore(), None, None)",
    ],
)
def test_loading_the_plugin_or_building_the_source_does_not_import_the_sdk(code: str) -> None:
    assert modules_loaded_by(code, ["mcp", "mcp_types", "httpx2", "uvicorn"]) == []


def test_the_public_names_load_on_first_access() -> None:
    assert psych_mcp.McpTools is McpTools
    assert set(psych_mcp.__all__) >= {"McpTools", "McpStubServer", "PoolKey", "StubCall"}
    with pytest.raises(AttributeError):
        _ = psych_mcp.NoSuchThing


def test_the_package_docstring_example_runs() -> None:
    doc = psych_mcp.__doc__
    assert doc is not None
    example = textwrap.dedent(doc.split("::", 1)[1])
    exec(compile(example, "psych_mcp docstring", "exec"), {})
