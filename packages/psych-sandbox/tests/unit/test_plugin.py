"""The entry point registers the three backends; loading it imports no backend."""

from collections.abc import Iterator

import pytest

from psych_contract.plugin import check_entry_point
from psych_contract.plugin import modules_loaded_by
from psych_contract.plugin import plugin_alone
from psych_runtime.adapters import Sandbox
from psych_runtime.adapters import sandbox_backends
from psych_sandbox import plugin


@pytest.fixture
def sandbox_plugin_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with plugin_alone(monkeypatch, "sandbox"):
        yield


def test_the_distribution_declares_the_entry_point() -> None:
    check_entry_point("sandbox", plugin, distribution="psych-sandbox")


@pytest.mark.usefixtures("sandbox_plugin_only")
async def test_backends_are_registered_and_open() -> None:
    backends = sandbox_backends()
    assert {"subprocess", "namespaces", "oci"} <= set(backends)
    assert all(b.package == "psych-sandbox" for b in backends.values())
    sandbox = await backends["subprocess"].open()
    try:
        assert isinstance(sandbox, Sandbox)
        assert sandbox.capabilities.backend == "subprocess"
    finally:
        await sandbox.close()


def test_loading_the_plugin_imports_no_backend() -> None:
    backends = ["process", "namespaces", "oci", "_host"]
    watched = [f"psych_sandbox.{name}" for name in backends]
    assert modules_loaded_by("import psych_sandbox.plugin", watched) == []


def test_doctor_check_reports_the_sandboxes() -> None:
    result = plugin.check_sandboxes()
    assert result.ok, result.detail
    assert "subprocess sandbox ready" in result.detail
