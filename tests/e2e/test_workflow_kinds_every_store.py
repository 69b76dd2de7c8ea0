"""Every workflow step kind and option, the same tests as the core package's, on every
durable store.

The core package's workflow tests run on the in-memory store; this module runs each of
them again with the ``store`` fixture swapped for a fresh SQLite, PostgreSQL, MariaDB
or DynamoDB store.
"""

import importlib.util
import sys
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

import psych_runtime

from .conftest import DURABLE

_SOURCE = (
    Path(__file__).resolve().parents[2]
    / "packages"
    / "psych-core"
    / "tests"
    / "e2e"
    / "test_workflows.py"
)


def _load() -> ModuleType:
    # The cases import helpers from their own directory's conftest (``from .conftest``),
    # so they are loaded as a module of a package standing for that directory.
    package = ModuleType("core_e2e_cases")
    package.__path__ = [str(_SOURCE.parent)]
    sys.modules.setdefault(package.__name__, package)
    spec = importlib.util.spec_from_file_location(f"{package.__name__}.workflows", _SOURCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_cases = _load()
tools = _cases.tools  # the fixture, shared as is
globals().update({name: value for name, value in vars(_cases).items() if name.startswith("test_")})


@pytest.fixture(params=DURABLE)
async def store(
    request: pytest.FixtureRequest, store_url_for: Callable[[str], Awaitable[str]]
) -> AsyncIterator[psych_runtime.Store]:
    """A fresh store of each durable kind, in place of the in-memory one."""
    opened = await psych_runtime.open_store(await store_url_for(request.param))
    yield opened
    await opened.close()
