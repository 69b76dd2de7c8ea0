"""Helpers shared by this package's tests."""

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def new_file_url(name: str) -> Iterator[str]:
    """The URL of database file ``name`` in a new directory, removed afterwards.

    For fixtures that override a suite's own and so take no arguments (hence no
    ``tmp_path``): every case gets a new, empty file.
    """
    with tempfile.TemporaryDirectory(prefix="psych-sqlite-") as folder:
        yield f"sqlite:///{folder}/{name}"
