"""Executing an HTTP tool call through the egress seam.

An HTTP tool is data in a Spec, so nothing about it is trusted more than the model's
own arguments: the request goes out only through the Runtime's ``HttpTransport`` (and
therefore its ``EgressPolicy``), with the run's Scope, and the credential is looked up
by name at the moment of the call. Every way the call can fail becomes an
``HttpToolFailed`` with a stable kind, which the agent loop records as error data for
the model; nothing here crashes a Run.

Failure kinds: ``http_transport_required`` (the Runtime has no transport),
``invalid_arguments`` (raised as ``ToolArgumentsInvalid``), ``missing_credential``,
``egress_denied``, ``timeout`` and ``connection_error`` (both transient), and
``http_<status>`` for any answer outside 2xx.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from pydantic import JsonValue

from psych_runtime.core.records import JsonObject
from psych_runtime.core.scope import Scope
from psych_runtime.core.spec import HttpTool
from psych_runtime.egress.policy import EgressDenied
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.tools.http.request import HttpToolFailed
from psych_runtime.tools.http.request import interpret_response
from psych_runtime.tools.http.request import prepare_request
from psych_runtime.tools.http.request import redact_text
from psych_runtime.tools.secrets import SecretResolver

if TYPE_CHECKING:
    pass

TRANSPORT_REQUIRED_MESSAGE = (
    "HTTP tools need an HttpTransport, and this Runtime was built without one "
    "(pass http=HttpTransport(...) to Runtime or session()); the request was not sent."
)


async def _credential(tool: HttpTool, scope: Scope, secrets: SecretResolver | None) -> str | None:
    """The secret to send for ``tool``, None when it needs none.

    Raises:
        HttpToolFailed: ``missing_credential``; the message names the secret, never a value.
    """
    if tool.credential is None:
        return None
    resolved = await secrets.resolve(scope, tool.credential) if secrets is not None else None
    if resolved is None:
        why = (
            "the Runtime's SecretResolver has no secret by that name for this tenant"
            if secrets is not None
            else "the Runtime has no SecretResolver"
        )
        raise HttpToolFailed(
            "missing_credential",
            f"this tool needs the credential {tool.credential!r}, but {why}; "
            "the request was not sent",
        )
    return resolved.secret.get_secret_value()


async def call_http_tool(
    tool: HttpTool,
    arguments: JsonObject,
    *,
    scope: Scope,
    transport: HttpTransport | None,
    secrets: SecretResolver | None,
) -> JsonValue:
    """Send one HTTP tool call and return its result as JSON data.

    Args:
        tool: the tool as the Spec describes it.
        arguments: the model's arguments, already parsed.
        scope: the Run's Scope; the egress policy and the secret lookup both see it.
        transport: the Runtime's transport; None fails the call.
        secrets: where the tool's credential is looked up.

    Returns:
        The parsed JSON body, the body as text, or None for an empty body.

    Raises:
        ToolArgumentsInvalid: the arguments do not fit the tool.
        HttpToolFailed: the request was refused, failed, or answered outside 2xx.
    """
    import httpx  # deferred: importing httpx costs a noticeable part of a second

    if transport is None:
        raise HttpToolFailed("http_transport_required", TRANSPORT_REQUIRED_MESSAGE)
    prepared = prepare_request(tool, arguments)
    secret = await _credential(tool, scope, secrets)
    headers = dict(prepared.headers)
    if secret is not None:
        headers["Authorization"] = f"Bearer {secret}"
    where = f"{prepared.method} {prepared.url.split('?', 1)[0]}"
    try:
        # httpx bounds each phase (connect, each read...); this bounds the whole call,
        # so a server that trickles bytes cannot hold it past timeout_seconds.
        async with asyncio.timeout(tool.timeout_seconds):
            response = await transport.request(
                prepared.method,
                prepared.url,
                scope=scope,
                headers=headers,
                json=prepared.body,
                timeout=tool.timeout_seconds,
            )
    except EgressDenied as error:
        raise HttpToolFailed("egress_denied", f"{where} was not sent: {error}") from None
    except (TimeoutError, httpx.TimeoutException):
        raise HttpToolFailed(
            "timeout",
            f"{where} got no complete answer within {tool.timeout_seconds:g} seconds",
            transient=True,
        ) from None
    except httpx.TransportError as error:
        detail = redact_text(str(error) or type(error).__name__, secret)
        raise HttpToolFailed(
            "connection_error", f"{where} failed: {detail}", transient=True
        ) from None
    return interpret_response(response, method=prepared.method, url=prepared.url, secret=secret)


__all__ = ["TRANSPORT_REQUIRED_MESSAGE", "call_http_tool"]
