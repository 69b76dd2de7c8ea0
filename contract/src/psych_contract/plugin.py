"""What every adapter package checks about its plugin module.

An adapter registers itself through an entry point in the ``psych_runtime`` group, and
promises that loading it costs nothing until a backend is used. These helpers let the
adapter's own unit tests say so in a line each::

    @pytest.fixture
    def my_plugin_only(monkeypatch):
        with plugin_alone(monkeypatch, "mine"):
            yield

    def test_the_distribution_declares_the_entry_point():
        check_entry_point("mine", my_package.plugin, distribution="my-package")

    def test_loading_the_plugin_imports_no_driver():
        assert modules_loaded_by("import my_package.plugin", ["the_driver"]) == []
"""

import importlib.metadata
import subprocess
import sys
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any
from typing import ClassVar

import pytest

from psych_runtime import EgressPolicy
from psych_runtime import HttpTransport
from psych_runtime import InMemoryStore
from psych_runtime import Runtime
from psych_runtime import Scope
from psych_runtime import SpecValidationError
from psych_runtime import StaticSecretResolver
from psych_runtime import ToolRegistry
from psych_runtime import publish
from psych_runtime.adapters.plugins import AUTOLOAD_ENV
from psych_runtime.adapters.plugins import PLUGIN_API_VERSION
from psych_runtime.adapters.plugins import DoctorCheck
from psych_runtime.adapters.plugins import ToolSourceFactory
from psych_runtime.adapters.plugins import memory_store_backends
from psych_runtime.adapters.plugins import register_plugin
from psych_runtime.adapters.plugins import reset_plugin_manager
from psych_runtime.adapters.plugins import store_backends
from psych_runtime.adapters.tools import RemoteTools
from psych_runtime.spec import AgentSpec
from psych_runtime.testing import FakeModel

ENTRY_POINT_GROUP = "psych_runtime"
"""The entry-point group the plugin manager loads adapters from."""


@contextmanager
def plugin_alone(monkeypatch: pytest.MonkeyPatch, name: str | None = None) -> Iterator[None]:
    """A fresh plugin manager with autoload off and, given ``name``, that plugin alone.

    The plugin is loaded from its installed entry point, the way autoload would find it,
    so a test also proves the entry point works; autoload stays off so that another
    adapter installed beside it cannot change the outcome. With no ``name`` no plugin is
    registered at all (what a program without the adapter sees). The manager is reset
    again on the way out.
    """
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    reset_plugin_manager()
    if name is not None:
        (entry_point,) = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP, name=name)
        register_plugin(entry_point.load(), name=name)
    try:
        yield
    finally:
        reset_plugin_manager()


