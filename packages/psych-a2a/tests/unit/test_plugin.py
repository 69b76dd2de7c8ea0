"""The entry point, the registered tool source, the doctor check, and a cheap import."""

import subprocess
import sys
from collections.abc import Iterator

import pytest

import psych_a2a
import psych_runtime
from psych_a2a import A2ATools, plugin
from psych_contract.plugin import (
    check_entry_point,
    check_the_runtime_builds_the_source,
    modules_loaded_by,
    plugin_alone,
)
from psych_runtime import InMemoryStore
from psych_runtime.adapters import ToolSourceFactory
from psych_runtime.plugins.installed import installed_capabilities, tool_source_factories
from psych_runtime.spec import A2APeer, AgentSpec

SPEC = AgentSpec(
    name="caller",
    model="fake",
    a2a_peers=(A2APeer(name="billing", url="https://billing.example.com"),),
)


@pytest.fixture
def a2a_plugin_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A plugin manager with autoload off and only this plugin, from its entry point."""
    with plugin_alone(monkeypatch, "a2a"):
        yield


@pytest.fixture
def no_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with plugin_alone(monkeypatch):
        yield


def test_the_distribution_declares_the_entry_point() -> None:
    check_entry_point("a2a", plugin, distribution="psych-a2a")


@pytest.mark.usefixtures("a2a_plugin_only")
def test_it_offers_the_a2a_peers_capability() -> None:
    (factory,) = tool_source_factories()
    assert isinstance(factory, ToolSourceFactory)
    assert (factory.name, factory.capability, factory.package) == ("a2a", "a2a_peers", "psych-a2a")
    assert installed_capabilities() == {"a2a_peers"}


@pytest.mark.usefixtures("a2a_plugin_only")
async def test_a_runtime_without_tool_sources_builds_one_with_its_policy_and_secrets() -> None:
    source = await check_the_runtime_builds_the_source(A2ATools)
    assert source.serves(SPEC) and not source.serves(AgentSpec(name="x", model="fake"))


@pytest.mark.usefixtures("a2a_plugin_only")
async def test_publish_accepts_a2a_peers_without_a_validation_context() -> None:
    scope = psych_runtime.Scope(tenant="acme")
    version = await psych_runtime.publish(InMemoryStore(), SPEC, scope=scope)
    assert version.spec == SPEC


@pytest.mark.usefixtures("no_plugins")
async def test_without_the_plugin_such_a_spec_is_refused() -> None:
    with pytest.raises(psych_runtime.SpecValidationError, match="A2A peers"):
        await psych_runtime.publish(InMemoryStore(), SPEC, scope=psych_runtime.Scope(tenant="a"))


def test_the_doctor_check_finds_the_sdk() -> None:
    found: list[psych_runtime.adapters.DoctorCheck] = []
    plugin.psych_doctor_checks(found.append)
    (check,) = found
    assert check.name == "a2a sdk"
    result = check.run()
    assert result.ok, result.detail


def test_psych_doctor_lists_the_plugin() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from psych_runtime.cli.main import main; main(['doctor'])"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "a2a (psych_a2a.plugin) from psych-a2a" in done.stdout, done.stdout + done.stderr
    assert "ok   a2a sdk [a2a]" in done.stdout


@pytest.mark.parametrize(
    "code",
    [
        "import psych_a2a",
        "import psych_a2a.plugin",
        "from psych_a2a import A2ATools; A2ATools()",
    ],
)
def test_loading_the_plugin_or_building_the_source_does_not_import_the_sdk(code: str) -> None:
    assert modules_loaded_by(code, ["a2a", "google.protobuf", "starlette", "jwt"]) == []


def test_the_public_names_load_on_first_access() -> None:
    for name in psych_a2a.__all__:
        assert getattr(psych_a2a, name) is not None
    assert set(dir(psych_a2a)) >= set(psych_a2a.__all__)
