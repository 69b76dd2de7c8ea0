"""The library against the product description's API reference, name for name.

Every signature on the reference page (its lines are kept in
``data/reference_signatures.json``) is read and held against the library: the name
resolves as ``psych_runtime.<name>``, every parameter exists with the same kind
(positional or keyword-only) and the same default. Where this library differs on
purpose, the difference is listed in ``INTENDED`` with its reason, and that entry is
checked too (a listed difference that no longer exists fails, so the list stays true).
``docs/migrating.md`` says the same to users.

The guide's first program, retold in our words with the same calls
(``data/guide_program.txt``), runs.
"""

import inspect
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import psych_runtime
from tests.docs.reference_signatures import FACTORY
from tests.docs.reference_signatures import UNPARSED
from tests.docs.reference_signatures import Signature
from tests.docs.reference_signatures import reference

DATA = Path(__file__).resolve().parent / "data"

INTENDED: dict[tuple[str, str], str] = {
    # (name, parameter or "*"): why
    ("Runtime", "retry_base_seconds"): "ours: the model retry backoff is configurable",
    ("Runtime", "retry_max_seconds"): "ours: the ceiling of that backoff",
    ("Runtime", "secrets"): "ours: HTTP tools name credentials the resolver turns into secrets",
    ("Runtime", "approvals"): "ours: ApprovalRules adds always/never lists to the selectors",
    ("Runtime", "access"): "ours: the tenant plane of narrowing, asked every turn",
    ("Runtime", "recall_limit"): "ours: how many of an end user's facts the prompt shows",
    ("Runtime", "tool_sources"): "ours: any number of remote tool sources, not only mcp/a2a",
    ("Runtime", "sandboxes"): "ours: one sandbox per Spec profile, not one per process",
    ("Runtime", "code_limits"): "ours: the ceiling no Spec's programs may exceed",
    ("Worker", "telemetry"): "ours: a Worker may trace with its own telemetry",
    ("OpenAICompatibleClient", "organization"): "ours: the OpenAI-Organization header",
    ("OpenAICompatibleClient", "max_tokens_field"): "ours: servers disagree on the field name",
    ("OpenAICompatibleClient", "provider_name"): "ours: gen_ai.provider.name for telemetry",
    ("ModelRequest", "tool_choice"): "ours: the Spec's tool_choice reaches the request",
    ("McpPool", "transport"): "optional: only its egress policy is used; egress= may stand in",
    ("McpPool", "secrets"): "optional: a pool reaching only servers without credentials needs none",
    ("McpPool", "egress"): "ours: an EgressPolicy instead of a whole transport",
    ("McpPool", "token_store"): "ours: OAuth tokens can outlive the process",
    ("McpPool", "max_connections"): "ours: the pool is bounded (least recently used out)",
    ("McpPool", "idle_seconds"): "ours: idle connections and stdio servers are closed",
    ("McpPool", "timeout_seconds"): "ours: a call to a server has a timeout",
    ("McpPool", "sandbox"): "ours: stdio servers can be started inside a sandbox",
    ("A2APool", "transport"): "optional: only its egress policy is used; egress= may stand in",
    ("A2APool", "secrets"): "optional: a pool reaching only open peers needs none",
    ("A2APool", "egress"): "ours: an EgressPolicy instead of a whole transport",
    ("A2APool", "verifier"): "ours: Agent Cards may be checked against a signature",
    ("A2APool", "max_connections"): "ours: the pool is bounded (least recently used out)",
    ("A2APool", "idle_seconds"): "ours: idle connections are closed",
    ("A2APool", "timeout_seconds"): "ours: a call to a peer has a timeout",
    ("A2APool", "poll_seconds"): "ours: how often a task is polled after its stream is cut",
}
"""Every difference from the reference that is on purpose, with its reason."""

_EARLIER_SPELLING = (
    "the spelling before the pool existed: without a pool, these settings build a "
    "private one (given beside a pool, they are refused, naming the pool)"
)
for _tools, _settings in (
    (
        "McpTools",
        (
            "http",
            "egress",
            "secrets",
            "max_connections",
            "idle_seconds",
            "catalogue_ttl_seconds",
            "timeout_seconds",
            "oauth",
            "token_store",
        ),
    ),
    (
        "A2ATools",
        (
            "http",
            "egress",
            "secrets",
            "verifier",
            "max_connections",
            "idle_seconds",
            "card_ttl_seconds",
            "timeout_seconds",
            "poll_seconds",
        ),
    ),
):
    INTENDED[(_tools, "pool")] = "optional, for " + _EARLIER_SPELLING
    for _setting in _settings:
        INTENDED[(_tools, _setting)] = _EARLIER_SPELLING

INTENDED.update(
    {
        ("SandboxResult", "*"): "a dataclass with the same fields (a port type, not a record)",
        ("SandboxLimits", "*"): "a dataclass with the same fields (a port type, not a record)",
        ("SandboxFailure", "*"): "a dataclass with the same fields (a port type, not a record)",
    }
)


def _object(name: str) -> Any:
    return getattr(psych_runtime, name)


def _parameters(obj: Any) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(obj).parameters)


SIGNATURES = reference()


def test_the_reference_page_was_read_whole() -> None:
    names = [s.name for s in SIGNATURES]
    assert len(names) == len(set(names)) == 34
    assert {"Runtime", "Worker", "McpPool", "ModelPrice", "CostPolicy"} <= set(names)


@pytest.mark.parametrize("sig", SIGNATURES, ids=lambda s: s.name)
def test_every_name_resolves_at_the_top_level(sig: Signature) -> None:
    assert _object(sig.name) is not None


