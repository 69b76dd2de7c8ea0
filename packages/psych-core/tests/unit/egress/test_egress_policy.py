"""EgressPolicy decisions: schemes, host rules, ports and private destinations."""

from collections.abc import Sequence

import httpx
import pytest

from psych_runtime.core.scope import Scope
from psych_runtime.egress.policy import EgressDecision
from psych_runtime.egress.policy import EgressDenied
from psych_runtime.egress.policy import EgressPolicy
from psych_runtime.egress.policy import EgressRule
from psych_runtime.egress.policy import check_egress
from psych_runtime.egress.policy import host_matches
from psych_runtime.egress.policy import private_category

ACME = Scope(tenant="acme")


class FakeDns:
    """A resolver that answers from a table and remembers what it was asked."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.asked: list[tuple[str, int]] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append((host, port))
        if host not in self.table:
            raise OSError(f"cannot resolve {host}")
        return self.table[host]


PUBLIC_DNS = FakeDns({"api.openai.com": ["104.18.7.192"], "proxy.example.com": ["203.0.114.9"]})


async def decide(policy: EgressPolicy, url: str) -> EgressDecision:
    return await policy.decide(ACME, httpx.URL(url))


@pytest.mark.parametrize(
    ("address", "category"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("100.64.0.1", "non-global"),
        ("::ffff:127.0.0.1", "loopback"),
        ("fd00::1", "private"),
        # Python files the reserved 240/4 block and the benchmark range under private.
        ("240.0.0.1", "private"),
        ("198.18.0.1", "private"),
    ],
)
def test_non_public_addresses_are_classified(address: str, category: str) -> None:
    assert private_category(address) == category


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "104.18.7.192", "2606:4700::6810:7c0", "api.example"]
)
def test_public_addresses_and_names_are_not_classified(address: str) -> None:
    assert private_category(address) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/v1",
        "http://[::1]/v1",
        "http://169.254.169.254/latest/meta-data",
        "https://10.0.0.7/v1",
        "http://0.0.0.0:11434/v1",
        "http://[::ffff:192.168.0.1]/",
    ],
)
async def test_the_default_policy_refuses_private_ip_literals(url: str) -> None:
    decision = await decide(EgressPolicy(resolver=PUBLIC_DNS), url)
    assert not decision.allowed
    assert decision.rule == "deny_private"


async def test_a_public_destination_is_allowed_by_default() -> None:
    decision = await decide(EgressPolicy(resolver=PUBLIC_DNS), "https://api.openai.com/v1/models")
    assert decision.allowed


async def test_a_hostname_that_resolves_to_a_private_address_is_refused() -> None:
    dns = FakeDns({"internal.example.com": ["104.18.7.192", "10.0.0.9"]})
    decision = await decide(EgressPolicy(resolver=dns), "https://internal.example.com:8443/x")
    assert not decision.allowed
    assert decision.rule == "deny_private"
    assert "10.0.0.9" in decision.reason
    # Resolved with the effective port, so the lookup matches the later connection.
    assert dns.asked == [("internal.example.com", 8443)]


async def test_localhost_is_refused_through_the_event_loop_resolver() -> None:
    decision = await decide(EgressPolicy(), "http://localhost:9/")
    assert not decision.allowed
    assert decision.rule == "deny_private"


async def test_resolution_can_be_turned_off() -> None:
    dns = FakeDns({"internal.example.com": ["10.0.0.9"]})
    policy = EgressPolicy(resolver=dns, resolve_hostnames=False)
    assert (await decide(policy, "https://internal.example.com/")).allowed
    assert dns.asked == []
    # IP literals are still judged without any lookup.
    assert not (await decide(policy, "http://10.0.0.9/")).allowed


async def test_an_unresolvable_name_is_left_to_fail_at_connect() -> None:
    decision = await decide(EgressPolicy(resolver=FakeDns({})), "https://nowhere.invalid/")
    assert decision.allowed


async def test_allow_hosts_exempts_a_private_host() -> None:
    policy = EgressPolicy(allow_hosts=frozenset({"127.0.0.1"}), resolver=PUBLIC_DNS)
    assert (await decide(policy, "http://127.0.0.1:8000/v1")).allowed
    assert not (await decide(policy, "http://127.0.0.2:8000/v1")).allowed


async def test_private_checks_can_be_disabled() -> None:
    assert (await decide(EgressPolicy(deny_private=False), "http://10.0.0.1/")).allowed


@pytest.mark.parametrize(
    "url", ["ftp://files.example.com/x", "file:///etc/passwd", "ws://a.example/"]
)
async def test_other_schemes_are_refused(url: str) -> None:
    decision = await decide(EgressPolicy(resolver=PUBLIC_DNS), url)
    assert not decision.allowed
    assert decision.rule in {"schemes", "host"}


async def test_https_only_policy() -> None:
    policy = EgressPolicy(schemes=frozenset({"https"}), resolver=PUBLIC_DNS)
    assert not (await decide(policy, "http://api.openai.com/v1")).allowed
    assert (await decide(policy, "https://api.openai.com/v1")).allowed


def test_host_patterns() -> None:
    assert host_matches("api.openai.com", "API.OpenAI.com")
    assert host_matches("*.example.com", "a.example.com")
    assert host_matches("*.example.com", "deep.a.example.com")
    assert not host_matches("*.example.com", "example.com")
    assert not host_matches("*.example.com", "badexample.com")
    assert host_matches("*", "anything.at.all")
    assert host_matches("example.com.", "example.com")


async def test_an_allow_list_admits_only_what_it_names() -> None:
    policy = EgressPolicy(
        allow=(
            EgressRule(host="*.openai.com", scheme="https"),
            EgressRule(host="proxy.example.com", port=8443),
        ),
        resolver=PUBLIC_DNS,
    )
    assert (await decide(policy, "https://api.openai.com/v1")).allowed
    assert not (await decide(policy, "http://api.openai.com/v1")).allowed
    assert (await decide(policy, "https://proxy.example.com:8443/v1")).allowed
    refused = await decide(policy, "https://proxy.example.com/v1")
    assert not refused.allowed
    assert refused.rule == "allow"


async def test_deny_rules_win_over_allow_rules_and_allow_hosts() -> None:
    policy = EgressPolicy(
        allow=(EgressRule(host="*.example.com"),),
        deny=(EgressRule(host="admin.example.com"),),
        allow_hosts=frozenset({"admin.example.com"}),
        resolver=PUBLIC_DNS,
    )
    decision = await decide(policy, "https://admin.example.com/")
    assert not decision.allowed
    assert decision.rule == "deny[admin.example.com]"


async def test_a_deny_rule_can_target_one_port() -> None:
    policy = EgressPolicy(deny=(EgressRule(port=25),), deny_private=False)
    assert not (await decide(policy, "http://mail.example.com:25/")).allowed
    assert (await decide(policy, "http://mail.example.com/")).allowed


async def test_default_ports_are_filled_in_for_rules() -> None:
    policy = EgressPolicy(allow=(EgressRule(host="api.openai.com", port=443),), resolver=PUBLIC_DNS)
    assert (await decide(policy, "https://api.openai.com/v1")).allowed
    assert not (await decide(policy, "http://api.openai.com/v1")).allowed


async def test_check_egress_raises_with_the_host_and_rule() -> None:
    with pytest.raises(EgressDenied) as caught:
        await check_egress(EgressPolicy(), ACME, httpx.URL("http://169.254.169.254/latest"))
    assert caught.value.host == "169.254.169.254"
    assert caught.value.decision.rule == "deny_private"
    assert "169.254.169.254" in str(caught.value)
    assert "deny_private" in str(caught.value)


async def test_a_callable_can_decide_per_tenant() -> None:
    seen: list[str] = []

    def only_acme(scope: Scope, url: httpx.URL) -> EgressDecision:
        seen.append(scope.tenant)
        if scope.tenant == "acme":
            return EgressDecision.allow("tenant")
        return EgressDecision.deny("tenant", f"{scope.tenant} may not call {url.host}")

    url = httpx.URL("https://api.openai.com/v1")
    assert (await check_egress(only_acme, ACME, url)).allowed
    with pytest.raises(EgressDenied, match="globex may not call"):
        await check_egress(only_acme, Scope(tenant="globex"), url)
    assert seen == ["acme", "globex"]


async def test_an_async_callable_and_a_subclass_also_work() -> None:
    async def refuse(scope: Scope, url: httpx.URL) -> EgressDecision:
        return EgressDecision.deny("custom", "no")

    with pytest.raises(EgressDenied):
        await check_egress(refuse, ACME, httpx.URL("https://api.openai.com/"))

    class TenantPolicy(EgressPolicy):
        async def decide(self, scope: Scope, url: httpx.URL) -> EgressDecision:
            if scope.labels.get("egress") == "off":
                return EgressDecision.deny("tenant_label", "egress is off for this tenant")
            return await super().decide(scope, url)

    policy = TenantPolicy(resolver=PUBLIC_DNS)
    url = httpx.URL("https://api.openai.com/")
    assert (await check_egress(policy, ACME, url)).allowed
    with pytest.raises(EgressDenied, match="tenant_label"):
        await check_egress(policy, Scope(tenant="acme", labels={"egress": "off"}), url)


def test_the_policy_is_frozen() -> None:
    policy = EgressPolicy()
    with pytest.raises(AttributeError):
        policy.deny_private = False  # type: ignore[misc]
