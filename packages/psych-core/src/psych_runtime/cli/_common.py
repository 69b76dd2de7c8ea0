"""What the commands that read a store share: opening it, errors, and colour."""

import argparse
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from datetime import datetime
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import TextIO
from urllib.parse import unquote
from urllib.parse import urlsplit

from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import Usage
from psych_runtime.core.scope import Scope
from psych_runtime.plugins import open_store
from psych_runtime.store.errors import StoreError
from psych_runtime.store.port import Store


def add_store_arguments(parser: argparse.ArgumentParser, *, tenant: bool = True) -> None:
    """Add ``--store`` (required) and, when asked, ``--tenant`` to a subcommand."""
    parser.add_argument(
        "--store",
        required=True,
        metavar="URL",
        help="the store to read, e.g. sqlite:///runs.db or postgresql://host/db",
    )
    if tenant:
        parser.add_argument(
            "--tenant",
            default=None,
            metavar="TENANT",
            help="only Runs of this tenant (default: every tenant)",
        )


def scope_for(tenant: str | None) -> Scope | None:
    """The Scope a read is checked against, or None to read any tenant's Run."""
    return None if tenant is None else Scope(tenant=tenant)


class NoDatabaseFile(StoreError):
    """A file-based store's URL names a file that does not exist."""


def missing_database_file(url: str) -> Path | None:
    """The file a ``sqlite:`` URL names when that file does not exist, else None.

    Opening a SQLite store creates its file, which a read-only command must not do,
    so the commands check for the file before opening.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() != "sqlite" or not parts.path.startswith("/"):
        return None
    path = Path(unquote(parts.path[1:]))
    if not path.name or path.exists():
        return None
    return path


@contextlib.asynccontextmanager
async def opened_store(url: str) -> AsyncIterator[Store]:
    """Open the store at ``url`` without migrating it, and close it afterwards.

    Raises:
        NoDatabaseFile: the URL names a SQLite file that does not exist (it is not
            created).
    """
    missing = missing_database_file(url)
    if missing is not None:
        raise NoDatabaseFile(f"there is no database file at {missing}")
    store = await open_store(url)
    try:
        yield store
    finally:
        await store.close()


class Painter:
    """Adds ANSI colour to text when writing to a terminal, and nothing otherwise.

    ``NO_COLOR`` (any value) turns colour off, as most terminal programs agree.
    """

    _CODES = {"red": "31", "green": "32", "yellow": "33", "cyan": "36", "dim": "2", "bold": "1"}

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    @classmethod
    def for_stream(cls, stream: TextIO) -> "Painter":
        """Colour for ``stream`` when it is a terminal and ``NO_COLOR`` is unset."""
        isatty = getattr(stream, "isatty", None)
        tty = bool(isatty()) if callable(isatty) else False
        return cls(tty and "NO_COLOR" not in os.environ)

    def __call__(self, text: str, colour: str) -> str:
        """``text`` in ``colour`` (a key of ``_CODES``), or unchanged."""
        if not self.enabled:
            return text
        return f"\x1b[{self._CODES[colour]}m{text}\x1b[0m"


def fail(command: str, error: BaseException) -> int:
    """Print a one-line error for ``command`` on stderr and return exit code 1."""
    print(f"psych {command}: {error}", file=sys.stderr)
    return 1


def format_cost(cost: Cost | None) -> str:
    """A cost as ``USD 0.0137``, or ``-`` when unknown."""
    if cost is None:
        return "-"
    amount = cost.amount.normalize() if cost.amount != 0 else Decimal(0)
    return f"{cost.currency} {amount:f}"


def format_usage(usage: Usage) -> str:
    """Tokens as ``in/out`` with cache figures only when there are any."""
    text = f"{usage.input} in / {usage.output} out"
    if usage.cache_read or usage.cache_write:
        text += f" (cache read {usage.cache_read}, write {usage.cache_write})"
    return text


def format_seconds(seconds: float) -> str:
    """A duration short enough for one column: ``0.12s``, ``3m05s``, ``2h10m``, ``4d``."""
    if seconds < 60:
        return f"{seconds:.2f}s"
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    if whole < 86400:
        return f"{whole // 3600}h{(whole % 3600) // 60:02d}m"
    return f"{whole // 86400}d"


def format_age(then: datetime, now: datetime) -> str:
    """How long ago ``then`` was, never negative (clocks of two machines may differ)."""
    return format_seconds(max((now - then) / timedelta(seconds=1), 0.0))


def short_hash(version_hash: str) -> str:
    """The first 12 hex digits of a Version hash, without its ``sha256:`` prefix."""
    return version_hash.partition(":")[2][:12] or version_hash[:12]
