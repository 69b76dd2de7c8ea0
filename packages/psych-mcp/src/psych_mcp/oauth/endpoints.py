"""Talking to the token and registration endpoints.

``request_token`` posts one grant to the token endpoint with the client's
authentication and turns the answer into a ``StoredToken`` or a typed ``OAuthError``.
``register_client`` performs dynamic client registration (RFC 7591). Error messages
carry the server's OAuth error code and description with every secret that was sent
cut out of them.
"""

import base64
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any
from typing import Literal
from urllib.parse import quote

from pydantic import SecretStr

from psych_mcp.oauth.errors import OAuthError
from psych_mcp.oauth.errors import OAuthErrorKind
from psych_mcp.oauth.http import Answer
from psych_mcp.oauth.http import OAuthHttp
from psych_mcp.oauth.http import host_of
from psych_mcp.oauth.http import redact
from psych_mcp.oauth.metadata import AuthorizationServerMetadata
from psych_mcp.oauth.models import RegisteredClient
from psych_mcp.oauth.models import StoredToken
from psych_runtime import Scope

_log = logging.getLogger(__name__)

_CODES_AS_KINDS: dict[str, OAuthErrorKind] = {
    "invalid_client": "invalid_client",
    "invalid_grant": "invalid_grant",
    "invalid_scope": "invalid_scope",
    "unauthorized_client": "unauthorized_client",
}
_MAX_DESCRIPTION = 300

type Grant = Literal["authorization_code", "client_credentials"]


@dataclass(frozen=True, slots=True)
class ClientAuth:
    """Who the client is at the token endpoint and how it proves it.

    Attributes:
        client_id: the client identifier.
        secret: the client secret, for a confidential client.
        method: ``client_secret_basic``, ``client_secret_post`` or ``none``.
        dynamic: whether the client came from dynamic registration (and may be
            registered anew when the server no longer knows it).
    """

    client_id: str
    secret: SecretStr | None
    method: str
    dynamic: bool

    def __repr__(self) -> str:
        return f"ClientAuth(client_id={self.client_id!r}, method={self.method!r})"


def secret_auth_method(metadata: AuthorizationServerMetadata) -> str:
    """How a client holding a secret authenticates at this server.

    HTTP Basic when the server accepts it (it is RFC 8414's default), else the form
    body, else Basic anyway.
    """
    supported = metadata.token_endpoint_auth_methods_supported
    if "client_secret_basic" in supported:
        return "client_secret_basic"
    if "client_secret_post" in supported:
        return "client_secret_post"
    return "client_secret_basic"


def _basic(client_id: str, secret: str) -> str:
    # RFC 6749 section 2.3.1: both parts are form-urlencoded before Basic encoding.
    pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")


def _expires_at(value: object, now: datetime) -> datetime | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, int | float) and value >= 0:
        return now + timedelta(seconds=float(value))
    return None


def _strings(value: object, default: Any) -> tuple[str, ...]:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return tuple(default)


