"""Entry-point discovery, plugin API versioning and hook validation."""

import pytest

import psych_runtime
from psych_runtime.plugins import AUTOLOAD_ENV
from psych_runtime.plugins import PLUGIN_API_VERSION
from psych_runtime.plugins import BlobStoreBackend
from psych_runtime.plugins import BrokenPlugin
from psych_runtime.plugins import IncompatiblePlugin
from psych_runtime.plugins import InvalidPlugin
from psych_runtime.plugins import PluginError
from psych_runtime.plugins import PluginLoadError
from psych_runtime.plugins import StoreBackend
from psych_runtime.plugins import UnknownStoreScheme
from psych_runtime.plugins import broken_plugins
from psych_runtime.plugins import builtin
from psych_runtime.plugins import get_plugin_manager
from psych_runtime.plugins import loaded_plugins
from psych_runtime.plugins import open_store
from psych_runtime.plugins import register_plugin
from psych_runtime.plugins import reset_plugin_manager
from psych_runtime.plugins import store_backends

FAKE_STORE = """
    from psych_runtime.plugins import StoreBackend, hookimpl

    PSYCH_PLUGIN_API = {api}

    class FakeStore:
        def __init__(self, url, options):
            self.url = url
            self.options = options

    async def _open(url, **options):
        return FakeStore(url, options)

    @hookimpl
    def {hook}(register):
        register(
            StoreBackend(name="fake", schemes=("fake",), open=_open, package="fake-psych-store")
        )
"""


def fake_store_source(api: object = 1, hook: str = "psych_register_stores") -> str:
    return FAKE_STORE.format(api=api, hook=hook)


async def test_an_installed_distribution_provides_a_store_scheme(fake_dist):
    fake_dist(module="fake_psych_store_plugin", source=fake_store_source())

    store = await open_store("fake://x", pool_size=3)

    assert type(store).__module__ == "fake_psych_store_plugin"
    assert store.url == "fake://x"
    assert store.options == {"pool_size": 3}
    [record] = [p for p in loaded_plugins() if p.name == "fakestore"]
    assert (record.distribution, record.version) == ("fake-psych-store", "0.1")
    assert record.source == "fake_psych_store_plugin"


def test_entry_points_are_loaded_once_and_cached(fake_dist):
    fake_dist(module="fake_cached_plugin", source=fake_store_source())

    first = get_plugin_manager()

    assert get_plugin_manager() is first
    assert first.has_plugin("fakestore")


def _set_aside(name: str) -> BrokenPlugin:
    """The broken entry for plugin ``name``; the plugin is not registered."""
    [entry] = [b for b in broken_plugins() if b.plugin.name == name]
    assert not get_plugin_manager().has_plugin(name)
    assert name not in {p.name for p in loaded_plugins()}
    return entry


async def _still_works_without(scheme: str, name: str) -> UnknownStoreScheme:
    """The built-in backends open; ``scheme`` fails naming the set-aside plugin."""
    assert type(await open_store("memory://")).__name__ == "InMemoryStore"
    with pytest.raises(UnknownStoreScheme) as caught:
        await open_store(f"{scheme}://x")
    assert name in str(caught.value)
    return caught.value


async def test_a_plugin_for_another_api_version_is_set_aside_before_registration(fake_dist):
    fake_dist(module="fake_future_plugin", source=fake_store_source(api=99), version="2.0")

    entry = _set_aside("fakestore")

    assert isinstance(entry.error, IncompatiblePlugin)
    message = str(entry.error)
    assert "fakestore" in message
    assert "fake-psych-store 2.0" in message
    assert "99" in message
    assert f"plugin API {PLUGIN_API_VERSION}" in message
    assert entry.error.declared == 99
    assert entry.error.expected == PLUGIN_API_VERSION
    unknown = await _still_works_without("fake", "fakestore")
    assert "99" in str(unknown)


def test_a_set_aside_plugin_is_retried_after_a_reset(fake_dist):
    fake_dist(module="fake_refused_plugin", source=fake_store_source(api=99))

    assert [b.plugin.name for b in broken_plugins()] == ["fakestore"]
    reset_plugin_manager()
    assert [b.plugin.name for b in broken_plugins()] == ["fakestore"]


