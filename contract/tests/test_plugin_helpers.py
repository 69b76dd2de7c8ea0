"""The plugin helpers fail where an adapter's packaging or imports break its promise."""

import pytest

import psych_runtime
import psych_store_sqlite.plugin
from psych_contract.plugin import check_entry_point
from psych_contract.plugin import check_memory_backend_beside_store
from psych_contract.plugin import modules_loaded_by
from psych_contract.plugin import plugin_alone
from psych_contract.plugin import plugins_as_installed
from psych_runtime.adapters import store_backends


def test_an_entry_point_from_another_distribution_fails() -> None:
    check_entry_point("sqlite", psych_store_sqlite.plugin, distribution="psych-store-sqlite")
    with pytest.raises(AssertionError):
        check_entry_point("sqlite", psych_store_sqlite.plugin, distribution="psych-store-other")
    with pytest.raises(AssertionError):
        check_entry_point("sqlite", psych_runtime, distribution="psych-store-sqlite")


def test_a_module_the_code_imports_is_reported() -> None:
    assert modules_loaded_by("import json", ["json", "no_such_module"]) == ["json"]
    assert modules_loaded_by("pass", ["no_such_module"]) == []


def test_the_named_plugin_is_the_only_one_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    with plugin_alone(monkeypatch, "sqlite"):
        assert {b.package for b in store_backends().values()} <= {
            "psych-runtime",
            "psych-store-sqlite",
        }
        assert "sqlite" in store_backends()
    with plugin_alone(monkeypatch):
        assert "sqlite" not in store_backends()


def test_installed_plugins_load_even_where_autoload_was_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PSYCH_DISABLE_PLUGIN_AUTOLOAD", "1")
    with plugins_as_installed(monkeypatch):
        assert "sqlite" in store_backends()


def test_a_memory_backend_from_elsewhere_or_with_another_opener_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plugin = psych_store_sqlite.plugin
    with plugin_alone(monkeypatch, "sqlite"):
        check_memory_backend_beside_store(
            "sqlite", package="psych-store-sqlite", open=plugin.open_sqlite_memory_store
        )
        with pytest.raises(AssertionError):
            check_memory_backend_beside_store(
                "sqlite", package="psych-store-sqlite", open=plugin.open_sqlite_store
            )
        with pytest.raises(AssertionError):
            check_memory_backend_beside_store(
                "sqlite", package="psych-store-other", open=plugin.open_sqlite_memory_store
            )
