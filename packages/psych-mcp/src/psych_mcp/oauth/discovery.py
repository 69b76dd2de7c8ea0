"""Finding the authorization server of an MCP server and reading its metadata.

The MCP server's protected resource metadata names the authorization servers it
accepts; ``McpOAuth.issuer`` picks one of them, or stands in when the server publishes
no metadata. Servers that publish neither (older MCP servers) are tried as their own
authorization server, at their origin. Metadata is cached for a while: an
authorization server's per issuer, a resource's per server URL.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta
from urllib.parse import urlsplit

from pydantic import ValidationError

from psych_mcp.oauth.errors import OAuthError
from psych_mcp.oauth.http import OAuthHttp
from psych_mcp.oauth.http import host_of
from psych_mcp.oauth.metadata import AuthorizationServerMetadata
from psych_mcp.oauth.metadata import ProtectedResourceMetadata
from psych_mcp.oauth.metadata import authorization_server_metadata_urls
from psych_mcp.oauth.metadata import protected_resource_metadata_urls
from psych_mcp.oauth.metadata import resource_covers
from psych_mcp.oauth.metadata import same_issuer
from psych_mcp.oauth.models import canonical_resource
from psych_runtime import Scope
from psych_runtime.spec import McpServer

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Discovered:
    """Everything discovery learned about one MCP server.

    Attributes:
        server_url: the server URL in canonical form.
        resource: the resource indicator to send (RFC 8707).
        issuer: the chosen authorization server.
        authorization_server: that server's metadata.
        resource_metadata: the server's protected resource metadata, when published.
    """

    server_url: str
    resource: str
    issuer: str
    authorization_server: AuthorizationServerMetadata
    resource_metadata: ProtectedResourceMetadata | None


@dataclass(frozen=True, slots=True)
class _ResourceEntry:
    metadata: ProtectedResourceMetadata | None
    source: str | None
    fetched_at: datetime


class Discovery:
    """Fetches and caches protected resource and authorization server metadata.

    Args:
        http: how requests are sent.
        clock: the current time (UTC).
        ttl: how long fetched metadata is reused.
    """

    def __init__(self, http: OAuthHttp, *, clock: Callable[[], datetime], ttl: timedelta):
        self._http = http
        self._clock = clock
        self._ttl = ttl
        self._resources: dict[str, _ResourceEntry] = {}
        self._servers: dict[str, tuple[AuthorizationServerMetadata, datetime]] = {}

    async def resolve(
        self, scope: Scope, server: McpServer, *, metadata_url: str | None = None
    ) -> Discovered:
        """Discover the authorization server for ``server``.

        Args:
            scope: on whose behalf requests are made.
            server: the MCP server, with its ``oauth`` settings.
            metadata_url: a ``resource_metadata`` URL from a challenge; when it differs
                from where the cached metadata came from, the metadata is fetched anew.

        Returns:
            The resource indicator, issuer and authorization server metadata.

        Raises:
            OAuthError: ``discovery`` when no usable metadata is found or it does not
                fit the server; ``transport`` when a request fails.
        """
        if server.url is None:
            raise OAuthError("configuration", f"MCP server {server.name!r} has no URL for OAuth")
        server_url = canonical_resource(server.url)
        configured = server.oauth.issuer if server.oauth is not None else None
        resource_metadata = await self._resource_metadata(scope, server_url, metadata_url)
        if resource_metadata is not None and resource_metadata.authorization_servers:
            listed = resource_metadata.authorization_servers
            if configured is None:
                issuer = listed[0]
            else:
                chosen = [i for i in listed if same_issuer(i, configured)]
                if not chosen:
                    raise OAuthError(
                        "discovery",
                        f"MCP server {server.name!r} does not list the configured issuer "
                        f"{configured!r} among its authorization servers",
                    )
                issuer = chosen[0]
        elif configured is not None:
            issuer = configured
        else:
            # An MCP server of the 2025-03-26 revision is its own authorization server.
            parts = urlsplit(server_url)
            issuer = f"{parts.scheme}://{parts.netloc}"
        resource = resource_metadata.resource if resource_metadata is not None else server_url
        metadata = await self.authorization_server(scope, issuer)
        return Discovered(
            server_url=server_url,
            resource=resource,
            issuer=metadata.issuer,
            authorization_server=metadata,
            resource_metadata=resource_metadata,
        )

    async def authorization_server(self, scope: Scope, issuer: str) -> AuthorizationServerMetadata:
        """The metadata of the authorization server ``issuer``.

        Raises:
            OAuthError: ``discovery`` when none is published, or it names another
                issuer; ``transport`` when a request fails.
        """
        now = self._clock()
        cached = self._servers.get(issuer)
        if cached is not None and now - cached[1] < self._ttl:
            return cached[0]
        for url in authorization_server_metadata_urls(issuer):
            answer = await self._http.send(scope, "GET", url)
            if answer.status != 200:
                continue
            body = answer.json_object()
            if body is None:
                continue
            try:
                metadata = AuthorizationServerMetadata.model_validate(body)
            except ValidationError:
                raise OAuthError(
                    "discovery", f"the authorization server metadata at {url} is malformed"
                ) from None
            if not same_issuer(metadata.issuer, issuer):
                raise OAuthError(
                    "discovery",
                    f"the metadata at {url} is for issuer {metadata.issuer!r}, not {issuer!r}",
                )
            self._servers[issuer] = (metadata, now)
            _log.debug("authorization server metadata for %s read from %s", issuer, url)
            return metadata
        raise OAuthError(
            "discovery",
            f"no authorization server metadata found for issuer {issuer!r} "
            f"(tried the OAuth and OpenID Connect well-known locations at {host_of(issuer)})",
        )

    async def _resource_metadata(
        self, scope: Scope, server_url: str, hint: str | None
    ) -> ProtectedResourceMetadata | None:
        now = self._clock()
        cached = self._resources.get(server_url)
        if (
            cached is not None
            and now - cached.fetched_at < self._ttl
            and (hint is None or hint == cached.source)
        ):
            return cached.metadata
        found: ProtectedResourceMetadata | None = None
        source: str | None = None
        for url in protected_resource_metadata_urls(server_url, hint):
            answer = await self._http.send(scope, "GET", url)
            body = answer.json_object() if answer.status == 200 else None
            if body is None:
                continue
            try:
                found = ProtectedResourceMetadata.model_validate(body)
            except ValidationError:
                _log.warning("ignoring malformed protected resource metadata at %s", url)
                continue
            if not resource_covers(found.resource, server_url):
                raise OAuthError(
                    "discovery",
                    f"the protected resource metadata at {url} describes "
                    f"{found.resource!r}, not the MCP server {server_url!r}",
                )
            source = url
            break
        self._resources[server_url] = _ResourceEntry(found, source, now)
        return found


__all__ = ["Discovered", "Discovery"]
