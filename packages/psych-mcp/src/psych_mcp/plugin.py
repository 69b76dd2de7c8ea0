"""The entry point psych-runtime loads: offers MCP servers as a tool source.

Registering the ``mcp`` tool source is what makes ``mcp_servers`` a capability of this
installation: ``publish`` then accepts Specs that name MCP servers, and a ``Runtime``
built without explicit ``tool_sources`` builds an ``McpTools`` with its own egress
policy and secrets.

psych-runtime imports every installed plugin when it first looks for one, and every
such ``Runtime`` calls the factory, so neither this module nor ``McpTools`` imports the
MCP SDK; it loads when a Run first connects to a server.
"""

from typing import TYPE_CHECKING

from psych_runtime.adapters.plugins import ToolSourceFactory
from psych_runtime.adapters.plugins import import_check
from psych_runtime.adapters.plugins import offer_doctor_checks
from psych_runtime.adapters.plugins import offer_tool_sources

if TYPE_CHECKING:
    from psych_mcp.tools import McpTools
    from psych_runtime import HttpTransport
    from psych_runtime import SecretResolver
    from psych_runtime.adapters.sandbox import Sandbox

PSYCH_PLUGIN_API = 1

_PACKAGE = "psych-mcp"


def build_mcp_tools(
    *,
    http: "HttpTransport | None" = None,
    secrets: "SecretResolver | None" = None,
    sandbox: "Sandbox | None" = None,
) -> "McpTools":
    """The ``McpTools`` a ``Runtime`` uses by default: its egress policy and secrets.

    Args:
        http: the Runtime's transport; its policy judges every MCP request.
        secrets: where servers' credentials (and stdio servers' secrets) are looked up
            per tenant.
        sandbox: where stdio servers start, when the Runtime has one.
    """
    from psych_mcp.pool import McpPool  # deferred: keep loading the plugin cheap
    from psych_mcp.tools import McpTools

    return McpTools(McpPool(transport=http, secrets=secrets, sandbox=sandbox))


psych_register_tool_sources = offer_tool_sources(
    ToolSourceFactory(
        name="mcp",
        capability="mcp_servers",
        build=build_mcp_tools,
        package=_PACKAGE,
        description="Tools of MCP servers over Streamable HTTP, SSE or stdio.",
        takes_sandbox=True,
    )
)

psych_doctor_checks = offer_doctor_checks(
    import_check(
        "mcp sdk",
        "mcp",
        ok="the MCP Python SDK is available",
        missing="cannot import the MCP Python SDK ({error}); pip install psych-mcp",
    )
)