@contextmanager
def plugins_as_installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A fresh plugin manager with autoload on: every installed plugin, as a program sees.

    Undoes a ``PSYCH_DISABLE_PLUGIN_AUTOLOAD`` the surrounding environment may set, and
    resets the manager on the way in and out so no test sees another's registrations.
    """
    monkeypatch.delenv(AUTOLOAD_ENV, raising=False)
    reset_plugin_manager()
    try:
        yield
    finally:
        reset_plugin_manager()


async def check_the_runtime_builds_the_source(
    source_type: type[RemoteTools[Any, Any, Any]],
) -> RemoteTools[Any, Any, Any]:
    """A Runtime given no tool sources builds the plugin's, on the Runtime's own settings.

    Call it with the plugin registered (``plugin_alone``): the one source the Runtime
    builds is a ``source_type`` whose pool judges egress by the Runtime's policy and
    looks credentials up in the Runtime's resolver. Returns the source for further
    checks of its own.
    """
    policy = EgressPolicy(allow_hosts=frozenset({"127.0.0.1"}))
    secrets = StaticSecretResolver({"token": "t"})
    async with HttpTransport(policy=policy) as http:
        runtime = Runtime(InMemoryStore(), FakeModel(), ToolRegistry(), http=http, secrets=secrets)
        assert runtime.tool_sources is not None
        (source,) = runtime.tool_sources
    assert isinstance(source, source_type)
    assert source.pool.policy is policy
    assert source.pool.secrets is secrets
    return source


def check_entry_point(name: str, plugin: ModuleType, *, distribution: str) -> None:
    """The entry point ``name`` is ``plugin``, comes from ``distribution``, speaks this API.

    Fails when the packaging metadata points elsewhere (a renamed module, a stale
    install) or when the plugin was built for another version of the plugin API.
    """
    (entry_point,) = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP, name=name)
    assert entry_point.value == plugin.__name__
    assert entry_point.dist is not None
    assert entry_point.dist.name == distribution
    assert entry_point.load() is plugin
    assert plugin.PSYCH_PLUGIN_API == PLUGIN_API_VERSION


def check_memory_backend_beside_store(scheme: str, *, package: str, open: object) -> None:
    """The memory backend of ``scheme`` opens with ``open`` on every scheme of the store's.

    One URL reaches a deployment's Runs and its facts, so an adapter that offers both
    registers them from the same ``package`` under exactly the same schemes.
    """
    store = store_backends()[scheme]
    memories = memory_store_backends()
    memory = memories[scheme]
    assert store.package == package
    assert memory.package == package
    assert memory.open is open
    assert memory.schemes == store.schemes
    for alias in store.schemes:
        assert memories[alias] is memory


def modules_loaded_by(code: str, modules: Sequence[str]) -> list[str]:
    """Which of ``modules`` a fresh interpreter has imported after running ``code``.

    A fresh process, because the test run itself has long imported every driver; an
    empty list is the promise that the plugin (or whatever ``code`` does) stays cheap.
    """
    probe = (
        f"{code}\nimport sys\n"
        f"print(','.join(sorted(m for m in {list(modules)!r} if m in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = done.stdout.strip()
    return loaded.split(",") if loaded else []


class ToolSourcePluginContract:
    """What a plugin that offers a tool source promises; subclass it and fill in the names.

    The cases cover the entry point, the one tool source factory and the capability it
    offers, the source a Runtime builds from it, publishing a spec that needs the
    capability with the plugin and without it, and the plugin's doctor check. Checks of
    what loading the plugin imports stay with the adapter: the modules differ per SDK.
    """

    name: ClassVar[str]
    """The plugin's entry-point name, which is also its tool source factory's name."""
    plugin: ClassVar[ModuleType]
    """The plugin module the entry point names."""
    distribution: ClassVar[str]
    """The distribution that declares the entry point."""
    capability: ClassVar[str]
    """The spec capability the factory offers (an ``AgentSpec`` field)."""
    source_type: ClassVar[type[RemoteTools[Any, Any, Any]]]
    """The tool source the factory builds."""
    spec: ClassVar[AgentSpec]
    """A spec that uses the capability, so only a Runtime with the plugin accepts it."""
    refusal: ClassVar[str]
    """A pattern of the ``SpecValidationError`` publishing ``spec`` without the plugin."""
    doctor_check: ClassVar[str]
    """The name of the plugin's one doctor check, which passes where the SDK imports."""

    @pytest.fixture
    def plugin_only(self, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
        """A plugin manager with autoload off and only this plugin, from its entry point."""
        with plugin_alone(monkeypatch, self.name):
            yield

    @pytest.fixture
    def no_plugins(self, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
        """A plugin manager with no plugin registered at all."""
        with plugin_alone(monkeypatch):
            yield

    def test_the_distribution_declares_the_entry_point(self) -> None:
        """The entry point loads this plugin, from this distribution, on this API."""
        check_entry_point(self.name, self.plugin, distribution=self.distribution)

    def test_it_offers_its_capability(self) -> None:
        """One tool source factory, named as the plugin, for the capability."""
        found: list[ToolSourceFactory] = []
        self.plugin.psych_register_tool_sources(found.append)
        (factory,) = found
        assert isinstance(factory, ToolSourceFactory)
        assert (factory.name, factory.capability, factory.package) == (
            self.name,
            self.capability,
            self.distribution,
        )

    @pytest.mark.usefixtures("plugin_only")
    async def test_a_runtime_without_tool_sources_builds_one_with_its_policy_and_secrets(
        self,
    ) -> None:
        """The plugin manager's one source, which serves a spec with the capability only."""
        source = await check_the_runtime_builds_the_source(self.source_type)
        assert source.serves(self.spec)
        assert not source.serves(AgentSpec(name="plain", model="fake"))

    @pytest.mark.usefixtures("plugin_only")
    async def test_publish_accepts_the_spec_without_a_validation_context(self) -> None:
        """With the plugin installed, publish needs no context to accept the capability."""
        version = await publish(InMemoryStore(), self.spec, scope=Scope(tenant="acme"))
        assert version.spec == self.spec

    @pytest.mark.usefixtures("no_plugins")
    async def test_without_the_plugin_such_a_spec_is_refused(self) -> None:
        """A program without the adapter refuses the spec and says what is missing."""
        with pytest.raises(SpecValidationError, match=self.refusal):
            await publish(InMemoryStore(), self.spec, scope=Scope(tenant="acme"))

    def test_the_doctor_check_finds_the_sdk(self) -> None:
        """The plugin's one doctor check has its name and passes where the SDK imports."""
        found: list[DoctorCheck] = []
        self.plugin.psych_doctor_checks(found.append)
        (check,) = found
        assert check.name == self.doctor_check
        result = check.run()
        assert result.ok, result.detail


__all__ = [
    "ENTRY_POINT_GROUP",
    "ToolSourcePluginContract",
    "check_entry_point",
    "check_memory_backend_beside_store",
    "check_the_runtime_builds_the_source",
    "modules_loaded_by",
    "plugin_alone",
    "plugins_as_installed",
]
