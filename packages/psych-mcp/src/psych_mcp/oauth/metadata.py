"""The metadata documents discovery reads, and where to look for them.

Two documents matter. The MCP server publishes protected resource metadata (RFC 9728)
naming the authorization servers it trusts; each authorization server publishes its
own metadata (RFC 8414, or OpenID Connect discovery) with its endpoints and what it
supports. Only the fields this client uses are modelled; others are ignored.
"""

from typing import Annotated
from urllib.parse import urlsplit
from urllib.parse import urlunsplit

from pydantic import AfterValidator
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field

from psych_mcp.oauth.models import canonical_resource


def _http_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme.lower() not in {"http", "https"} or not parts.hostname:
        raise ValueError("not an absolute http(s) URL")
    if parts.username is not None or parts.password is not None:
        raise ValueError("a URL with user info is not accepted")
    return value


HttpUrl = Annotated[str, Field(max_length=2048), AfterValidator(_http_url)]


class ProtectedResourceMetadata(BaseModel):
    """An MCP server's protected resource metadata (RFC 9728).

    Attributes:
        resource: the resource identifier the metadata describes.
        authorization_servers: issuers of the authorization servers it accepts.
        scopes_supported: the scopes it understands, when it says.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    resource: HttpUrl
    authorization_servers: tuple[HttpUrl, ...] = ()
    scopes_supported: tuple[str, ...] | None = None


class AuthorizationServerMetadata(BaseModel):
    """An authorization server's metadata (RFC 8414 or OpenID Connect discovery).

    Attributes:
        issuer: the server's issuer identifier.
        authorization_endpoint: where users are sent to approve access.
        token_endpoint: where tokens are requested.
        registration_endpoint: where clients register dynamically (RFC 7591).
        scopes_supported: the scopes it knows, when it says.
        grant_types_supported: the grants it offers, when it says.
        token_endpoint_auth_methods_supported: how clients may authenticate; the
            RFC 8414 default is ``client_secret_basic`` alone.
        code_challenge_methods_supported: the PKCE methods it accepts; absent means it
            does not support PKCE.
        client_id_metadata_document_supported: whether a client id may be the URL of a
            client metadata document.
        authorization_response_iss_parameter_supported: whether authorization
            responses carry ``iss`` (RFC 9207).
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    issuer: HttpUrl
    authorization_endpoint: HttpUrl | None = None
    token_endpoint: HttpUrl
    registration_endpoint: HttpUrl | None = None
    scopes_supported: tuple[str, ...] | None = None
    grant_types_supported: tuple[str, ...] | None = None
    token_endpoint_auth_methods_supported: tuple[str, ...] = ("client_secret_basic",)
    code_challenge_methods_supported: tuple[str, ...] = ()
    client_id_metadata_document_supported: bool = False
    authorization_response_iss_parameter_supported: bool = False


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc


def protected_resource_metadata_urls(server_url: str, hint: str | None) -> list[str]:
    """Where to look for a server's protected resource metadata, in order.

    The URL a ``WWW-Authenticate`` challenge named comes first; then the well-known
    location with the server's path appended (RFC 9728 section 3.1); then the
    well-known location at the root of the server's origin.

    Args:
        server_url: the MCP server URL.
        hint: the ``resource_metadata`` URL from a challenge, when there was one.

    Returns:
        Candidate URLs without repeats.
    """
    scheme, netloc = _origin(server_url)
    path = urlsplit(server_url).path.rstrip("/")
    urls = [hint] if hint else []
    if path:
        urls.append(
            urlunsplit((scheme, netloc, f"/.well-known/oauth-protected-resource{path}", "", ""))
        )
    urls.append(urlunsplit((scheme, netloc, "/.well-known/oauth-protected-resource", "", "")))
    return list(dict.fromkeys(urls))


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """Where to look for an authorization server's metadata, in order.

    For an issuer with a path the RFC 8414 location (path appended to the well-known
    prefix) comes first, then the same for OpenID Connect, then OpenID Connect's own
    rule (well-known suffix appended to the issuer). For an issuer without a path it
    is the RFC 8414 document, then the OpenID Connect one.

    Args:
        issuer: the issuer identifier.

    Returns:
        Candidate URLs.
    """
    scheme, netloc = _origin(issuer)
    path = urlsplit(issuer).path.rstrip("/")

    def at(p: str) -> str:
        return urlunsplit((scheme, netloc, p, "", ""))

    if path:
        return [
            at(f"/.well-known/oauth-authorization-server{path}"),
            at(f"/.well-known/openid-configuration{path}"),
            at(f"{path}/.well-known/openid-configuration"),
        ]
    return [at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")]


def same_issuer(a: str, b: str) -> bool:
    """Whether two issuer identifiers name one server.

    Issuers compare as strings (RFC 8414 section 3.3), except that a bare origin with
    and without a trailing ``/`` is the same issuer.
    """
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    return long == short + "/" and urlsplit(short).path == ""


def resource_covers(resource: str, server_url: str) -> bool:
    """Whether metadata for ``resource`` may describe the server at ``server_url``.

    They must be the same URL, or ``resource`` must be a path prefix of the server URL
    on the same origin, ending at a ``/`` boundary.
    """
    resource = canonical_resource(resource)
    server_url = canonical_resource(server_url)
    if resource == server_url:
        return True
    r, s = urlsplit(resource), urlsplit(server_url)
    if (r.scheme, r.netloc) != (s.scheme, s.netloc) or r.query:
        return False
    prefix = r.path.rstrip("/") + "/"
    return s.path.startswith(prefix)


__all__ = [
    "AuthorizationServerMetadata",
    "ProtectedResourceMetadata",
    "authorization_server_metadata_urls",
    "protected_resource_metadata_urls",
    "resource_covers",
    "same_issuer",
]
