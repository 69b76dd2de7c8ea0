"""Which tool sources a Runtime builds: installed ones, its own mcp= and a2a=, a sandbox."""

import types
from collections.abc import Iterator
from typing import Any

import pytest

import psych_runtime
from psych_runtime.adapters import ToolSourceFactory
from psych_runtime.adapters import register_plugin
from psych_runtime.adapters import reset_plugin_manager
from psych_runtime.plugins import hookimpl
from psych_runtime.testing import FakeModel


class _Source:
    """A tool source that offers nothing; enough to see which ones a Runtime holds."""

    def __init__(self, name: str, **built_with: Any) -> None:
        self.name = name
        self.built_with = built_with

    def serves(self, spec: object) -> bool:
        return False

    async def resolve(self, *args: object, **kwargs: object) -> Any:
        raise AssertionError("not asked")

    async def call(self, *args: object, **kwargs: object) -> Any:
        raise AssertionError("not asked")


def _factory(name: str, capability: str, *, takes_sandbox: bool) -> ToolSourceFactory:
    def build(**options: Any) -> _Source:
        return _Source(name, **options)

    return ToolSourceFactory(
        name=name,
        capability=capability,
        build=build,
        package="tests",
        takes_sandbox=takes_sandbox,
    )


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("PSYCH_DISABLE_PLUGIN_AUTOLOAD", "1")
    reset_plugin_manager()
    plugin = types.ModuleType("fake_sources")
    plugin.PSYCH_PLUGIN_API = 1  # type: ignore[attr-defined]

    @hookimpl
    def psych_register_tool_sources(register: Any) -> None:
        register(_factory("mcp", "mcp_servers", takes_sandbox=True))
        register(_factory("a2a", "a2a_peers", takes_sandbox=False))

    plugin.psych_register_tool_sources = psych_register_tool_sources  # type: ignore[attr-defined]
    register_plugin(plugin, "fake_sources")
    yield
    reset_plugin_manager()


def _runtime(**settings: Any) -> psych_runtime.Runtime:
    return psych_runtime.Runtime(
        psych_runtime.InMemoryStore(), FakeModel(), psych_runtime.ToolRegistry(), **settings
    )


def test_the_default_sandbox_reaches_the_factories_that_take_one(installed: None) -> None:
    sandbox = object()
    runtime = _runtime(sandbox=sandbox)
    built = {source.name: source.built_with for source in runtime.tool_sources}  # type: ignore[attr-defined]
    assert built["mcp"]["sandbox"] is sandbox
    assert "sandbox" not in built["a2a"]


def test_mcp_and_a2a_take_the_place_of_the_installed_sources(installed: None) -> None:
    mine = _Source("mine")
    runtime = _runtime(mcp=mine)
    names = [source.name for source in runtime.tool_sources]  # type: ignore[attr-defined]
    assert names == ["a2a", "mine"]
