"""Choosing a Store backend by URL scheme, and what the errors tell the user."""

import importlib
import re

import pytest

from psych_runtime.core.errors import PsychError
from psych_runtime.plugins import DoctorCheck
from psych_runtime.plugins import DoctorResult
from psych_runtime.plugins import DuplicateBackend
from psych_runtime.plugins import InvalidPlugin
from psych_runtime.plugins import StoreBackend
from psych_runtime.plugins import UnknownStoreScheme
from psych_runtime.plugins import broken_plugins
from psych_runtime.plugins import builtin
from psych_runtime.plugins import doctor_checks
from psych_runtime.plugins import hookimpl
from psych_runtime.plugins import open_store
from psych_runtime.plugins import register_plugin
from psych_runtime.plugins import store_backends
from psych_runtime.plugins import store_scheme
from psych_runtime.plugins.schemes import scheme_conflicts
from psych_runtime.store.errors import InvalidStoreUrl

# Installed plugins must not change these answers, so only hand-registered ones count.
pytestmark = pytest.mark.usefixtures("autoload_off")


class Opened:
    def __init__(self, backend: str, url: str) -> None:
        self.backend = backend
        self.url = url


def store_plugin(backend_name: str, *schemes: str, package: str = "pkg"):
    async def _open(url: str) -> Opened:
        return Opened(backend_name, url)

    class Plugin:
        PSYCH_PLUGIN_API = 1

        @hookimpl
        def psych_register_stores(self, register):
            register(StoreBackend(name=backend_name, schemes=schemes, open=_open, package=package))

    return Plugin()


@pytest.mark.parametrize(
    ("url", "package"),
    [
        ("postgresql://db/app", "psych-store-postgres"),
        ("postgres://db/app", "psych-store-postgres"),
        ("postgresql+asyncpg://db/app", "psych-store-postgres"),
        ("sqlite:///runs.db", "psych-store-sqlite"),
        ("mysql://db/app", "psych-store-mysql"),
        ("dynamodb://table", "psych-store-dynamo"),
    ],
)
async def test_a_first_party_scheme_with_autoload_off_says_how_to_load_it(url, package):
    # Every first-party adapter is installed here; autoload is off (see the fixture).
    with pytest.raises(UnknownStoreScheme) as caught:
        await open_store(url)

    message = str(caught.value)
    assert f"{package} is installed but not loaded" in message
    assert "PSYCH_DISABLE_PLUGIN_AUTOLOAD" in message
    module = package.replace("-", "_") + ".plugin"
    assert f"register_plugin(importlib.import_module({module!r})" in message
    assert "pip install" not in message
    assert caught.value.package == package
    assert any(entry.startswith(package.split("-")[-1]) for entry in caught.value.unloaded)


async def test_loading_the_named_plugin_by_hand_opens_the_scheme(tmp_path):
    with pytest.raises(UnknownStoreScheme) as caught:
        await open_store(f"sqlite:///{tmp_path}/runs.db")
    hint = str(caught.value).split("load it explicitly with ")[1].split(", or unset")[0]
    assert hint.startswith("psych_runtime.adapters.register_plugin(")
    exec(hint, {"psych_runtime": __import__("psych_runtime"), "importlib": importlib})
    store = await open_store(f"sqlite:///{tmp_path}/runs.db", migrate=True)
    await store.close()


@pytest.mark.parametrize("package", ["psych-store-postgres", "psych-store-sqlite"])
def test_a_first_party_scheme_not_installed_names_the_package_to_install(package):
    error = UnknownStoreScheme("postgresql", ("memory",), package, autoload=True)
    assert f"pip install {package}" in str(error)


async def test_an_unknown_scheme_lists_what_is_available():
    register_plugin(store_plugin("acme", "acme", "acme+tls"), name="acme")

    with pytest.raises(UnknownStoreScheme) as caught:
        await open_store("redis://localhost")

    message = str(caught.value)
    assert "no installed plugin provides it" in message
    assert "acme, acme+tls, memory" in message
    assert caught.value.package is None
    assert caught.value.available == ("acme", "acme+tls", "memory")


