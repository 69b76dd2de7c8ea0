"""The entry point, the registered tool source, and a plugin that stays cheap to load."""

import textwrap

import pytest

import psych_mcp
from psych_contract.plugin import ToolSourcePluginContract
from psych_contract.plugin import modules_loaded_by
from psych_mcp import McpTools
from psych_mcp import plugin
from psych_runtime.adapters import reset_plugin_manager
from psych_runtime.plugins.installed import installed_capabilities
from psych_runtime.spec import AgentSpec
from psych_runtime.spec import McpServer


class TestMcpPlugin(ToolSourcePluginContract):
    name = "mcp"
    plugin = plugin
    distribution = "psych-mcp"
    capability = "mcp_servers"
    source_type = McpTools
    spec = AgentSpec(
        name="ops",
        model="fake",
        mcp_servers=(McpServer(name="crm", url="https://crm.example.com/mcp"),),
    )
    refusal = "MCP servers"
    doctor_check = "mcp sdk"


def test_autoloading_finds_it_among_the_installed_plugins() -> None:
    reset_plugin_manager()
    try:
        assert "mcp_servers" in installed_capabilities()
    finally:
        reset_plugin_manager()


def test_the_plugin_builds_the_source_with_no_arguments() -> None:
    assert isinstance(plugin.build_mcp_tools(), McpTools)


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
