"""OAuth 2.1 for MCP servers, per tenant and principal.

``McpOAuthClient`` follows the MCP authorization specification: protected resource
metadata (RFC 9728), authorization server metadata (RFC 8414 and OpenID Connect
discovery), PKCE with S256, dynamic client registration (RFC 7591), resource
indicators (RFC 8707), refresh and scope step-up. Tokens live in a ``TokenStore``:
``InMemoryTokenStore`` for tests and single processes, ``SqliteTokenStore`` to survive
restarts.
"""

from psych_mcp.oauth.challenge import BearerChallenge
from psych_mcp.oauth.challenge import parse_bearer_challenge
from psych_mcp.oauth.client import McpOAuthClient
from psych_mcp.oauth.errors import AuthorizationRequired
from psych_mcp.oauth.errors import OAuthError
from psych_mcp.oauth.errors import OAuthErrorKind
from psych_mcp.oauth.http import HttpClientFactory
from psych_mcp.oauth.models import PendingAuthorization
from psych_mcp.oauth.models import RegisteredClient
from psych_mcp.oauth.models import StoredToken
from psych_mcp.oauth.models import TokenKey
from psych_mcp.oauth.models import canonical_resource
from psych_mcp.oauth.sqlite_store import SqliteTokenStore
from psych_mcp.oauth.store import InMemoryTokenStore
from psych_mcp.oauth.store import TokenStore

__all__ = [
    "AuthorizationRequired",
    "BearerChallenge",
    "HttpClientFactory",
    "InMemoryTokenStore",
    "McpOAuthClient",
    "OAuthError",
    "OAuthErrorKind",
    "PendingAuthorization",
    "RegisteredClient",
    "SqliteTokenStore",
    "StoredToken",
    "TokenKey",
    "TokenStore",
    "canonical_resource",
    "parse_bearer_challenge",
]
