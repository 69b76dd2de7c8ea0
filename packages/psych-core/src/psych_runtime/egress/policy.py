"""Deciding whether an outbound HTTP request may leave the process.

``HttpTransport`` asks an ``EgressPolicy`` (or any callable with the same shape) about
every request before a byte is sent. The default policy refuses destinations inside
private networks, which is what stops a model-chosen or tenant-supplied URL from
reaching a metadata service or an internal admin port.

DNS rebinding caveat: when a hostname is checked, it is resolved here and then resolved
again by the HTTP client when it connects. A hostile name server can answer the first
lookup with a public address and the second with a private one, and this check will
not notice. The check is therefore a guard against mistakes and naive abuse, not a
network boundary; deployments that need a hard guarantee should also route egress
through a proxy or firewall that enforces the same rule on the actual connection. For
the same reason a name that fails to resolve is let through: the connection will fail
on the same lookup, and refusing it would add no protection that rebinding does not
already defeat.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import TYPE_CHECKING
from typing import Self
from urllib.parse import urlsplit

from psych_runtime.core.errors import PsychError
from psych_runtime.core.scope import Scope

if TYPE_CHECKING:
    import httpx

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""Looks a host up and returns its IP addresses as strings: ``(host, port) -> addresses``."""

_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class EgressDecision:
    """The answer to one egress check.

    Attributes:
        allowed: whether the request may go out.
        rule: which rule decided, so a refusal can be traced to configuration.
        reason: a sentence for the person reading the error or the log.
    """

    allowed: bool
    rule: str = ""
    reason: str = ""

    @classmethod
    def allow(cls, rule: str = "default", reason: str = "") -> EgressDecision:
        """A decision that lets the request through."""
        return cls(True, rule, reason)

    @classmethod
    def deny(cls, rule: str, reason: str) -> EgressDecision:
        """A decision that stops the request."""
        return cls(False, rule, reason)


type EgressDecider = Callable[[Scope, httpx.URL], EgressDecision | Awaitable[EgressDecision]]
"""Any callable the transport can ask instead of (or around) an ``EgressPolicy``."""


class EgressDenied(PsychError):
    """An outbound request was refused before it left the process.

    Attributes:
        url: the refused URL.
        host: its host.
        decision: the policy's decision, naming the rule that refused it.
    """

    def __init__(self, url: httpx.URL, decision: EgressDecision) -> None:
        host = url.host or "<no host>"
        super().__init__(f"egress to {host!r} refused by rule {decision.rule!r}: {decision.reason}")
        self.url = url
        self.host = host
        self.decision = decision


@dataclass(frozen=True, slots=True)
class EgressRule:
    """A pattern over scheme, host and port; unset parts match anything.

    Attributes:
        host: an exact host (``api.openai.com``), ``*.suffix`` for any subdomain of
            ``suffix`` (not ``suffix`` itself), or ``*`` for every host. Matching
            ignores case.
        scheme: ``https``, ``http``... or None for any.
        port: the effective port (defaults filled in from the scheme), or None.
    """

    host: str = "*"
    scheme: str | None = None
    port: int | None = None

    def matches(self, scheme: str, host: str, port: int | None) -> bool:
        """Whether the rule covers this destination."""
        if self.scheme is not None and self.scheme.lower() != scheme:
            return False
        if self.port is not None and self.port != port:
            return False
        return host_matches(self.host, host)

    def __str__(self) -> str:
        scheme = f"{self.scheme}://" if self.scheme else ""
        port = f":{self.port}" if self.port is not None else ""
        return f"{scheme}{self.host}{port}"