def _text(value: object) -> str | None:
    """``value`` when it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def _with_field(
    answer: Answer, name: str, kind: OAuthErrorKind, what: str, url: str, missing: str
) -> tuple[dict[str, Any], str]:
    """The answer's JSON object and its non-empty string ``name``.

    Raises:
        OAuthError: ``kind``, saying ``what`` sent no ``missing``, when the body is no
            JSON object or lacks the field.
    """
    data = answer.json_object() or {}
    value = _text(data.get(name))
    if value is None:
        raise OAuthError(kind, f"{what} at {host_of(url)} sent no {missing}")
    return data, value


def _error_details(answer: Answer, sent: Mapping[str, str | None]) -> tuple[str | None, str]:
    """The OAuth error code and a safe description of an error answer."""
    body = answer.json_object() or {}
    code = _text(body.get("error"))
    description = body.get("error_description")
    text = description if isinstance(description, str) else ""
    text = redact(text, sent.values())[:_MAX_DESCRIPTION]
    return code, text


def _refusal(
    answer: Answer, what: str, url: str, sent: Mapping[str, str | None]
) -> tuple[str | None, str]:
    if 300 <= answer.status < 400:
        return None, f"{what} at {host_of(url)} answered with a redirect, which is not followed"
    code, description = _error_details(answer, sent)
    message = f"{what} at {host_of(url)} refused the request (HTTP {answer.status}"
    message += f", {code})" if code else ")"
    if description:
        message += f": {description}"
    return code, message


async def request_token(
    http: OAuthHttp,
    scope: Scope,
    metadata: AuthorizationServerMetadata,
    client: ClientAuth,
    form: Mapping[str, str],
    *,
    now: datetime,
    requested_scope: str | None,
    resource: str,
) -> StoredToken:
    """Post one grant to the token endpoint.

    Args:
        http: how the request is sent.
        scope: on whose behalf.
        metadata: the authorization server's metadata.
        client: the client's identity and authentication.
        form: the grant's own parameters (``grant_type`` and the rest).
        now: the current time, to turn ``expires_in`` into an instant.
        requested_scope: recorded as the token's scope when the answer names none.
        resource: recorded as the token's resource indicator.

    Returns:
        The token.

    Raises:
        OAuthError: with the kind matching the server's error code
            (``invalid_client``, ``invalid_grant``...), ``token_request`` otherwise,
            ``unsupported`` for a token type other than Bearer.
    """
    body = dict(form)
    headers: dict[str, str] = {}
    secret = client.secret.get_secret_value() if client.secret is not None else None
    if secret and client.method == "client_secret_basic":
        headers["Authorization"] = _basic(client.client_id, secret)
    elif secret and client.method == "client_secret_post":
        body["client_id"] = client.client_id
        body["client_secret"] = secret
    else:
        body["client_id"] = client.client_id
    url = metadata.token_endpoint
    answer = await http.send(scope, "POST", url, form=body, headers=headers)
    grant = form.get("grant_type", "token")
    if answer.status != 200:
        sent = {**body, "client_secret": secret}
        code, message = _refusal(answer, f"the token endpoint ({grant})", url, sent)
        kind = _CODES_AS_KINDS.get(code or "", "token_request")
        if code is None and answer.status == 401:
            kind = "invalid_client"
        raise OAuthError(kind, message, status=answer.status, error_code=code)
    data, access = _with_field(
        answer, "access_token", "token_request", "the token endpoint", url, "access token"
    )
    token_type = data.get("token_type")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise OAuthError(
            "unsupported",
            f"the token endpoint at {host_of(url)} issued a token of type {token_type!r}; "
            "only Bearer tokens are supported",
        )
    refresh = _text(data.get("refresh_token"))
    _log.debug("token endpoint at %s granted a %s token", host_of(url), grant)
    return StoredToken(
        access_token=SecretStr(access),
        token_type="Bearer",
        expires_at=_expires_at(data.get("expires_in"), now),
        refresh_token=SecretStr(refresh) if refresh is not None else None,
        scope=_text(data.get("scope")) or requested_scope,
        issuer=metadata.issuer,
        resource=resource,
    )


async def register_client(
    http: OAuthHttp,
    scope: Scope,
    metadata: AuthorizationServerMetadata,
    registration: Mapping[str, Any],
) -> RegisteredClient:
    """Register a client dynamically (RFC 7591).

    Args:
        http: how the request is sent.
        scope: on whose behalf.
        metadata: the authorization server's metadata, with a registration endpoint.
        registration: the client metadata to register.

    Returns:
        The registered client, bound to the server's issuer.

    Raises:
        OAuthError: ``registration`` when the server offers no registration or refuses.
    """
    url = metadata.registration_endpoint
    if url is None:
        raise OAuthError(
            "registration",
            f"the authorization server {metadata.issuer!r} offers no dynamic client "
            "registration; set a preregistered client id",
        )
    answer = await http.send(scope, "POST", url, json_body=dict(registration))
    if answer.status not in (200, 201):
        code, message = _refusal(answer, "the registration endpoint", url, {})
        raise OAuthError("registration", message, status=answer.status, error_code=code)
    data, client_id = _with_field(
        answer, "client_id", "registration", "the registration endpoint", url, "client id"
    )
    secret = _text(data.get("client_secret"))
    expires = data.get("client_secret_expires_at")
    method = data.get("token_endpoint_auth_method")
    grant_types = data.get("grant_types")
    redirect_uris = data.get("redirect_uris")
    _log.debug("registered a client at %s", host_of(url))
    return RegisteredClient(
        client_id=client_id,
        client_secret=SecretStr(secret) if secret is not None else None,
        client_secret_expires_at=(
            datetime.fromtimestamp(expires, UTC)
            if isinstance(expires, int) and not isinstance(expires, bool) and expires > 0
            else None
        ),
        token_endpoint_auth_method=(
            method if isinstance(method, str) else registration["token_endpoint_auth_method"]
        ),
        grant_types=_strings(grant_types, registration["grant_types"]),
        redirect_uris=_strings(redirect_uris, registration.get("redirect_uris", ())),
        issuer=metadata.issuer,
    )


__all__ = ["ClientAuth", "Grant", "register_client", "request_token", "secret_auth_method"]
