"""The entry point psych-runtime loads: offers A2A peers as a tool source.

Registering the ``a2a`` tool source makes ``a2a_peers`` a capability of this
installation: ``publish`` accepts Specs that name A2A peers, and a ``Runtime`` built
without explicit ``tool_sources`` builds an ``A2ATools`` with its own egress policy
and secrets. Neither this module nor ``A2ATools``'s construction imports the A2A SDK;
it loads when a Run first reaches a peer.
"""

from typing import TYPE_CHECKING

from psych_runtime.adapters.plugins import ToolSourceFactory
from psych_runtime.adapters.plugins import import_check
from psych_runtime.adapters.plugins import offer_doctor_checks
from psych_runtime.adapters.plugins import offer_tool_sources

if TYPE_CHECKING:
    from psych_a2a.tools import A2ATools
    from psych_runtime import HttpTransport
    from psych_runtime import SecretResolver

PSYCH_PLUGIN_API = 1

_PACKAGE = "psych-a2a"


def build_a2a_tools(
    *, http: "HttpTransport | None" = None, secrets: "SecretResolver | None" = None
) -> "A2ATools":
    """The ``A2ATools`` a ``Runtime`` uses by default: its egress policy and secrets.

    Args:
        http: the Runtime's transport; its policy judges every request to a peer.
        secrets: where peers' credentials are looked up per tenant.
    """
    from psych_a2a.pool import A2APool  # deferred: keep loading the plugin cheap
    from psych_a2a.tools import A2ATools

    return A2ATools(A2APool(transport=http, secrets=secrets))


psych_register_tool_sources = offer_tool_sources(
    ToolSourceFactory(
        name="a2a",
        capability="a2a_peers",
        build=build_a2a_tools,
        package=_PACKAGE,
        description="Other agents' skills over A2A (JSON-RPC, HTTP+JSON), behind egress policy.",
    )
)

psych_doctor_checks = offer_doctor_checks(
    import_check(
        "a2a sdk",
        "a2a.client",
        ok="the A2A Python SDK is available",
        missing="cannot import the A2A Python SDK ({error}); pip install psych-a2a",
    )
)
