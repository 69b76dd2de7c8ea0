"""Naming what went wrong with an MCP server, in the stable kinds the runtime reports.

The SDK runs each connection in task groups, so a refused connection can surface as an
``ExceptionGroup``, and a request that failed inside the SDK's own tasks often reaches
the caller only as a generic "Connection closed". The leaves of the error are read
first; when they say nothing specific, what the connection's ``EgressTransport`` saw
(a refusal, a refused redirect, a 401) tells the real story.

Kinds: ``egress_denied``, ``redirect_refused`` and ``unauthorized`` will fail again
the same way until someone changes the configuration; ``unreachable`` (refused
connections, timeouts, a closed connection, a 5xx) may pass later; ``tool_error`` is
the server refusing the request itself; ``protocol_error`` is an answer that made no
sense.
"""

from collections.abc import Iterator

import httpx2
import mcp_types as types
from mcp.shared.exceptions import MCPError

from psych_mcp._egress import EgressTransport, RedirectRefused
from psych_mcp._errors import Failure
from psych_runtime import EgressDenied

_LOST = frozenset({types.CONNECTION_CLOSED, types.REQUEST_TIMEOUT})


def leaves(error: BaseException) -> Iterator[BaseException]:
    """Every exception inside ``error``'s groups and causes, outermost first."""
    seen: set[int] = set()
    pending = [error]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        if current.__cause__ is not None:
            pending.append(current.__cause__)


def _specific(error: BaseException, server: str) -> Failure | None:
    """The failure one exception names by itself, or None when it is generic."""
    if isinstance(error, EgressDenied):
        return Failure("egress_denied", f"MCP server {server}: {error}", transient=False)
    if isinstance(error, RedirectRefused):
        return Failure("redirect_refused", f"MCP server {server}: {error}", transient=False)
    if isinstance(error, httpx2.TimeoutException | TimeoutError):
        return Failure("unreachable", f"MCP server {server} did not answer in time", transient=True)
    if isinstance(error, httpx2.TransportError | OSError):
        detail = str(error) or type(error).__name__
        return Failure("unreachable", f"MCP server {server} is unreachable: {detail}", True)
    return None


def failure_of(
    error: BaseException,
    server: str,
    transport: EgressTransport | None = None,
    *,
    refused_kind: str = "tool_error",
) -> Failure:
    """Classify ``error``, raised while talking to ``server``.

    Args:
        error: what was raised (a group, an ``MCPError``, a transport error...).
        server: the server's name in the Spec, for the message.
        transport: the connection's transport, consulted when ``error`` is generic.
        refused_kind: the kind of an error answer from the server that is not about
            the connection (an unknown tool, invalid arguments).
    """
    found = list(leaves(error))
    for leaf in found:
        specific = _specific(leaf, server)
        if specific is not None:
            return specific
    if transport is not None and transport.failure is not None:
        specific = _specific(transport.failure, server)
        if specific is not None:
            return specific
    status = transport.error_status if transport is not None else None
    if status in (401, 403):
        message = f"MCP server {server} refused the credential (HTTP {status})"
        return Failure("unauthorized", message, transient=False)
    for leaf in found:
        if isinstance(leaf, MCPError):
            if leaf.code in _LOST or (status is not None and status >= 500):
                message = f"MCP server {server} closed the connection: {leaf.message}"
                return Failure("unreachable", message, transient=True)
            return Failure(refused_kind, f"MCP server {server}: {leaf.message}", transient=False)
    detail = str(error) or type(error).__name__
    return Failure("protocol_error", f"MCP server {server} failed: {detail}", transient=False)


__all__ = ["failure_of", "leaves"]
