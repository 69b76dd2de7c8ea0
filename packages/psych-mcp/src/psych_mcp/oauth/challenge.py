"""Reading the ``WWW-Authenticate`` header of a 401 or 403 answer.

A header may hold several challenges (``Basic realm="x", Bearer error="..."``); the
parser follows the grammar of RFC 9110 section 11.6.1 (a scheme, then a token68 or
comma-separated ``name=value`` parameters whose values may be quoted strings with
backslash escapes) and the OAuth client reads the Bearer one: RFC 6750 defines its
``error`` and ``scope`` parameters and RFC 9728 adds ``resource_metadata``.
"""

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*(?=\s*(?:,|$))")
_SPACE = re.compile(r"[\s,]*")


@dataclass(frozen=True, slots=True)
class Challenge:
    """One authentication challenge.

    Attributes:
        scheme: the authentication scheme, as sent.
        params: the parameters, with lower-cased names; the first of a repeated name
            wins.
    """

    scheme: str
    params: dict[str, str]


@dataclass(frozen=True, slots=True)
class BearerChallenge:
    """What a Bearer challenge asks of the client.

    Attributes:
        error: the RFC 6750 error code (``invalid_token``, ``insufficient_scope``...).
        scope: the scopes the resource needs, space-separated.
        resource_metadata: where the protected resource metadata is (RFC 9728).
        error_description: the server's explanation, for people.
    """

    error: str | None = None
    scope: str | None = None
    resource_metadata: str | None = None
    error_description: str | None = None

    @property
    def insufficient_scope(self) -> bool:
        """Whether the token lacked a scope the resource needs."""
        return self.error == "insufficient_scope"


def _quoted(header: str, start: int) -> tuple[str, int]:
    """The quoted string opening at ``start`` and the index just past its end."""
    out: list[str] = []
    i = start + 1
    while i < len(header):
        ch = header[i]
        if ch == "\\" and i + 1 < len(header):
            out.append(header[i + 1])
            i += 2
        elif ch == '"':
            return "".join(out), i + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out), i


def parse_challenges(header: str) -> list[Challenge]:
    """Every challenge in a ``WWW-Authenticate`` value, in order.

    Malformed parts are skipped rather than refused: a server's slightly wrong header
    should still yield the parameters that can be read.

    Args:
        header: the header value (several header lines may be joined with commas).

    Returns:
        The challenges found, possibly none.
    """
    challenges: list[Challenge] = []
    current: Challenge | None = None
    i = 0
    n = len(header)
    while True:
        spaces = _SPACE.match(header, i)
        i = spaces.end() if spaces else i
        if i >= n:
            break
        name = _TOKEN.match(header, i)
        if name is None:
            i += 1
            continue
        j = name.end()
        while j < n and header[j] in " \t":
            j += 1
        if j < n and header[j] == "=" and current is not None:
            j += 1
            while j < n and header[j] in " \t":
                j += 1
            if j < n and header[j] == '"':
                value, i = _quoted(header, j)
            else:
                token = _TOKEN.match(header, j)
                value, i = (token.group(), token.end()) if token else ("", j)
            current.params.setdefault(name.group().lower(), value)
            continue
        current = Challenge(scheme=name.group(), params={})
        challenges.append(current)
        i = name.end()
        rest = _SPACE.match(header, i)
        k = rest.end() if rest else i
        token68 = _TOKEN68.match(header, k) if k < n and header[i:k].strip() == "" else None
        if token68 is not None and k > i:
            i = token68.end()
    return challenges


def parse_bearer_challenge(header: str | None) -> BearerChallenge | None:
    """The Bearer challenge in a ``WWW-Authenticate`` value, or None when there is none.

    Args:
        header: the header value, or None when the answer had no such header.

    Returns:
        The Bearer challenge's parameters, or None.
    """
    if not header:
        return None
    for challenge in parse_challenges(header):
        if challenge.scheme.lower() == "bearer":
            params = challenge.params
            return BearerChallenge(
                error=params.get("error") or None,
                scope=params.get("scope") or None,
                resource_metadata=params.get("resource_metadata") or None,
                error_description=params.get("error_description") or None,
            )
    return None


__all__ = ["BearerChallenge", "Challenge", "parse_bearer_challenge", "parse_challenges"]
