"""The entry point registers the three backends; loading it imports no backend."""

import importlib.metadata
import subprocess
import sys
from collections.abc import Iterator

import pytest

import psych_runtime
from psych_runtime.adapters import AUTOLOAD_ENV, Sandbox, reset_plugin_manager, sandbox_backends
from psych_sandbox import plugin


@pytest.fixture
def sandbox_plugin_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    reset_plugin_manager()
    (entry_point,) = importlib.metadata.entry_points(group="psych_runtime", name="sandbox")
    psych_runtime.adapters.register_plugin(entry_point.load(), name="sandbox")
    yield
    reset_plugin_manager()


def test_plugin_declares_the_api_version() -> None:
    assert plugin.PSYCH_PLUGIN_API == 1


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
    code = (
        "import sys, psych_sandbox.plugin\n"
        "loaded = [m for m in ('psych_sandbox.process', 'psych_sandbox.namespaces', "
        "'psych_sandbox.oci', 'psych_sandbox._host') if m in sys.modules]\n"
        "assert loaded == [], loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_doctor_check_reports_the_sandboxes() -> None:
    result = plugin.check_sandboxes()
    assert result.ok, result.detail
    assert "subprocess sandbox ready" in result.detail
