"""Remote tool sources a Spec connects to: MCP servers and A2A peers.

What these sources offer is discovered at run time and is never part of the hash; the
Spec fixes only where to connect, with which named credential, and how far the offer
is narrowed (``allow``). Narrowing lists are sets, so they are sorted here and two
authors listing the same names in a different order publish the same Version.
"""

from typing import Annotated, Literal

from pydantic import Field, field_validator

from psych_runtime.core.spec.base import SpecModel, sorted_set
from psych_runtime.core.spec.names import Name, Text, check_http_url

Url = Annotated[str, Field(min_length=1, max_length=2048)]
SecretName = Annotated[str, Field(min_length=1, max_length=256)]


def _check_allow_patterns(patterns: tuple[str, ...]) -> tuple[str, ...]:
    for pattern in patterns:
        if not pattern:
            raise ValueError("an allow entry may not be empty")
        if "*" in pattern[:-1]:
            raise ValueError(
                f"{pattern!r}: '*' is only allowed as the last character (a prefix match)"
            )
    return sorted_set(patterns)


class McpOAuth(SpecModel):
    """How to obtain a token for an MCP server protected by OAuth 2.1.

    Attributes:
        grant: ``client_credentials`` for service-to-service access, or
            ``authorization_code`` when an end user consents in a browser.
        preregistered_client_id: a client id issued out of band, when there is one.
        client_secret_credential: the name of the secret holding the client secret.
        issuer: the authorization server, when it cannot be discovered.
        cimd_url: where this client's metadata document is published.
        allow_dynamic_registration: whether the client may register itself.
        application_type: ``native`` or ``web``, as sent at registration.
        client_name: the name shown on a consent screen.
        redirect_uris: where an authorization code may be returned, in the author's
            order (the first is the default).
    """

    grant: Literal["authorization_code", "client_credentials"] = "client_credentials"
    preregistered_client_id: Annotated[str | None, Field(min_length=1, max_length=512)] = None
    client_secret_credential: SecretName | None = None
    issuer: Url | None = None
    cimd_url: Url | None = None
    allow_dynamic_registration: bool = True
    application_type: Literal["native", "web"] = "native"
    client_name: Annotated[Text, Field(min_length=1, max_length=256)] = "psych"
    redirect_uris: tuple[Url, ...] = ()

    @field_validator("issuer", "cimd_url")
    @classmethod
    def _http_urls(cls, url: str | None) -> str | None:
        return None if url is None else check_http_url(url)


class McpServer(SpecModel):
    """An MCP server whose tools join the agent's tool set each turn.

    Attributes:
        name: the Spec-local name; it prefixes every tool the server offers.
        url: the server endpoint.
        transport: ``http`` (Streamable HTTP) or the legacy ``sse``.
        credential: the name of a secret sent as a bearer token.
        oauth: how to acquire a token instead, for a server behind OAuth.
        allow: which offered tools the Spec grants; ``name*`` matches a prefix and an
            empty tuple grants everything offered.
        optional: whether a Run may proceed when the server cannot be reached.
        preload: list the catalogue up front (True), always defer it behind the
            catalogue tools (False), or decide by its size (None).
    """

    name: Name
    url: Url
    transport: Literal["http", "sse"] = "http"
    credential: SecretName | None = None
    oauth: McpOAuth | None = None
    allow: tuple[str, ...] = ()
    optional: bool = False
    preload: bool | None = None

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        return check_http_url(url)

    @field_validator("allow")
    @classmethod
    def _allow(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        return _check_allow_patterns(patterns)


class A2APeer(SpecModel):
    """Another agent reached over A2A, offered to the model as a tool source.

    Attributes:
        name: the Spec-local alias; it prefixes the names the model sees.
        url: the peer's base URL or the URL of its Agent Card.
        credential: the name of a secret sent with each request.
        scheme: the authorization scheme the credential is sent under.
        tenant: the tenant to address on a multi-tenant peer.
        allow: the peer skill ids granted; empty grants every skill.
        optional: whether a Run may proceed when the peer cannot be reached.
        extensions: A2A extension URIs to request.
    """

    name: Name
    url: Url
    credential: SecretName | None = None
    scheme: Annotated[str, Field(pattern=r"^[A-Za-z0-9!#$%&'*+.^_`|~\-]{1,64}$")] = "Bearer"
    tenant: Annotated[str | None, Field(min_length=1, max_length=256)] = None
    allow: tuple[Annotated[str, Field(min_length=1)], ...] = ()
    optional: bool = False
    extensions: tuple[Annotated[str, Field(min_length=1, max_length=2048)], ...] = ()

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        return check_http_url(url)

    @field_validator("allow", "extensions")
    @classmethod
    def _as_set(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        return sorted_set(values)


__all__ = ["A2APeer", "McpOAuth", "McpServer"]
