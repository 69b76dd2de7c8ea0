"""The package docstring's example runs as written, against the test server."""

import asyncio
import textwrap
from collections.abc import Iterator

import pytest

import psych_runtime
import psych_store_dynamo
from psych_runtime.adapters import AUTOLOAD_ENV
from psych_runtime.adapters import reset_plugin_manager
from psych_store_dynamo import drop_table
from psych_store_dynamo import plugin

from ..conftest import dynamo_url
from ..conftest import new_table_name


@pytest.fixture
def dynamo_plugin_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    reset_plugin_manager()
    psych_runtime.adapters.register_plugin(plugin, name="dynamo")
    yield
    reset_plugin_manager()


@pytest.mark.usefixtures("dynamo_plugin_only")
async def test_the_package_docstring_example_runs(
    moto_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = dynamo_url(moto_endpoint, new_table_name())
    monkeypatch.setenv("PSYCH_DYNAMO_URL", url)
    doc = psych_store_dynamo.__doc__
    assert doc is not None
    source = textwrap.dedent(doc.split("::", 1)[1].split("\nInstalling", 1)[0])
    # The example calls asyncio.run(), which cannot nest in this test's loop: run it
    # in a worker thread with a loop of its own.
    await asyncio.to_thread(exec, compile(source, "psych_store_dynamo docstring", "exec"), {})
    assert await drop_table(url) is True  # the example created (migrated) the table
