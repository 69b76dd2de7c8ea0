"""Turning sqlite3 errors into the port's errors, with the likely cause spelled out.

Callers of a Store handle ``psych_runtime`` errors only: a locked file, a missing
directory or a read-only database becomes ``StoreUnavailable`` naming the path.
"""

import os
import sqlite3
from pathlib import Path

from psych_runtime import StoreUnavailable
from psych_store_sqlite.settings import SqliteSettings


def unavailable(settings: SqliteSettings, exc: sqlite3.Error) -> StoreUnavailable:
    """The store error for a driver failure in the middle of an operation."""
    message = str(exc)
    if "locked" in message or "busy" in message:
        return StoreUnavailable(
            f"SQLite database {settings.path}: {message} (another connection held the "
            f"write lock for longer than busy_timeout_ms={settings.busy_timeout_ms})"
        )
    if "unable to open" in message or "readonly" in message:
        return StoreUnavailable(open_failure(settings.path, exc))
    return StoreUnavailable(f"SQLite database {settings.path}: {message}")


def open_failure(path: Path, exc: sqlite3.Error) -> str:
    """Explain why a file could not be opened, naming the most likely cause."""
    parent = path.parent
    if not parent.exists():
        cause = f"the directory {parent} does not exist"
    elif not parent.is_dir():
        cause = f"{parent} is not a directory"
    elif path.is_dir():
        cause = f"{path} is a directory"
    elif not os.access(parent, os.W_OK | os.X_OK):
        cause = (
            f"the directory {parent} is not writable (SQLite creates {path.name}-wal and "
            f"{path.name}-shm beside the database)"
        )
    elif path.exists() and not os.access(path, os.R_OK | os.W_OK):
        cause = f"{path} is not readable and writable by this process"
    else:
        cause = "see the SQLite error"
    return f"cannot open SQLite database {path}: {cause} ({exc})"


__all__ = ["open_failure", "unavailable"]
