"""Header parsing, discovery URLs, URL canonicalisation and PKCE, without a network."""

import base64
import hashlib

import pytest

from psych_mcp.oauth import canonical_resource
from psych_mcp.oauth import parse_bearer_challenge
from psych_mcp.oauth.challenge import parse_challenges
from psych_mcp.oauth.metadata import authorization_server_metadata_urls
from psych_mcp.oauth.metadata import protected_resource_metadata_urls
from psych_mcp.oauth.metadata import resource_covers
from psych_mcp.oauth.metadata import same_issuer
from psych_mcp.oauth.models import covers
from psych_mcp.oauth.models import union_scopes
from psych_mcp.oauth.pkce import new_code_verifier
from psych_mcp.oauth.pkce import new_state
from psych_mcp.oauth.pkce import s256_challenge


def test_the_bearer_challenge_is_found_among_others() -> None:
    header = (
        'Basic realm="x, y", Negotiate abc/def==, '
        'Bearer error="insufficient_scope", scope="a b", '
        'resource_metadata="https://m.example/.well-known/oauth-protected-resource/mcp", '
        'error_description="needs \\"b\\""'
    )
    challenge = parse_bearer_challenge(header)
    assert challenge is not None
    assert challenge.insufficient_scope
    assert challenge.scope == "a b"
    assert challenge.resource_metadata == (
        "https://m.example/.well-known/oauth-protected-resource/mcp"
    )
    assert challenge.error_description == 'needs "b"'
    schemes = [c.scheme for c in parse_challenges(header)]
    assert schemes == ["Basic", "Negotiate", "Bearer"]


@pytest.mark.parametrize(
    ("header", "error", "scope"),
    [
        ("bearer error=invalid_token", "invalid_token", None),
        ('Bearer realm="mcp"', None, None),
        ('Bearer scope="mcp:read"', None, "mcp:read"),
        ("Bearer", None, None),
    ],
)
def test_bearer_parameters(header: str, error: str | None, scope: str | None) -> None:
    challenge = parse_bearer_challenge(header)
    assert challenge is not None
    assert (challenge.error, challenge.scope) == (error, scope)


@pytest.mark.parametrize("header", [None, "", 'Basic realm="x"', "garbage ==="])
def test_no_bearer_challenge(header: str | None) -> None:
    assert parse_bearer_challenge(header) is None


def test_protected_resource_metadata_locations() -> None:
    assert protected_resource_metadata_urls("https://m.example/api/mcp", None) == [
        "https://m.example/.well-known/oauth-protected-resource/api/mcp",
        "https://m.example/.well-known/oauth-protected-resource",
    ]
    assert protected_resource_metadata_urls("https://m.example", "https://h.example/prm") == [
        "https://h.example/prm",
        "https://m.example/.well-known/oauth-protected-resource",
    ]


def test_authorization_server_metadata_locations() -> None:
    assert authorization_server_metadata_urls("https://a.example") == [
        "https://a.example/.well-known/oauth-authorization-server",
        "https://a.example/.well-known/openid-configuration",
    ]
    assert authorization_server_metadata_urls("https://a.example/tenant1/") == [
        "https://a.example/.well-known/oauth-authorization-server/tenant1",
        "https://a.example/.well-known/openid-configuration/tenant1",
        "https://a.example/tenant1/.well-known/openid-configuration",
    ]


def test_canonical_resources_and_coverage() -> None:
    assert canonical_resource("HTTPS://M.Example:443/") == "https://m.example"
    assert canonical_resource("http://m.example:8080/MCP#x") == "http://m.example:8080/MCP"
    assert resource_covers("https://m.example/", "https://m.example/mcp")
    assert resource_covers("https://m.example/api", "https://m.example/api/mcp")
    assert not resource_covers("https://m.example/api", "https://m.example/apix")
    assert not resource_covers("https://other.example", "https://m.example/mcp")
    assert same_issuer("https://a.example", "https://a.example/")
    assert not same_issuer("https://a.example/x", "https://a.example/x/")


def test_scope_sets() -> None:
    assert union_scopes("a b", "b c", None) == "a b c"
    assert union_scopes(None, "") is None
    assert covers("a b c", "c a")
    assert not covers(None, "a")


def test_pkce_s256() -> None:
    verifier = new_code_verifier()
    assert 43 <= len(verifier) <= 128
    digest = hashlib.sha256(verifier.encode()).digest()
    assert s256_challenge(verifier) == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert new_code_verifier() != verifier
    assert len(new_state()) >= 43