@pytest.mark.parametrize(
    "sig",
    [s for s in SIGNATURES if s.kind in ("class", "model")],
    ids=lambda s: s.name,
)
def test_every_parameter_matches_its_kind_and_default(sig: Signature) -> None:
    ours = _parameters(_object(sig.name))
    wrong: list[str] = []
    for p in sig.parameters:
        if (sig.name, p.name) in INTENDED or ((sig.name, "*") in INTENDED and p.name not in ours):
            continue
        q = ours.get(p.name)
        if q is None:
            wrong.append(f"no parameter {p.name}")
            continue
        keyword_only = q.kind is inspect.Parameter.KEYWORD_ONLY
        if keyword_only != p.keyword_only and (sig.name, "*") not in INTENDED:
            wrong.append(f"{p.name}: keyword-only {keyword_only}, the reference {p.keyword_only}")
        has_default = q.default is not inspect.Parameter.empty
        if has_default != p.has_default:
            wrong.append(f"{p.name}: has a default {has_default}, the reference {p.has_default}")
        elif (
            has_default
            and p.default not in (FACTORY, UNPARSED)
            and (q.default != p.default or type(q.default) is not type(p.default))
        ):
            wrong.append(f"{p.name}: default {q.default!r}, the reference {p.default!r}")
    named = {p.name for p in sig.parameters}
    for extra, q in ours.items():
        if extra in named or q.kind in (q.VAR_POSITIONAL, q.VAR_KEYWORD):
            continue
        if (sig.name, extra) not in INTENDED:
            wrong.append(f"{extra}: not in the reference and not listed as intended")
    assert wrong == []


def test_every_listed_difference_still_exists_and_has_a_reason() -> None:
    by_name = {s.name: s for s in SIGNATURES}
    for (name, parameter), reason in INTENDED.items():
        assert reason.strip(), (name, parameter)
        if parameter == "*":
            continue
        ours = _parameters(_object(name))
        assert parameter in ours, (name, parameter)
        theirs = {p.name: p for p in by_name[name].parameters}.get(parameter)
        if theirs is not None:
            # A parameter of the reference listed here must really differ from it.
            q = ours[parameter]
            has_default = q.default is not inspect.Parameter.empty
            keyword_only = q.kind is inspect.Parameter.KEYWORD_ONLY
            differs = has_default != theirs.has_default or keyword_only != theirs.keyword_only
            assert differs, (name, parameter)


@pytest.mark.parametrize("name", [s.name for s in SIGNATURES if s.kind == "enum"])
def test_the_enums_are_enums(name: str) -> None:
    from enum import Enum

    assert issubclass(_object(name), Enum)


def test_the_documented_values() -> None:
    prices = psych_runtime.DEFAULT_PRICES
    assert isinstance(prices, psych_runtime.PriceResolver)
    assert prices.price_for("gpt-4o") is not None
    assert prices.price_for("no-such-model") is None
    assert psych_runtime.HostBinding is not None
    assert set(psych_runtime.CostPolicy.__args__) >= {"prefer_provider"}  # type: ignore[attr-defined]
    assert psych_runtime.MemoryPort is psych_runtime.MemoryStore


def test_the_reference_spelling_of_runtime_settings_is_accepted_and_translated() -> None:
    store = psych_runtime.InMemoryStore()
    model = psych_runtime.testing.FakeModel()
    registry = psych_runtime.ToolRegistry()
    runtime = psych_runtime.Runtime(
        store,
        model,
        registry,
        None,
        None,
        psych_runtime.DEFAULT_PRICES,
        "prefer_provider",
        ("Orders ship from Oslo.",),
        psych_runtime.AllowAll(),
        ("@destructive",),
    )
    assert runtime.prices is psych_runtime.DEFAULT_PRICES
    assert runtime.approvals is not None and runtime.approvals.selectors == ("@destructive",)
    assert runtime.memories == ("Orders ship from Oslo.",)
    for spelling in ({"resolver": object()}, {"executor": object()}):
        with pytest.raises(psych_runtime.InvalidArgument, match="tool_sources"):
            psych_runtime.Runtime(store, model, registry, **spelling)  # type: ignore[arg-type]
    with pytest.raises(psych_runtime.InvalidArgument, match="not both"):
        psych_runtime.Runtime(
            store,
            model,
            registry,
            approval_selectors=("@write",),
            approvals=psych_runtime.ApprovalRules(),
        )


def test_a_model_price_needs_every_rate_the_reference_requires() -> None:
    with pytest.raises(ValueError, match="cache_read"):
        psych_runtime.ModelPrice(input=Decimal(1), output=Decimal(1))  # type: ignore[call-arg]


def test_the_guides_first_program_runs_as_written(tmp_path: Path) -> None:
    program = tmp_path / "main.py"
    program.write_text((DATA / "guide_program.txt").read_text())
    done = subprocess.run(
        [sys.executable, str(program)], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "A1 has shipped."
    assert lines[1].startswith("completed ")
    assert lines[1].endswith(" None")  # no price table: the cost is unknown, never 0


def test_the_guides_validation_context_line_works() -> None:
    registry = psych_runtime.ToolRegistry()
    context = psych_runtime.ValidationContext(registered_tools=registry.names)
    spec = psych_runtime.AgentSpec(name="a", model="m", tools=("missing",))
    with pytest.raises(psych_runtime.SpecValidationError, match="missing"):
        psych_runtime.validate(spec, context=context)
