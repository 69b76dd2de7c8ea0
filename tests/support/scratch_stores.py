"""Fresh, isolated stores on every backend, for tests and benchmarks.

``scratch_store_url(kind)`` returns the URL of a new, migrated, empty store of that kind
and a coroutine that removes it again: a temporary SQLite file, a PostgreSQL schema, a
MySQL table prefix, a DynamoDB table. Backends come from ``PSYCH_TEST_POSTGRES_DSN`` and
``PSYCH_TEST_MYSQL_DSN`` (defaults: the local servers with their test databases); DynamoDB
is a moto server on loopback that ``start_moto()`` launches (once per process) with
fake credentials, through the launcher the DynamoDB adapter's own tests use.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

POSTGRES_DSN = os.environ.get(
    "PSYCH_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test"
)
MYSQL_DSN = os.environ.get("PSYCH_TEST_MYSQL_DSN", "mysql://root@127.0.0.1:3306/test")

DURABLE_KINDS = ("sqlite", "postgres", "mysql", "dynamodb")
ALL_KINDS = ("memory", *DURABLE_KINDS)

Cleanup = Callable[[], Awaitable[None]]

FAKE_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}
MOTO_LAUNCHER = (
    Path(__file__).resolve().parents[2]
    / "packages"
    / "psych-store-dynamo"
    / "tests"
    / "moto_serial.py"
)
_moto: dict[str, str] = {}


def _moto_answers(endpoint: str) -> bool:
    try:
        with urllib.request.urlopen(f"{endpoint}/moto-api/reset", data=b"", timeout=1):
            return True
    except OSError:
        return False


def start_moto() -> str:
    """The endpoint of this process's moto server, starting it on first use.

    Sets fake AWS credentials in the environment (and so for child processes), so no
    real account can ever be reached. Raises ``RuntimeError`` when it cannot start.
    """
    if "endpoint" in _moto:
        return _moto["endpoint"]
    os.environ.update(FAKE_AWS_ENV)
    os.environ.pop("AWS_PROFILE", None)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [sys.executable, str(MOTO_LAUNCHER), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    atexit.register(_stop_moto, process)
    deadline = time.monotonic() + 60
    while not _moto_answers(endpoint):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"moto's server did not come up on {endpoint}")
        time.sleep(0.1)
    _moto["endpoint"] = endpoint
    return endpoint


def _stop_moto(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


async def _nothing() -> None:
    return None


async def drop_postgres_schema(schema: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(POSTGRES_DSN)
    try:
        await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await connection.close()


async def drop_mysql_tables(prefix: str) -> None:
    import importlib

    # aiomysql ships no type information; reach it untyped in this one helper.
    aiomysql: Any = importlib.import_module("aiomysql")
    url = urlsplit(MYSQL_DSN)
    connection = await aiomysql.connect(
        host=url.hostname or "127.0.0.1",
        port=url.port or 3306,
        user=url.username or "root",
        password=url.password or "",
        db=url.path.lstrip("/"),
    )
    try:
        async with connection.cursor() as cursor:
            await cursor.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = DATABASE() AND table_name LIKE %s",
                (prefix.replace("_", "\\_") + "%",),
            )
            for (name,) in await cursor.fetchall():
                await cursor.execute(f"DROP TABLE IF EXISTS `{name}`")
    finally:
        connection.close()


async def scratch_store_url(kind: str, *, migrate: bool = True) -> tuple[str, Cleanup]:
    """A new empty store of ``kind`` (migrated unless told not to) and its cleanup."""
    import psych_runtime

    tag = f"scratch_{secrets.token_hex(4)}"
    cleanup: Cleanup = _nothing
    if kind == "memory":
        return "memory://", cleanup
    if kind == "sqlite":
        folder = Path(tempfile.mkdtemp(prefix="psych-"))
        url = f"sqlite:///{folder / 'store.db'}"

        async def remove_folder() -> None:
            shutil.rmtree(folder, ignore_errors=True)

        cleanup = remove_folder
    elif kind == "postgres":
        url = f"{POSTGRES_DSN}?schema={tag}"

        async def drop_schema() -> None:
            await drop_postgres_schema(tag)

        cleanup = drop_schema
    elif kind == "dynamodb":
        from psych_store_dynamo import drop_table

        endpoint = start_moto()
        url = f"dynamodb://{tag}?region=us-east-1&endpoint_url={endpoint}"

        async def remove_table() -> None:
            await drop_table(url)

        cleanup = remove_table
    elif kind == "mysql":
        url = f"{MYSQL_DSN}?table_prefix={tag}_"

        async def drop_tables() -> None:
            await drop_mysql_tables(tag + "_")

        cleanup = drop_tables
    else:
        raise ValueError(f"unknown store kind {kind!r}")
    if migrate:
        store = await psych_runtime.open_store(url, migrate=True)
        await store.close()
    return url, cleanup