def test_a_plugin_that_declares_no_api_version_is_set_aside(fake_dist):
    source = fake_store_source().replace("PSYCH_PLUGIN_API = 1", "")
    fake_dist(module="fake_undeclared_plugin", source=source)

    entry = _set_aside("fakestore")

    assert isinstance(entry.error, IncompatiblePlugin)
    assert "does not declare PSYCH_PLUGIN_API" in str(entry.error)
    assert entry.error.declared is None


@pytest.mark.parametrize("declared", ["'1'", "True", "1.0"])
def test_the_api_version_must_be_the_integer_itself(fake_dist, declared):
    fake_dist(module="fake_sloppy_plugin", source=fake_store_source(api=declared))

    assert isinstance(_set_aside("fakestore").error, IncompatiblePlugin)


async def test_a_misspelled_hook_sets_the_plugin_aside(fake_dist):
    fake_dist(module="fake_typo_plugin", source=fake_store_source(hook="psych_register_storez"))

    entry = _set_aside("fakestore")

    assert isinstance(entry.error, InvalidPlugin)
    assert "psych_register_storez" in str(entry.error)
    assert "fake-psych-store" in str(entry.error)
    await _still_works_without("fake", "fakestore")


async def test_an_entry_point_that_cannot_be_imported_is_set_aside_with_its_cause(fake_dist):
    fake_dist(module="fake_broken_plugin", source="import does_not_exist_anywhere\n")

    entry = _set_aside("fakestore")

    assert isinstance(entry.error, PluginLoadError)
    assert isinstance(entry.error.__cause__, ImportError)
    unknown = await _still_works_without("fake", "fakestore")
    assert "does_not_exist_anywhere" in str(unknown)


async def test_one_broken_plugin_leaves_the_others_working(fake_dist):
    fake_dist(module="fake_good_plugin", source=fake_store_source(), dist="good_dist")
    fake_dist(
        module="fake_bad_plugin",
        source="raise RuntimeError('no')\n",
        dist="bad_dist",
        entry_point="badstore",
    )

    store = await open_store("fake://x")

    assert type(store).__module__ == "fake_good_plugin"
    assert [b.plugin.name for b in broken_plugins()] == ["badstore"]
    await _still_works_without("bad", "badstore")


async def test_a_broken_first_party_package_is_named_as_the_provider(fake_dist, monkeypatch):
    from psych_runtime.plugins import schemes

    monkeypatch.setitem(schemes.FIRST_PARTY_STORE_PACKAGES, "fake", "fake-psych-store")
    fake_dist(module="fake_first_party_plugin", source="import nowhere_to_be_found\n")

    with pytest.raises(UnknownStoreScheme) as caught:
        await open_store("fake://x")

    message = str(caught.value)
    assert "fake-psych-store is installed but its plugin 'fakestore' could not be used" in message
    assert "nowhere_to_be_found" in message
    assert "pip install" not in message


def test_two_distributions_with_the_same_entry_point_name_set_the_second_aside(fake_dist):
    fake_dist(module="fake_first_plugin", source=fake_store_source(), dist="first_dist")
    other = fake_store_source().replace('"fake"', '"other"')
    fake_dist(module="fake_second_plugin", source=other, dist="second_dist")

    [entry] = broken_plugins()

    assert "first-dist" in str(entry.error) and "second-dist" in str(entry.error)
    assert "fake" in store_backends()
    assert "other" not in store_backends()


def test_autoload_off_loads_no_entry_points(fake_dist, monkeypatch):
    fake_dist(module="fake_ignored_plugin", source=fake_store_source())
    monkeypatch.setenv(AUTOLOAD_ENV, "1")

    assert [p.name for p in loaded_plugins()] == [builtin.NAME]
    assert list(store_backends()) == ["memory"]


async def test_autoload_off_still_offers_the_built_in_backends(monkeypatch):
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    from psych_runtime.store.memory import InMemoryStore

    store = await open_store("memory://")

    assert isinstance(store, InMemoryStore)
    with pytest.raises(PluginError, match="already registered"):
        register_plugin(builtin)


async def test_autoload_off_names_the_switch_for_a_scheme_nobody_registered(monkeypatch):
    monkeypatch.setenv(AUTOLOAD_ENV, "1")

    with pytest.raises(UnknownStoreScheme, match="PSYCH_DISABLE_PLUGIN_AUTOLOAD"):
        await open_store("nope://")


