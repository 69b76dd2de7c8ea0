"""Fixtures for the ``psych`` command's tests."""

from collections.abc import Iterator

import pytest

from psych_runtime.plugins import AUTOLOAD_ENV, reset_plugin_manager


@pytest.fixture(autouse=True)
def fresh_plugin_manager(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with autoload on and no cached manager, and leaves none behind."""
    monkeypatch.delenv(AUTOLOAD_ENV, raising=False)
    reset_plugin_manager()
    yield
    reset_plugin_manager()
