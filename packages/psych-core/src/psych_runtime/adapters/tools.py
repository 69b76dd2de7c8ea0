"""Tool sources outside the process, for whoever writes one (an MCP or A2A client...).

The ``ToolSource`` port, the remote tool source base and its failure vocabulary, the
connection pool keyed by Scope, the tenant plane of narrowing, and the egress-checked
transport an SDK's own HTTP client is given.
"""

from typing import TYPE_CHECKING

from psych_runtime.egress.gated import GatedTransport as GatedTransport
from psych_runtime.egress.gated import RedirectRefusal as RedirectRefusal
from psych_runtime.egress.gated import egress_allows as egress_allows
from psych_runtime.egress.gated import redirect_message as redirect_message
from psych_runtime.plugins.offer import lazy_exports
from psych_runtime.tools.access import PermitAll as PermitAll
from psych_runtime.tools.access import TenantAccess as TenantAccess
from psych_runtime.tools.access import permitted_for as permitted_for
from psych_runtime.tools.context import ToolContext as ToolContext
from psych_runtime.tools.pool import ConnectionPool as ConnectionPool
from psych_runtime.tools.pool import Poolable as Poolable
from psych_runtime.tools.remote import FAILURE_KINDS as FAILURE_KINDS
from psych_runtime.tools.remote import AnyPolicy as AnyPolicy
from psych_runtime.tools.remote import Catalogue as Catalogue
from psych_runtime.tools.remote import ClosedOnExit as ClosedOnExit
from psych_runtime.tools.remote import Endpoint as Endpoint
from psych_runtime.tools.remote import RemoteError as RemoteError
from psych_runtime.tools.remote import RemoteFailure as RemoteFailure
from psych_runtime.tools.remote import RemotePool as RemotePool
from psych_runtime.tools.remote import RemoteTools as RemoteTools
from psych_runtime.tools.remote import TransportNotes as TransportNotes
from psych_runtime.tools.remote import admitted as admitted
from psych_runtime.tools.remote import credential_digest as credential_digest
from psych_runtime.tools.remote import failure_of as failure_of
from psych_runtime.tools.remote import failure_of_error as failure_of_error
from psych_runtime.tools.remote import failure_of_status as failure_of_status
from psych_runtime.tools.remote import leaves as leaves
from psych_runtime.tools.remote import offerable as offerable
from psych_runtime.tools.remote import pool_or_own as pool_or_own
from psych_runtime.tools.remote import qualified as qualified
from psych_runtime.tools.sources import SourceCallFailed as SourceCallFailed
from psych_runtime.tools.sources import SourceTool as SourceTool
from psych_runtime.tools.sources import SourceTools as SourceTools
from psych_runtime.tools.sources import ToolSource as ToolSource
from psych_runtime.tools.sources import ToolSourceUnavailable as ToolSourceUnavailable

if TYPE_CHECKING:
    from psych_runtime.egress.sdk_client import EgressTransport as EgressTransport
    from psych_runtime.egress.sdk_client import RedirectRefused as RedirectRefused
    from psych_runtime.egress.sdk_client import egress_client as egress_client

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
