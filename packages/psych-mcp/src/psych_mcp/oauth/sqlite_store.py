"""A durable ``TokenStore`` in one SQLite file.

Tokens, registered clients and pending authorizations share one table, told apart by
a ``kind`` column; the key column holds the JSON of the key's parts, so a principal of
None and an empty principal stay different keys. The standard ``sqlite3`` module
blocks, so every statement runs on one worker thread that owns the connection, and
the event loop only waits for it.

The file holds bearer and refresh tokens in clear: it is created readable by its owner
only, and it belongs on a disk no other user can read.
"""

import asyncio
import json
import os
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from psych_mcp.oauth.models import PendingAuthorization
from psych_mcp.oauth.models import RegisteredClient
from psych_mcp.oauth.models import StoredToken
from psych_mcp.oauth.models import TokenKey
from psych_runtime.adapters.tools import ClosedOnExit

_TABLE = "psych_mcp_oauth"
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {_TABLE} (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    tenant TEXT NOT NULL,
    value TEXT NOT NULL,
    expires_at REAL,
    PRIMARY KEY (kind, key)
) WITHOUT ROWID
"""
_UPSERT = f"""
INSERT INTO {_TABLE} (kind, key, tenant, value, expires_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (kind, key) DO UPDATE SET
    tenant = excluded.tenant, value = excluded.value, expires_at = excluded.expires_at
"""
_SELECT = f"SELECT value FROM {_TABLE} WHERE kind = ? AND key = ?"
_DELETE = f"DELETE FROM {_TABLE} WHERE kind = ? AND key = ?"
_TAKE = f"DELETE FROM {_TABLE} WHERE kind = 'pending' AND key = ? RETURNING value"
_PURGE = f"DELETE FROM {_TABLE} WHERE kind = 'pending' AND expires_at <= ?"


def _token_key(key: TokenKey) -> str:
    return json.dumps([key.tenant, key.principal, key.server, key.resource])


def _client_key(tenant: str, issuer: str) -> str:
    return json.dumps([tenant, issuer])


class SqliteTokenStore(ClosedOnExit):
    """A ``TokenStore`` that survives restarts, in a SQLite database file.

    The file is opened on first use, in WAL mode so that several processes may share
    it. Call ``close`` (or use ``async with``) when done.

    Args:
        path: the database file; created, with its folder, when missing.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = Path(path)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="psych-mcp-oauth")
        self._connection: sqlite3.Connection | None = None
        self._closed = False

    async def get(self, key: TokenKey) -> StoredToken | None:
        """The token stored under ``key``, or None."""
        value = await self._run(self._select, "token", _token_key(key))
        return None if value is None else StoredToken.load(value)

    async def put(self, key: TokenKey, token: StoredToken) -> None:
        """Store ``token`` under ``key``, replacing any token already there."""
        await self._run(self._upsert, "token", _token_key(key), key.tenant, token.secret_dump())

    async def delete(self, key: TokenKey) -> None:
        """Forget the token under ``key``."""
        await self._run(self._delete, "token", _token_key(key))

    async def get_client(self, tenant: str, issuer: str) -> RegisteredClient | None:
        """The client registered for ``tenant`` at ``issuer``, or None."""
        value = await self._run(self._select, "client", _client_key(tenant, issuer))
        return None if value is None else RegisteredClient.load(value)

    async def put_client(self, tenant: str, issuer: str, client: RegisteredClient) -> None:
        """Keep ``client`` as the registration of ``tenant`` at ``issuer``."""
        await self._run(
            self._upsert, "client", _client_key(tenant, issuer), tenant, client.secret_dump()
        )

    async def delete_client(self, tenant: str, issuer: str) -> None:
        """Forget the registration of ``tenant`` at ``issuer``."""
        await self._run(self._delete, "client", _client_key(tenant, issuer))

    async def put_pending(self, pending: PendingAuthorization) -> None:
        """Keep a pending authorization, dropping those already expired."""
        await self._run(self._put_pending, pending)

    async def take_pending(self, state: str) -> PendingAuthorization | None:
        """Remove and return the pending authorization for ``state``, or None."""
        value = await self._run(self._take, state)
        return None if value is None else PendingAuthorization.load(value)

    async def close(self) -> None:
        """Close the database; the store cannot be used afterwards."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._close_connection)
        self._executor.shutdown(wait=False)

    def __repr__(self) -> str:
        return f"SqliteTokenStore({str(self._path)!r})"

    async def _run[T](self, fn: Callable[..., T], *args: Any) -> T:
        if self._closed:
            raise RuntimeError("the SqliteTokenStore is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, fn, *args)

    # Everything below runs on the worker thread only.

    def _db(self) -> sqlite3.Connection:
        if self._connection is None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            # Create the file readable by its owner alone before SQLite opens it.
            os.close(os.open(self._path, os.O_CREAT | os.O_RDWR, 0o600))
            connection = sqlite3.connect(self._path, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA busy_timeout=5000")
            connection.execute(_SCHEMA)
            self._connection = connection
        return self._connection

    def _close_connection(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _select(self, kind: str, key: str) -> dict[str, Any] | None:
        row = self._db().execute(_SELECT, (kind, key)).fetchone()
        return None if row is None else _decode(row[0])

    def _upsert(
        self,
        kind: str,
        key: str,
        tenant: str,
        value: dict[str, Any],
        expires_at: float | None = None,
    ) -> None:
        self._db().execute(_UPSERT, (kind, key, tenant, json.dumps(value), expires_at))

    def _delete(self, kind: str, key: str) -> None:
        self._db().execute(_DELETE, (kind, key))

    def _put_pending(self, pending: PendingAuthorization) -> None:
        db = self._db()
        db.execute(_PURGE, (pending.created_at.timestamp(),))
        db.execute(
            _UPSERT,
            (
                "pending",
                pending.state,
                pending.tenant,
                json.dumps(pending.secret_dump()),
                pending.expires_at.timestamp(),
            ),
        )

    def _take(self, state: str) -> dict[str, Any] | None:
        # fetchall steps the statement to its end, so it is finished and reset here.
        rows = self._db().execute(_TAKE, (state,)).fetchall()
        return _decode(rows[0][0]) if rows else None


def _decode(text: str) -> dict[str, Any]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("a stored OAuth record is not a JSON object")
    return value


__all__ = ["SqliteTokenStore"]
