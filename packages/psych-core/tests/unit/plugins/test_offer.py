"""The declarative hook helpers and lazy package exports adapter packages are built from."""

import sys
import types
from pathlib import Path

import pytest

from psych_runtime.adapters import BlobStoreBackend
from psych_runtime.adapters import DoctorCheck
from psych_runtime.adapters import DoctorResult
from psych_runtime.adapters import MemoryStoreBackend
from psych_runtime.adapters import StoreBackend
from psych_runtime.adapters import blob_store_backends
from psych_runtime.adapters import lazy_exports
from psych_runtime.adapters import offer_blob_stores
from psych_runtime.adapters import offer_doctor_checks
from psych_runtime.adapters import offer_store_and_memory
from psych_runtime.adapters import offer_stores
from psych_runtime.adapters import register_plugin
from psych_runtime.adapters import store_backends
from psych_runtime.plugins.manager import doctor_checks


async def _open(url: str, **options: object) -> object:
    return (url, options)


def _plugin_module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.PSYCH_PLUGIN_API = 1  # type: ignore[attr-defined]
    module.psych_register_stores = offer_stores(  # type: ignore[attr-defined]
        StoreBackend(name="alpha", schemes=("alpha",), open=_open, package="alpha-pkg"),
        StoreBackend(name="beta", schemes=("beta", "beta2"), open=_open, package="alpha-pkg"),
    )
    module.psych_register_blob_stores = offer_blob_stores(  # type: ignore[attr-defined]
        BlobStoreBackend(name="gamma", schemes=("gamma",), open=_open, package="alpha-pkg")
    )
    module.psych_doctor_checks = offer_doctor_checks(  # type: ignore[attr-defined]
        DoctorCheck("alpha store", lambda: DoctorResult(True, "fine"))
    )
    return module


def test_offered_backends_and_checks_reach_the_plugin_manager() -> None:
    register_plugin(_plugin_module("offer_test_plugin"), name="offer-test")
    stores = store_backends()
    assert stores["alpha"].name == "alpha"
    assert stores["beta"] is stores["beta2"]
    assert stores["beta"].name == "beta"
    assert blob_store_backends()["gamma"].name == "gamma"
    checks = [(found.plugin, found.item.name) for found in doctor_checks()]
    assert ("offer-test", "alpha store") in checks


def test_an_offer_registers_exactly_what_it_was_given() -> None:
    first = StoreBackend(name="one", schemes=("one",), open=_open, package="p")
    second = StoreBackend(name="two", schemes=("two",), open=_open, package="p")
    seen: list[StoreBackend] = []
    offer_stores(first, second)(seen.append)
    assert seen == [first, second]


def test_a_memory_backend_offered_beside_a_store_shares_its_name_schemes_and_package() -> None:
    store = StoreBackend(
        name="acme", schemes=("acme", "acme2"), open=_open, package="acme-pkg", description="s"
    )
    stores, memories = offer_store_and_memory(store, memory=_open, memory_description="facts")
    offered_stores: list[StoreBackend] = []
    offered_memories: list[MemoryStoreBackend] = []
    stores(offered_stores.append)
    memories(offered_memories.append)
    assert offered_stores == [store]
    assert offered_memories == [
        MemoryStoreBackend(
            name="acme",
            schemes=("acme", "acme2"),
            open=_open,
            package="acme-pkg",
            description="facts",
        )
    ]


def test_lazy_exports_import_on_first_access_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "lazy_pkg_example"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from psych_runtime.adapters import lazy_exports\n"
        "__getattr__, __dir__ = lazy_exports(__name__, {'Heavy': 'lazy_pkg_example.heavy'})\n"
    )
    (package / "heavy.py").write_text("class Heavy:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import lazy_pkg_example  # type: ignore[import-not-found]

    assert "lazy_pkg_example.heavy" not in sys.modules
    assert "Heavy" in dir(lazy_pkg_example)
    assert "lazy_pkg_example.heavy" not in sys.modules
    assert lazy_pkg_example.Heavy.__name__ == "Heavy"
    assert "lazy_pkg_example.heavy" in sys.modules
    with pytest.raises(AttributeError, match="no attribute 'Missing'"):
        _ = lazy_pkg_example.Missing
    monkeypatch.delitem(sys.modules, "lazy_pkg_example")
    monkeypatch.delitem(sys.modules, "lazy_pkg_example.heavy")


def test_lazy_exports_refuse_unknown_names() -> None:
    getattr_, _ = lazy_exports("somewhere", {"Known": "json"})
    with pytest.raises(AttributeError, match="'somewhere' has no attribute 'Other'"):
        getattr_("Other")
