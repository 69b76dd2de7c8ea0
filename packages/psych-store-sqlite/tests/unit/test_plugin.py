"""The entry point, the registered backend, and a plugin import that stays cheap."""

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import psych_runtime
import psych_store_sqlite
from psych_contract.lifecycle import closing
from psych_contract.plugin import check_entry_point
from psych_contract.plugin import check_memory_backend_beside_store
from psych_contract.plugin import modules_loaded_by
from psych_contract.plugin import plugin_alone
from psych_runtime.adapters import MemoryKey
from psych_runtime.adapters import SchemaNotMigrated
from psych_runtime.adapters import store_backends
from psych_store_sqlite import SqliteMemoryStore
from psych_store_sqlite import SqliteStore
from psych_store_sqlite import plugin
from psych_store_sqlite import schema


@pytest.fixture
def sqlite_plugin_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A plugin manager with autoload off and only this plugin, from its entry point.

    Autoload stays off so that a half-installed sibling adapter in the same environment
    cannot break these tests.
    """
    with plugin_alone(monkeypatch, "sqlite"):
        yield


def test_the_distribution_declares_the_entry_point() -> None:
    check_entry_point("sqlite", plugin, distribution="psych-store-sqlite")


@pytest.mark.usefixtures("sqlite_plugin_only")
def test_the_backend_claims_the_sqlite_scheme() -> None:
    backend = store_backends()["sqlite"]
    assert backend.package == "psych-store-sqlite"
    assert backend.schemes == ("sqlite",)


@pytest.mark.usefixtures("sqlite_plugin_only")
def test_the_memory_backend_claims_the_same_scheme() -> None:
    check_memory_backend_beside_store(
        "sqlite", package="psych-store-sqlite", open=plugin.open_sqlite_memory_store
    )


@pytest.mark.usefixtures("sqlite_plugin_only")
async def test_open_memory_store_returns_a_sqlite_memory_store(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/m.db"
    async with closing(
        await psych_runtime.open_memory_store(url, migrate=True, readers=0)
    ) as memory:
        assert isinstance(memory, SqliteMemoryStore)
        assert memory.path == tmp_path / "m.db"
        assert memory.settings.readers == 0
        assert await memory.schema_version() == schema.SCHEMA_VERSION
        key = MemoryKey(tenant="acme", end_user_id="alice")
        fact = await memory.remember(key, "prefers email")
        assert await memory.recall(key) == (fact,)


@pytest.mark.usefixtures("sqlite_plugin_only")
async def test_open_memory_store_opens_the_file_but_migrates_only_when_asked(
    tmp_path: Path,
) -> None:
    async with closing(
        await psych_runtime.open_memory_store(f"sqlite:///{tmp_path}/n.db")
    ) as memory:
        assert isinstance(memory, SqliteMemoryStore)
        assert (tmp_path / "n.db").exists()  # opened eagerly
        assert await memory.schema_version() == 0
        with pytest.raises(SchemaNotMigrated, match="migrate"):
            await memory.recall(MemoryKey(tenant="acme", end_user_id="alice"))
    with pytest.raises(psych_runtime.StoreUnavailable):
        await psych_runtime.open_memory_store(f"sqlite:///{tmp_path}/missing/dir.db")
    with pytest.raises(TypeError, match="no option 'pool_size'"):
        await psych_runtime.open_memory_store(f"sqlite:///{tmp_path}/c.db", pool_size=3)


@pytest.mark.usefixtures("sqlite_plugin_only")
async def test_open_store_returns_a_sqlite_store(tmp_path: Path) -> None:
    async with closing(
        await psych_runtime.open_store(f"sqlite:///{tmp_path}/a.db", migrate=True)
    ) as store:
        assert isinstance(store, SqliteStore)
        assert store.path == tmp_path / "a.db"
        assert await store.schema_version() == schema.SCHEMA_VERSION


@pytest.mark.usefixtures("sqlite_plugin_only")
async def test_open_store_migrates_only_when_asked(tmp_path: Path) -> None:
    async with closing(
        await psych_runtime.open_store(f"sqlite:///{tmp_path}/b.db", readers=0)
    ) as store:
        assert isinstance(store, SqliteStore)
        assert store.settings.readers == 0
        assert (tmp_path / "b.db").exists()  # opened eagerly
        assert await store.schema_version() == 0
        with pytest.raises(psych_runtime.adapters.SchemaNotMigrated, match="migrate"):
            await store.head(psych_runtime.RunId("r"))


@pytest.mark.usefixtures("sqlite_plugin_only")
async def test_open_store_refuses_unknown_options(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="no option 'pool_size'"):
        await psych_runtime.open_store(f"sqlite:///{tmp_path}/c.db", pool_size=3)
    with pytest.raises(TypeError, match="migrate"):
        await psych_runtime.open_store(f"sqlite:///{tmp_path}/c.db", migrate="yes")
    with pytest.raises(psych_runtime.adapters.InvalidStoreUrl):
        await psych_runtime.open_store("sqlite://server/c.db")


def test_the_doctor_check_reports_the_sqlite_version() -> None:
    found: list[psych_runtime.adapters.DoctorCheck] = []
    plugin.psych_doctor_checks(found.append)
    (check,) = found
    result = check.run()
    assert result.ok
    import sqlite3

    assert sqlite3.sqlite_version in result.detail


@pytest.mark.parametrize("module", ["psych_store_sqlite", "psych_store_sqlite.plugin"])
def test_importing_the_plugin_does_not_import_the_driver(module: str) -> None:
    watched = ["sqlite3", "_sqlite3", "psych_store_sqlite.store", "psych_store_sqlite.memory"]
    assert modules_loaded_by(f"import {module}", watched) == []


def test_the_store_class_is_exported_lazily() -> None:
    assert psych_store_sqlite.SqliteStore is SqliteStore
    assert "SqliteStore" in psych_store_sqlite.__all__
    with pytest.raises(AttributeError):
        _ = psych_store_sqlite.NoSuchThing


@pytest.mark.usefixtures("sqlite_plugin_only")
def test_the_package_docstring_example_runs() -> None:
    doc = psych_store_sqlite.__doc__
    assert doc is not None
    example = textwrap.dedent(doc.split("::", 1)[1])
    exec(compile(example, "psych_store_sqlite docstring", "exec"), {})
