"""The base of every remote tool source: MCP servers, A2A peers, and any a third party adds.

A remote source is two objects. A ``RemotePool`` holds the process's connections for
one protocol, keyed by tenant, principal, endpoint and credential; one pool serves
every Run of every tenant. A ``RemoteTools`` is the ``ToolSource`` the runtime asks
every turn: it narrows with the core's one narrowing function and reports failures
in one vocabulary (``FAILURE_KINDS``). A protocol subclasses both and adds only what
is its own: how to open a connection, list a catalogue and make a call.
"""

from psych_runtime._closing import ClosedOnExit
from psych_runtime.tools.remote.failures import FAILURE_KINDS
from psych_runtime.tools.remote.failures import RemoteError
from psych_runtime.tools.remote.failures import RemoteFailure
from psych_runtime.tools.remote.failures import TransportNotes
from psych_runtime.tools.remote.failures import failure_of
from psych_runtime.tools.remote.failures import failure_of_error
from psych_runtime.tools.remote.failures import failure_of_status
from psych_runtime.tools.remote.failures import leaves
from psych_runtime.tools.remote.names import FUNCTION_NAME
from psych_runtime.tools.remote.names import OWNER_SEPARATOR
from psych_runtime.tools.remote.names import Endpoint
from psych_runtime.tools.remote.names import admitted
from psych_runtime.tools.remote.names import offerable
from psych_runtime.tools.remote.names import qualified
from psych_runtime.tools.remote.pool import AnyPolicy
from psych_runtime.tools.remote.pool import Catalogue
from psych_runtime.tools.remote.pool import RemotePool
from psych_runtime.tools.remote.pool import credential_digest
from psych_runtime.tools.remote.source import RemoteTools
from psych_runtime.tools.remote.source import pool_or_own

__all__ = [
    "FAILURE_KINDS",
    "FUNCTION_NAME",
    "OWNER_SEPARATOR",
    "AnyPolicy",
    "Catalogue",
    "ClosedOnExit",
    "Endpoint",
    "RemoteError",
    "RemoteFailure",
    "RemotePool",
    "RemoteTools",
    "TransportNotes",
    "admitted",
    "credential_digest",
    "failure_of",
    "failure_of_error",
    "failure_of_status",
    "leaves",
    "offerable",
    "pool_or_own",
    "qualified",
]
