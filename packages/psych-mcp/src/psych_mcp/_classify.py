"""Naming what went wrong with an MCP server, in the shared failure vocabulary.

The SDK runs each connection in task groups, so a refused connection can surface as an
``ExceptionGroup``, and a request that failed inside the SDK's own tasks often reaches
the caller only as a generic "Connection closed". The core's ``failure_of`` reads the
leaves of the error and what the connection's ``EgressTransport`` saw (a refusal, a
refused redirect, a 401); this module adds what only MCP has, the SDK's ``MCPError``:
a lost connection or a request timeout is ``unreachable``, anything else the server
refusing the request.
"""

import mcp_types as types
from mcp.shared.exceptions import MCPError

from psych_mcp._egress import EgressTransport
from psych_runtime.adapters.tools import RemoteFailure
from psych_runtime.adapters.tools import failure_of as remote_failure_of

_LOST = frozenset({types.CONNECTION_CLOSED, types.REQUEST_TIMEOUT})


def failure_of(
    error: BaseException,
    server: str,
    transport: EgressTransport | None = None,
    *,
    refused_kind: str = "tool_error",
) -> RemoteFailure:
    """Classify ``error``, raised while talking to ``server``.

    Args:
        error: what was raised (a group, an ``MCPError``, a transport error...).
        server: the server's name in the Spec, for the message.
        transport: the connection's transport, consulted when ``error`` is generic.
        refused_kind: the kind of an error answer from the server that is not about
            the connection (an unknown tool, invalid arguments).
    """
    label = f"MCP server {server}"
    status = transport.error_status if transport is not None else None

    def explain(leaf: BaseException) -> RemoteFailure | None:
        if not isinstance(leaf, MCPError):
            return None
        if leaf.code in _LOST or (status is not None and status >= 500):
            message = f"{label} closed the connection: {leaf.message}"
            return RemoteFailure("unreachable", message, transient=True)
        return RemoteFailure(refused_kind, f"{label}: {leaf.message}", transient=False)

    return remote_failure_of(error, label, transport, explain=explain)


__all__ = ["failure_of"]