def host_matches(pattern: str, host: str) -> bool:
    """Whether ``host`` fits ``pattern`` (exact, ``*.suffix`` or ``*``), ignoring case."""
    pattern = pattern.lower().rstrip(".")
    host = host.lower().rstrip(".")
    if pattern == "*":
        return True
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return host == pattern


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(text.strip("[]").split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def private_category(text: str) -> str | None:
    """Why an IP address is off limits, or None for a public unicast address.

    Anything not globally routable counts, which covers the ranges people forget
    (carrier-grade NAT, documentation blocks, unspecified addresses) as well as the
    obvious loopback and RFC 1918 ones. IPv4-mapped IPv6 addresses are judged as the
    IPv4 address they carry.
    """
    address = _ip(text)
    if address is None:
        return None
    checks = (
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("unspecified", address.is_unspecified),
        ("private", address.is_private),
        ("reserved", address.is_reserved),
    )
    for name, hit in checks:
        if hit:
            return name
    return None if address.is_global else "non-global"


async def resolve_with_event_loop(host: str, port: int) -> Sequence[str]:
    """Look ``host`` up with the running loop's resolver (the one httpx will use)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({str(info[4][0]) for info in infos})


@dataclass(frozen=True, slots=True, kw_only=True)
class EgressPolicy:
    """Rules for where outbound HTTP may go, checked per request with the caller's Scope.

    Evaluation order: the scheme must be allowed; a matching ``deny`` rule refuses; when
    ``allow`` is non-empty the destination must match one of its rules,
    ``allow_hosts`` or ``allow_origins``; finally, with ``deny_private``, an IP literal
    or a resolved hostname inside a non-public range refuses unless the host is in
    ``allow_hosts`` or the origin in ``allow_origins``.

    The policy is frozen so it cannot change between two checks of one request. For
    tenant-specific rules, subclass and override ``decide`` (the Scope is passed in),
    or hand the transport any callable ``decide(scope, url) -> EgressDecision``.

    Attributes:
        allow: when non-empty, only destinations matching one of these may be reached.
        deny: destinations that are always refused; deny wins over every allowance.
        schemes: URL schemes that may be used at all.
        deny_private: refuse loopback, private, link-local, multicast and reserved
            addresses, whether written literally or reached through a hostname.
        allow_hosts: hosts (same patterns as ``EgressRule.host``) exempt from the
            private-address check and counted as allowed, e.g. ``127.0.0.1`` for a
            local test server or a model proxy on the private network.
        allow_origins: exact scheme, host and port triples treated like
            ``allow_hosts`` but no wider: one model server on loopback is let
            through while every other port of that host stays refused. ``allowing``
            fills it from URLs.
        resolve_hostnames: look hostnames up for the private-address check; turn off
            where DNS is not available or another layer enforces the rule.
        resolver: how to look hosts up; defaults to the event loop's ``getaddrinfo``.
            Tests inject a fake here.
    """

    allow: tuple[EgressRule, ...] = ()
    deny: tuple[EgressRule, ...] = ()
    schemes: frozenset[str] = frozenset({"http", "https"})
    deny_private: bool = True
    allow_hosts: frozenset[str] = frozenset()
    allow_origins: tuple[EgressRule, ...] = ()
    resolve_hostnames: bool = True
    resolver: Resolver | None = field(default=None, compare=False)

    def allowing(self, *urls: str) -> Self:
        """This policy, also letting through the origin of each URL, private or not.

        Meant for the endpoint a model client is configured with: a server on
        loopback or the private network stays reachable while the rest of the
        private address space stays refused, for tools as for everything else. Only
        the URL's scheme, host and port count (a missing port is the scheme's
        default); its path does not narrow anything. Deny rules still win.

        Args:
            urls: absolute http(s) URLs, such as a client's ``base_url``.

        Returns:
            A copy of the policy with those origins added to ``allow_origins``.

        Raises:
            ValueError: a URL is not absolute http(s) with a host.
        """
        added = tuple(_origin_rule(url) for url in urls)
        return replace(self, allow_origins=(*self.allow_origins, *added))

    async def decide(self, scope: Scope, url: httpx.URL) -> EgressDecision:
        """Judge one destination for ``scope``; subclasses may add tenant rules."""
        scheme = url.scheme.lower()
        host = url.host.lower()
        if scheme not in self.schemes:
            allowed = ", ".join(sorted(self.schemes))
            return EgressDecision.deny("schemes", f"scheme {scheme!r} is not one of {allowed}")
        if not host:
            return EgressDecision.deny("host", "the URL has no host")
        port = url.port if url.port is not None else _DEFAULT_PORTS.get(scheme)
        for rule in self.deny:
            if rule.matches(scheme, host, port):
                return EgressDecision.deny(f"deny[{rule}]", f"{host} matches a deny rule")
        origin = any(rule.matches(scheme, host, port) for rule in self.allow_origins)
        trusted = origin or any(host_matches(pattern, host) for pattern in self.allow_hosts)
        listed = any(rule.matches(scheme, host, port) for rule in self.allow)
        if self.allow and not trusted and not listed:
            return EgressDecision.deny("allow", f"{host} matches no allow rule")
        if self.deny_private and not trusted:
            refusal = await self._private_refusal(host, port or 0)
            if refusal is not None:
                return refusal
        if origin:
            return EgressDecision.allow("allow_origins")
        return EgressDecision.allow("allow_hosts" if trusted else "default")

    async def _private_refusal(self, host: str, port: int) -> EgressDecision | None:
        category = private_category(host)
        if category is not None:
            return EgressDecision.deny(
                "deny_private",
                f"{host} is a {category} address (add it to allow_hosts, or allow one "
                "endpoint with EgressPolicy().allowing(url))",
            )
        if _ip(host) is not None or not self.resolve_hostnames:
            return None
        resolver = self.resolver or resolve_with_event_loop
        try:
            addresses = await resolver(host, port)
        except OSError:
            # The connection will fail on the same lookup; see the module docstring.
            return None
        for address in addresses:
            category = private_category(address)
            if category is not None:
                return EgressDecision.deny(
                    "deny_private",
                    f"{host} resolves to {address}, a {category} address "
                    "(add the host to allow_hosts, or allow one endpoint with "
                    "EgressPolicy().allowing(url))",
                )
        return None


def _origin_rule(url: str) -> EgressRule:
    """The rule that matches exactly the scheme, host and port of ``url``."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise ValueError(f"cannot allow {url!r}: {error}") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"cannot allow {url!r}: expected an absolute http(s) URL with a host")
    return EgressRule(
        host=parts.hostname.lower(),
        scheme=scheme,
        port=port if port is not None else _DEFAULT_PORTS[scheme],
    )


async def check_egress(
    policy: EgressPolicy | EgressDecider, scope: Scope, url: httpx.URL
) -> EgressDecision:
    """Ask ``policy`` about ``url`` and raise ``EgressDenied`` on a refusal."""
    if isinstance(policy, EgressPolicy):
        decision = await policy.decide(scope, url)
    else:
        outcome = policy(scope, url)
        decision = outcome if isinstance(outcome, EgressDecision) else await outcome
    if not decision.allowed:
        raise EgressDenied(url, decision)
    return decision


__all__ = [
    "EgressDecider",
    "EgressDecision",
    "EgressDenied",
    "EgressPolicy",
    "EgressRule",
    "Resolver",
    "check_egress",
    "host_matches",
    "private_category",
    "resolve_with_event_loop",
]
