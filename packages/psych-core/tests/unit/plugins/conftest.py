"""Fixtures for plugin tests: a clean plugin manager per test and fake distributions."""

import sys
import textwrap
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest

from psych_contract.plugin import plugins_as_installed
from psych_runtime.plugins import AUTOLOAD_ENV

FakeDist = Callable[..., Path]


@pytest.fixture(autouse=True)
def fresh_plugin_manager(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test starts with autoload on and no cached manager, and leaves none behind."""
    with plugins_as_installed(monkeypatch):
        yield


@pytest.fixture
def autoload_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Turn off discovery of installed plugins; the built-in one and hand-registered count."""
    monkeypatch.setenv(AUTOLOAD_ENV, "1")


@pytest.fixture
def fake_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDist]:
    """Build installed-looking distributions under tmp_path and put it on sys.path.

    Each call writes ``<module>.py`` plus a ``<dist>-<version>.dist-info`` directory
    whose entry_points.txt points the ``psych_runtime`` group at that module, which is
    exactly what pip leaves behind for a real plugin.
    """
    monkeypatch.syspath_prepend(str(tmp_path))
    modules: list[str] = []

    def make(
        *,
        module: str,
        source: str,
        dist: str = "fake_psych_store",
        version: str = "0.1",
        entry_point: str = "fakestore",
    ) -> Path:
        (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
        info = tmp_path / f"{dist}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist.replace('_', '-')}\nVersion: {version}\n"
        )
        (info / "entry_points.txt").write_text(f"[psych_runtime]\n{entry_point} = {module}\n")
        modules.append(module)
        return info

    yield make
    for module in modules:
        sys.modules.pop(module, None)