@pytest.mark.parametrize("value", ["0", "", "false"])
def test_falsy_switch_values_keep_autoload_on(fake_dist, monkeypatch, value):
    fake_dist(module="fake_autoloaded_plugin", source=fake_store_source())
    monkeypatch.setenv(AUTOLOAD_ENV, value)

    assert "fakestore" in {p.name for p in loaded_plugins()}


async def test_the_memory_store_comes_from_psych_runtimes_built_in_plugin():
    from psych_runtime.store.memory import InMemoryStore

    [record] = [p for p in loaded_plugins() if p.name == builtin.NAME]
    backend = store_backends()["memory"]
    store = await open_store("memory://")
    other = await open_store("memory://")

    assert record.distribution == "psych-runtime"
    assert record.version == psych_runtime.__version__
    assert record.source == "psych_runtime.plugins.builtin"
    assert backend.package == "psych-runtime"
    assert isinstance(store, InMemoryStore)
    assert store is not other


async def test_the_memory_store_refuses_options():
    with pytest.raises(TypeError, match="path"):
        await open_store("memory://", path="x")


def test_a_hand_registered_plugin_is_checked_like_an_installed_one(monkeypatch):
    monkeypatch.setenv(AUTOLOAD_ENV, "1")

    class Old:
        PSYCH_PLUGIN_API = 0

    with pytest.raises(IncompatiblePlugin, match="'old'"):
        register_plugin(Old(), name="old")
    assert not get_plugin_manager().has_plugin("old")


def test_a_hand_registered_plugin_with_a_misspelled_hook_is_left_unregistered(monkeypatch):
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    from psych_runtime.plugins import hookimpl

    class Typo:
        PSYCH_PLUGIN_API = 1

        @hookimpl
        def psych_register_storez(self, register):
            raise AssertionError("never called")

    with pytest.raises(InvalidPlugin, match="psych_register_storez"):
        register_plugin(Typo(), name="typo")

    assert not get_plugin_manager().has_plugin("typo")
    assert [p.name for p in loaded_plugins()] == [builtin.NAME]


def test_a_hook_with_an_argument_no_spec_offers_is_refused(monkeypatch):
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    from psych_runtime.plugins import hookimpl

    class Extra:
        PSYCH_PLUGIN_API = 1

        @hookimpl
        def psych_register_stores(self, register, config):
            raise AssertionError("never called")

    with pytest.raises(InvalidPlugin, match="config"):
        register_plugin(Extra(), name="extra")


def test_registering_the_same_name_twice_is_refused(monkeypatch):
    monkeypatch.setenv(AUTOLOAD_ENV, "1")

    class Another:
        PSYCH_PLUGIN_API = 1

    register_plugin(Another(), name="another")
    with pytest.raises(PluginError, match="already registered"):
        register_plugin(Another(), name="another")
    with pytest.raises(PluginError, match="already registered"):
        register_plugin(Another(), name=builtin.NAME)


def test_backend_descriptions_reject_malformed_schemes():
    async def _open(url: str) -> object:
        raise AssertionError("never called")

    with pytest.raises(ValueError, match="claims no URL schemes"):
        StoreBackend(name="x", schemes=(), open=_open, package="p")
    with pytest.raises(ValueError, match="not a lower-case URL scheme"):
        StoreBackend(name="x", schemes=("Fake",), open=_open, package="p")
    with pytest.raises(ValueError, match="not one string"):
        StoreBackend(name="x", schemes="fake", open=_open, package="p")
    listed = StoreBackend(name="x", schemes=["a", "b"], open=_open, package="p")
    assert listed.schemes == ("a", "b")


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"name": ""}, "non-empty name"),
        ({"open": "psych_store_x:open"}, "open must be an async callable"),
        ({"package": ""}, "package must name the distribution"),
        ({"package": None}, "package must name the distribution"),
        ({"description": 3}, "description must be a string"),
    ],
)
def test_backend_descriptions_refuse_invalid_fields(fields, problem):
    async def _open(url: str) -> object:
        raise AssertionError("never called")

    values = {"name": "x", "schemes": ("x",), "open": _open, "package": "p", **fields}
    for kind in (StoreBackend, BlobStoreBackend):
        with pytest.raises(ValueError, match=problem):
            kind(**values)
