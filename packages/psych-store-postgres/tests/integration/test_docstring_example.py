"""The usage example at the top of the package docstring runs as written."""

import asyncio
import doctest
import secrets

import asyncpg
import pytest

import psych_store_postgres
from psych_contract.lifecycle import closing
from psych_runtime.adapters import reset_plugin_manager

EXAMPLE_DSN = "postgresql://postgres@127.0.0.1:5432/test"


async def _reachable(dsn: str) -> None:
    try:
        conn = await asyncpg.connect(dsn, timeout=5)
    except Exception as exc:
        pytest.fail(f"PostgreSQL is required for this test and {dsn!r} is unreachable ({exc})")
    await conn.close()


async def _drop(dsn: str, schema: str) -> None:
    async with closing(await asyncpg.connect(dsn)) as conn:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_the_package_docstring_example_runs(dsn: str) -> None:
    asyncio.run(_reachable(dsn))
    docstring = psych_store_postgres.__doc__
    assert docstring is not None
    assert EXAMPLE_DSN in docstring
    schema = f"psych_t_{secrets.token_hex(6)}"
    # Point the example at the configured server and at a schema of its own.
    text = docstring.replace(EXAMPLE_DSN, dsn).replace("psych_example", schema)
    test = doctest.DocTestParser().get_doctest(text, {}, "psych_store_postgres", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    reset_plugin_manager()
    try:
        runner.run(test)
    finally:
        reset_plugin_manager()
        asyncio.run(_drop(dsn, schema))
    assert runner.tries >= 4
    assert runner.failures == 0
