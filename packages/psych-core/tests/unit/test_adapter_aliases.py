"""The import paths the product description uses for adapters work when they are installed.

``from psych_runtime.store.postgres import PostgresStore`` is the description's own
example of a routine import. The adapters ship as their own packages here, so those
paths are aliases: the names come through when the package is installed, and the
import names the package to install when it is not.
"""

import subprocess
import sys
from typing import NamedTuple

import pytest

ALIASES = [
    ("psych_runtime.store.sqlite", "SqliteStore", "psych_store_sqlite", "psych-store-sqlite"),
    (
        "psych_runtime.store.postgres",
        "PostgresStore",
        "psych_store_postgres",
        "psych-store-postgres",
    ),
    ("psych_runtime.store.mysql", "MySQLStore", "psych_store_mysql", "psych-store-mysql"),
    ("psych_runtime.store.dynamo", "DynamoStore", "psych_store_dynamo", "psych-store-dynamo"),
    ("psych_runtime.sandbox.subprocess", "SubprocessSandbox", "psych_sandbox", "psych-sandbox"),
    ("psych_runtime.sandbox.container", "OciSandbox", "psych_sandbox", "psych-sandbox"),
    ("psych_runtime.sandbox.contract", "SandboxContract", "psych_contract", "psych-contract"),
]


class Alias(NamedTuple):
    alias: str
    name: str
    package: str
    distribution: str


@pytest.fixture(params=[Alias(*row) for row in ALIASES], ids=lambda row: f"{row.alias}.{row.name}")
def adapter(request: pytest.FixtureRequest) -> Alias:
    """One documented adapter path, the package it comes from and how it is installed."""
    row: Alias = request.param
    return row


def test_the_documented_path_gives_the_adapters_own_class(adapter: Alias) -> None:
    alias, name, package, _ = adapter
    code = (
        f"from {alias} import {name}\n"
        f"import {package}\n"
        f"assert {name}.__module__.startswith({package!r}), {name}.__module__\n"
        f"import {alias} as alias\n"
        f"assert {name!r} in alias.__all__\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_the_package_the_import_says_what_to_install(adapter: Alias) -> None:
    alias, name, package, distribution = adapter
    code = (
        f"import sys; sys.modules[{package!r}] = None\n"
        "try:\n"
        f"    from {alias} import {name}\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert f"pip install {distribution}" in out.stdout, out.stdout + out.stderr