async def test_unknown_scheme_is_both_a_psych_error_and_a_value_error():
    with pytest.raises(UnknownStoreScheme) as caught:
        await open_store("nope://")

    assert isinstance(caught.value, PsychError)
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("url", ["", "runs.db", "/var/runs.db", "://host", "1abc://x"])
async def test_a_url_without_a_scheme_is_invalid(url):

    with pytest.raises(InvalidStoreUrl, match="no scheme"):
        await open_store(url)


def test_schemes_are_matched_case_insensitively():
    assert store_scheme("PostgreSQL://h/db") == "postgresql"


async def test_each_scheme_goes_to_the_backend_that_claims_it():
    register_plugin(store_plugin("one", "one"), name="p1")
    register_plugin(store_plugin("two", "two", "deux"), name="p2")

    opened = [await open_store(url) for url in ("one://a", "deux://b", "two://c")]

    assert [(o.backend, o.url) for o in opened] == [
        ("one", "one://a"),
        ("two", "deux://b"),
        ("two", "two://c"),
    ]


async def test_two_plugins_claiming_one_scheme_are_both_named():
    register_plugin(store_plugin("alpha", "shared", package="alpha-dist"), name="alpha-plugin")
    register_plugin(
        store_plugin("beta", "other", "shared", package="beta-dist"), name="beta-plugin"
    )

    # Neither has a better right to the scheme: it is refused by name, nothing else is.
    assert "shared" not in store_backends()
    assert store_backends()["other"].name == "beta"
    with pytest.raises(DuplicateBackend) as caught:
        await open_store("shared://x")

    message = str(caught.value)
    for fragment in ("'shared'", "alpha-plugin", "alpha-dist", "beta-plugin", "beta-dist"):
        assert fragment in message


@pytest.mark.parametrize("taken", ["memory", "sqlite"])
async def test_a_plugin_claiming_a_taken_scheme_is_set_aside_and_every_scheme_works(
    taken, tmp_path
):
    import psych_store_sqlite.plugin

    register_plugin(psych_store_sqlite.plugin, name="sqlite")
    register_plugin(
        store_plugin("squatter", taken, "squat", package="squatter-dist"), name="squatter"
    )

    backends = store_backends()
    assert backends["memory"].package == "psych-runtime"
    assert backends["sqlite"].package == "psych-store-sqlite"
    assert backends["squat"].name == "squatter"
    memory = await open_store("memory://")
    await memory.close()
    sqlite = await open_store(f"sqlite:///{tmp_path}/runs.db", migrate=True)
    await sqlite.close()
    [conflict] = scheme_conflicts()
    assert conflict.scheme == taken
    assert conflict.kept is not None and "squatter" not in conflict.kept
    assert "squatter" in conflict.message and "set aside" in conflict.message


def test_registering_something_other_than_a_backend_names_the_plugin():
    class Sloppy:
        PSYCH_PLUGIN_API = 1

        @hookimpl
        def psych_register_stores(self, register):
            register("postgresql")

    register_plugin(Sloppy(), name="sloppy")

    assert "memory" in store_backends()
    [entry] = broken_plugins()
    assert entry.plugin.name == "sloppy"
    assert isinstance(entry.error, InvalidPlugin)
    assert re.search(r"'sloppy'.*StoreBackend", str(entry.error))


def test_a_hook_that_raises_is_reported_with_the_plugin_name():
    class Broken:
        PSYCH_PLUGIN_API = 1

        @hookimpl
        def psych_register_stores(self, register):
            raise RuntimeError("boom")

    register_plugin(Broken(), name="broken")

    assert "memory" in store_backends()
    [entry] = broken_plugins()
    assert entry.plugin.name == "broken"
    assert re.search(r"'broken'.*boom", str(entry.error))
    assert isinstance(entry.error.__cause__, RuntimeError)


def test_doctor_checks_are_attributed_to_their_plugin():
    def healthy() -> DoctorResult:
        return DoctorResult(True, "fine")

    class Checked:
        PSYCH_PLUGIN_API = 1

        @hookimpl
        def psych_doctor_checks(self, register):
            register(DoctorCheck("driver", healthy))

    register_plugin(Checked(), name="checked")

    found = {(r.plugin, r.item.name) for r in doctor_checks()}

    assert found == {("checked", "driver"), (builtin.NAME, "memory store")}
