"""Fixtures for the ``psych`` command's tests."""

from collections.abc import Iterator

import pytest

from psych_contract.plugin import plugins_as_installed


@pytest.fixture(autouse=True)
def fresh_plugin_manager(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with autoload on and no cached manager, and leaves none behind."""
    with plugins_as_installed(monkeypatch):
        yield
