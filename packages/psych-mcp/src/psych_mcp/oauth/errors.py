"""The two errors the OAuth client raises on purpose.

``OAuthError`` means the flow failed and a retry as-is will fail again; its ``kind``
tells a program what went wrong without parsing the message. ``AuthorizationRequired``
is not a failure of the flow: it says that a person has to approve access in a browser
first, and carries the address to send them to.

Messages name servers, hosts and OAuth error codes, never a secret, a token, an
authorization code or a PKCE verifier.
"""

from typing import Literal

from psych_runtime import PsychError

type OAuthErrorKind = Literal[
    "configuration",
    "discovery",
    "registration",
    "missing_credential",
    "invalid_client",
    "invalid_grant",
    "invalid_scope",
    "unauthorized_client",
    "token_request",
    "unsupported",
    "state_mismatch",
    "transport",
]
"""What went wrong, as a closed set of names.

* ``configuration``: the Spec's ``McpOAuth`` cannot work as written (no redirect URI for
  the authorization code grant, no way to obtain a client id...).
* ``discovery``: the server's or the authorization server's metadata is missing,
  unreadable or inconsistent (another resource, another issuer).
* ``registration``: dynamic client registration was refused or is not offered.
* ``missing_credential``: the named client secret does not exist for the tenant.
* ``invalid_client``, ``invalid_grant``, ``invalid_scope``, ``unauthorized_client``: the
  token endpoint answered with that OAuth error code (a wrong client secret gives
  ``invalid_client``).
* ``token_request``: the token endpoint failed in another way.
* ``unsupported``: the authorization server lacks something this client insists on
  (PKCE with S256, bearer tokens).
* ``state_mismatch``: an authorization response does not belong to a pending request of
  this tenant, principal and server (unknown, reused, expired or foreign ``state``).
* ``transport``: an HTTP request could not be completed.
"""


class OAuthError(PsychError):
    """An OAuth step failed.

    Attributes:
        kind: the category of failure, see ``OAuthErrorKind``.
        message: a description that is safe to log and to show.
        status: the HTTP status of the answer that caused it, when there was one.
        error_code: the OAuth ``error`` code the server sent, when it sent one.
    """

    def __init__(
        self,
        kind: OAuthErrorKind,
        message: str,
        *,
        status: int | None = None,
        error_code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: OAuthErrorKind = kind
        self.message = message
        self.status = status
        self.error_code = error_code

    def __repr__(self) -> str:
        return f"OAuthError(kind={self.kind!r}, message={self.message!r})"


class AuthorizationRequired(PsychError):
    """A person must approve access in a browser before the server can be used.

    The consumer opens ``url`` for the user; the authorization server then sends the
    browser to one of the Spec's redirect URIs with ``code`` and ``state`` in the query,
    and the consumer hands both to ``McpOAuthClient.complete_authorization``.

    Attributes:
        server: the Spec-local name of the MCP server.
        url: the authorization URL to open. It carries no secret: the PKCE verifier
            stays on this side and only its hash travels.
        state: the ``state`` value in ``url``, to correlate the callback.
        requested_scope: the scopes asked for, space-separated, when any.
    """

    def __init__(self, *, server: str, url: str, state: str, requested_scope: str | None) -> None:
        super().__init__(
            f"MCP server {server!r} needs a user to authorize access: open the "
            "authorization URL in a browser, then complete the authorization with the "
            "code it returns"
        )
        self.server = server
        self.url = url
        self.state = state
        self.requested_scope = requested_scope


__all__ = ["AuthorizationRequired", "OAuthError", "OAuthErrorKind"]
