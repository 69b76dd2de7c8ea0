"""Tool sources outside the process, for whoever writes one (an MCP or A2A client...).

The ``ToolSource`` port, the remote tool source base and its failure vocabulary, the
connection pool keyed by Scope, the tenant plane of narrowing, and the egress-checked
transport an SDK's own HTTP client is given.
"""

from typing import TYPE_CHECKING

from psych_runtime.egress.gated import (
    GatedTransport as GatedTransport,
    RedirectRefusal as RedirectRefusal,
    egress_allows as egress_allows,
    redirect_message as redirect_message,
)
from psych_runtime.plugins.offer import lazy_exports
from psych_runtime.tools.access import (
    PermitAll as PermitAll,
    TenantAccess as TenantAccess,
    permitted_for as permitted_for,
)
from psych_runtime.tools.context import (
    ToolContext as ToolContext,
)
from psych_runtime.tools.pool import (
    ConnectionPool as ConnectionPool,
    Poolable as Poolable,
)
from psych_runtime.tools.remote import (
    FAILURE_KINDS as FAILURE_KINDS,
    AnyPolicy as AnyPolicy,
    Catalogue as Catalogue,
    ClosedOnExit as ClosedOnExit,
    Endpoint as Endpoint,
    RemoteError as RemoteError,
    RemoteFailure as RemoteFailure,
    RemotePool as RemotePool,
    RemoteTools as RemoteTools,
    TransportNotes as TransportNotes,
    admitted as admitted,
    credential_digest as credential_digest,
    failure_of as failure_of,
    failure_of_error as failure_of_error,
    failure_of_status as failure_of_status,
    leaves as leaves,
    offerable as offerable,
    pool_or_own as pool_or_own,
    qualified as qualified,
)
from psych_runtime.tools.sources import (
    SourceCallFailed as SourceCallFailed,
    SourceTool as SourceTool,
    SourceTools as SourceTools,
    ToolSource as ToolSource,
    ToolSourceUnavailable as ToolSourceUnavailable,
)

if TYPE_CHECKING:
    from psych_runtime.egress.sdk_client import (
        EgressTransport as EgressTransport,
        RedirectRefused as RedirectRefused,
        egress_client as egress_client,
    )

# What imports httpx (an SDK's own HTTP client with the egress check inside) loads on
# first use, so loading a plugin stays cheap.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "EgressTransport": "psych_runtime.egress.sdk_client",
        "RedirectRefused": "psych_runtime.egress.sdk_client",
        "egress_client": "psych_runtime.egress.sdk_client",
    },
)

__all__ = [
    "FAILURE_KINDS",
    "AnyPolicy",
    "Catalogue",
    "ClosedOnExit",
    "ConnectionPool",
    "EgressTransport",
    "Endpoint",
    "GatedTransport",
    "PermitAll",
    "Poolable",
    "RedirectRefusal",
    "RedirectRefused",
    "RemoteError",
    "RemoteFailure",
    "RemotePool",
    "RemoteTools",
    "SourceCallFailed",
    "SourceTool",
    "SourceTools",
    "TenantAccess",
    "ToolContext",
    "ToolSource",
    "ToolSourceUnavailable",
    "TransportNotes",
    "admitted",
    "credential_digest",
    "egress_allows",
    "egress_client",
    "failure_of",
    "failure_of_error",
    "failure_of_status",
    "leaves",
    "offerable",
    "permitted_for",
    "pool_or_own",
    "qualified",
    "redirect_message",
]
