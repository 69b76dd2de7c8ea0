"""Registration through the entry point, and a cheap plugin import."""

import doctest
import json
import subprocess
import sys
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator

import pytest

import psych_runtime
import psych_store_mysql
import psych_store_mysql.plugin as plugin
from psych_contract.lifecycle import closing
from psych_contract.memory import check_bad_input_refused_offline
from psych_contract.plugin import check_entry_point
from psych_contract.plugin import check_memory_backend_beside_store
from psych_contract.plugin import plugins_as_installed
from psych_runtime.adapters import store_backends
from psych_store_mysql import MySQLMemoryStore
from psych_store_mysql import MySQLStore
from psych_store_mysql._database import MySQLDatabase


@pytest.fixture(autouse=True)
def fresh_plugin_manager(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with plugins_as_installed(monkeypatch):
        yield


def test_the_distribution_declares_the_entry_point() -> None:
    check_entry_point("mysql", plugin, distribution="psych-store-mysql")


def test_both_schemes_are_registered_by_this_package() -> None:
    backends = store_backends()
    assert backends["mysql"] is backends["mariadb"]
    assert backends["mysql"].package == "psych-store-mysql"


def test_the_memory_backend_claims_the_same_schemes() -> None:
    check_memory_backend_beside_store(
        "mysql", package="psych-store-mysql", open=plugin.open_mysql_memory_store
    )


OPENERS = [
    pytest.param(psych_runtime.open_store, MySQLStore, id="store"),
    pytest.param(psych_runtime.open_memory_store, MySQLMemoryStore, id="memory"),
]
"""Both backends this package registers: how each is opened, and what it opens."""


@pytest.mark.parametrize("scheme", ["mysql", "mariadb"])
@pytest.mark.parametrize(("open_backend", "kind"), OPENERS)
async def test_open_returns_a_mysql_backend_without_connecting(
    scheme: str, open_backend: Callable[..., Awaitable[object]], kind: type[MySQLDatabase]
) -> None:
    # Port 9 (discard) is never a MySQL server: opening must not touch the network.
    opened = await open_backend(f"{scheme}://u:pw@127.0.0.1:9/db?table_prefix=x_", pool_max_size=3)
    assert isinstance(opened, kind)
    async with closing(opened):
        assert opened.settings.pool_max_size == 3
        assert opened.tables.runs == "x_psych_runs"
        assert opened.tables.memories == "x_psych_memories"


@pytest.mark.parametrize(
    "open_backend",
    [psych_runtime.open_store, psych_runtime.open_memory_store],
    ids=["store", "memory"],
)
async def test_open_refuses_an_unknown_option(
    open_backend: Callable[..., Awaitable[object]],
) -> None:
    with pytest.raises(TypeError, match="nonsense"):
        await open_backend("mysql://127.0.0.1/db", nonsense=1)


async def test_a_bad_key_or_limit_is_refused_before_any_connection() -> None:
    # Nothing listens on port 9: a check that reached the network would fail otherwise.
    await check_bad_input_refused_offline(MySQLMemoryStore("mysql://u@127.0.0.1:9/db"))


async def test_open_store_refuses_a_malformed_url() -> None:
    with pytest.raises(psych_runtime.adapters.InvalidStoreUrl):
        await psych_runtime.open_store("mysql://127.0.0.1/")


def test_importing_the_plugin_loads_neither_the_driver_nor_the_store() -> None:
    code = (
        "import json, sys\n"
        "import psych_store_mysql.plugin\n"
        "print(json.dumps(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('aiomysql', 'pymysql') "
        "or m in ('psych_store_mysql.store', 'psych_store_mysql.memory'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(out.stdout) == []


def test_the_package_docstring_example_runs() -> None:
    failures, tried = doctest.testmod(psych_store_mysql, raise_on_error=False)
    assert tried > 0
    assert failures == 0


def test_the_memory_store_is_exported_lazily() -> None:
    assert "MySQLMemoryStore" in psych_store_mysql.__all__
    assert "MySQLMemoryStore" in dir(psych_store_mysql)
    assert psych_store_mysql.MySQLMemoryStore is MySQLMemoryStore


def test_doctor_check_reports_the_driver() -> None:
    found: list[psych_runtime.adapters.DoctorCheck] = []
    plugin.psych_doctor_checks(found.append)
    assert [check.name for check in found] == ["mysql store"]
    assert found[0].run().ok
