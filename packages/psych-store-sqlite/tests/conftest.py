"""Helpers shared by this package's tests."""

import tempfile
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import asynccontextmanager
from contextlib import contextmanager

from psych_contract.lifecycle import migrated
from psych_store_sqlite._database import SqliteDatabase


@contextmanager
def new_file_url(name: str) -> Iterator[str]:
    """The URL of database file ``name`` in a new directory, removed afterwards.

    For fixtures that override a suite's own and so take no arguments (hence no
    ``tmp_path``): every case gets a new, empty file.
    """
    with tempfile.TemporaryDirectory(prefix="psych-sqlite-") as folder:
        yield f"sqlite:///{folder}/{name}"


@asynccontextmanager
async def migrated_in_new_file[D: SqliteDatabase](
    kind: Callable[[str], D], name: str
) -> AsyncIterator[D]:
    """A migrated ``kind`` on database file ``name`` in a new directory, for one case."""
    with new_file_url(name) as url:
        async with migrated(kind(url)) as database:
            yield database
