"""The base of every remote tool source: MCP servers, A2A peers, and any a third party adds.

A remote source is two objects. A ``RemotePool`` holds the process's connections for
one protocol, keyed by tenant, principal, endpoint and credential; one pool serves
every Run of every tenant. A ``RemoteTools`` is the ``ToolSource`` the runtime asks
every turn: it narrows with the core's one narrowing function and reports failures
in one vocabulary (``FAILURE_KINDS``). A protocol subclasses both and adds only what
is its own: how to open a connection, list a catalogue and make a call.
"""

from psych_runtime._closing import ClosedOnExit
from psych_runtime.tools.remote.failures import (
    FAILURE_KINDS,
    RemoteError,
    RemoteFailure,
    TransportNotes,
    failure_of,
    failure_of_error,
    failure_of_status,
    leaves,
)
from psych_runtime.tools.remote.names import (
    FUNCTION_NAME,
    OWNER_SEPARATOR,
    Endpoint,
    admitted,
    offerable,
    qualified,
)
from psych_runtime.tools.remote.pool import (
    AnyPolicy,
    Catalogue,
    RemotePool,
    credential_digest,
)
from psych_runtime.tools.remote.source import RemoteTools, pool_or_own

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
