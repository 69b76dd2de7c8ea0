"""Remote tool sources a Spec connects to: MCP servers and A2A peers.

What these sources offer is discovered at run time and is never part of the hash; the
Spec fixes only where to connect (a URL, or for a stdio MCP server the command that
starts it), with which named credential, and how far the offer is narrowed
(``allow``). Narrowing lists are sets, so they are sorted here and two authors listing
the same names in a different order publish the same Version. Fields added later
(a stdio server's command) are left out of the stored form while unset, so a Spec
written before they existed hashes as it always did.
"""

import re
from typing import Annotated
from typing import Any
from typing import Literal
from typing import Self

from pydantic import AfterValidator
from pydantic import Field
from pydantic import SerializerFunctionWrapHandler
from pydantic import field_validator
from pydantic import model_serializer
from pydantic import model_validator

from psych_runtime.core.spec.base import SpecModel
from psych_runtime.core.spec.base import sorted_by_name
from psych_runtime.core.spec.base import sorted_set
from psych_runtime.core.spec.names import Name
from psych_runtime.core.spec.names import Text
from psych_runtime.core.spec.names import check_http_url

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


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_SHELL_LINE = re.compile(r"[\s;|&$`<>(){}*?!\\'\"]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class McpEnv(SpecModel):
    """One environment variable of a stdio MCP server: a literal value or a secret.

    The process gets exactly the variables its Spec lists, nothing of the host's
    environment; a secret is looked up for the Run's tenant when the process starts.

    Attributes:
        name: the variable (letters, digits and ``_``, not starting with a digit).
        value: its literal value, part of the hashed Spec; never a secret.
        secret: instead, the name of a secret the ``SecretResolver`` gives per tenant.
    """

    name: Annotated[str, Field(pattern=_ENV_NAME.pattern)]
    value: Annotated[str | None, Field(max_length=32_768)] = None
    secret: SecretName | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if (self.value is None) == (self.secret is None):
            raise ValueError(f"environment variable {self.name!r} takes a value or a secret")
        if self.value is not None and "\x00" in self.value:
            raise ValueError(f"environment variable {self.name!r} may not contain a NUL")
        return self

    @model_serializer(mode="wrap")
    def _unset_left_out(self, handler: SerializerFunctionWrapHandler) -> Any:
        dumped = handler(self)
        if isinstance(dumped, dict):
            for key in ("value", "secret"):
                if dumped.get(key) is None:
                    dumped.pop(key, None)
        return dumped


def _check_command(command: str) -> str:
    """Refuse what cannot name one program: a shell line, a relative path, control bytes."""
    if _CONTROL.search(command):
        raise ValueError("command may not contain control characters")
    if _SHELL_LINE.search(command):
        raise ValueError(
            f"command {command!r} is one program, not a shell line: put its arguments in "
            "args (no spaces, quotes or shell operators in command)"
        )
    if "/" in command and not command.startswith("/"):
        raise ValueError(
            f"command {command!r} is a relative path; give an absolute path or a bare "
            "program name looked up on the PATH"
        )
    return command


class McpServer(SpecModel):
    """An MCP server whose tools join the agent's tool set each turn.

    A server is reached at a ``url`` (Streamable HTTP, or the legacy SSE), or started
    from a ``command`` and spoken to over its stdin and stdout (``transport="stdio"``,
    implied by ``command``). A stdio server's process is started when a Run first
    needs it, one per tenant, principal, server and credential, with an environment
    made only of ``env``.

    Attributes:
        name: the Spec-local name; it prefixes every tool the server offers.
        url: the server endpoint (HTTP and SSE servers).
        transport: ``http`` (Streamable HTTP), the legacy ``sse``, or ``stdio``.
        credential: the name of a secret sent as a bearer token (HTTP and SSE).
        oauth: how to acquire a token instead, for a server behind OAuth.
        allow: which offered tools the Spec grants; ``name*`` matches a prefix and an
            empty tuple grants everything offered.
        optional: whether a Run may proceed when the server cannot be reached.
        preload: list the catalogue up front (True), always defer it behind the
            catalogue tools (False), or decide by its size (None).
        command: the program that starts a stdio server: an absolute path, or a bare
            name looked up on the ``PATH`` of ``env`` (else of the host).
        args: the program's arguments.
        env: the process's whole environment, each variable a literal or a secret.
    """

    name: Name
    url: Url | None = None
    transport: Literal["http", "sse", "stdio"] = "http"
    credential: SecretName | None = None
    oauth: McpOAuth | None = None
    allow: tuple[str, ...] = ()
    optional: bool = False
    preload: bool | None = None
    command: Annotated[str | None, Field(min_length=1, max_length=1024)] = None
    args: tuple[Annotated[str, Field(max_length=8192)], ...] = ()
    env: tuple[McpEnv, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _command_means_stdio(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("command") is not None and "transport" not in data:
            return {**data, "transport": "stdio"}
        return data

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        return None if url is None else check_http_url(url)

    @field_validator("command")
    @classmethod
    def _command(cls, command: str | None) -> str | None:
        return None if command is None else _check_command(command)

    @field_validator("args")
    @classmethod
    def _args(cls, args: tuple[str, ...]) -> tuple[str, ...]:
        if any("\x00" in arg for arg in args):
            raise ValueError("an argument may not contain a NUL")
        return args

    @field_validator("env")
    @classmethod
    def _env(cls, env: tuple[McpEnv, ...]) -> tuple[McpEnv, ...]:
        names = [variable.name for variable in env]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"environment variable(s) listed twice: {', '.join(twice)}")
        return tuple(sorted(env, key=lambda variable: variable.name))

    @model_validator(mode="after")
    def _where(self) -> Self:
        if self.transport == "stdio":
            if self.command is None:
                raise ValueError(f"stdio MCP server {self.name!r} needs a command")
            if self.url is not None:
                raise ValueError(f"stdio MCP server {self.name!r} takes a command, not a url")
            if self.credential is not None or self.oauth is not None:
                raise ValueError(
                    f"stdio MCP server {self.name!r}: pass secrets through env "
                    "(McpEnv(name=..., secret=...)), not credential or oauth"
                )
            return self
        if self.url is None:
            raise ValueError(f"MCP server {self.name!r} needs a url (or a command, for stdio)")
        if self.command is not None or self.args or self.env:
            raise ValueError(
                f"MCP server {self.name!r} over {self.transport} takes a url; command, args "
                "and env are for transport='stdio'"
            )
        return self

    @model_serializer(mode="wrap")
    def _unset_left_out(self, handler: SerializerFunctionWrapHandler) -> Any:
        dumped = handler(self)
        if isinstance(dumped, dict):
            if self.url is None:
                dumped.pop("url", None)
            if self.command is None:
                dumped.pop("command", None)
            for key in ("args", "env"):
                if not dumped.get(key):
                    dumped.pop(key, None)
        return dumped

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


def _servers_in_name_order(servers: tuple[McpServer, ...]) -> tuple[McpServer, ...]:
    return sorted_by_name(servers, "MCP server")


McpServers = Annotated[tuple[McpServer, ...], AfterValidator(_servers_in_name_order)]
"""A Spec's ``mcp_servers``: no name twice, held in name order."""


__all__ = ["A2APeer", "McpEnv", "McpOAuth", "McpServer", "McpServers"]
