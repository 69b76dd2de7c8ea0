"""The installed entry point: ``open_store`` finds the example store by its scheme."""

import pytest
from psych_store_example import ExampleSettings
from psych_store_example import ExampleStore

import psych_runtime
from psych_runtime.adapters import InvalidStoreUrl
from psych_runtime.adapters import store_backends


async def test_open_store_finds_the_example_scheme() -> None:
    store = await psych_runtime.open_store("example://plugin-test", migrate=True)
    assert isinstance(store, ExampleStore)
    assert store_backends()["example"].package == "psych-store-example"
    await store.close()


def test_settings_come_from_the_url_only() -> None:
    assert ExampleSettings.from_url("example://orders") == ExampleSettings("orders")
    with pytest.raises(InvalidStoreUrl):
        ExampleSettings.from_url("example:///no-name")
    with pytest.raises(TypeError, match="no options"):
        ExampleStore("example://orders", pool_size=3)
