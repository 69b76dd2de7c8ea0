"""URL parsing and option handling: what a sqlite:// URL may say, and what it may not."""

from pathlib import Path

import pytest

from psych_runtime.adapters import InvalidStoreUrl
from psych_store_sqlite import SqliteStore
from psych_store_sqlite.settings import SqliteSettings
from psych_store_sqlite.settings import split_url


def test_four_slashes_name_an_absolute_path() -> None:
    path, query = split_url("sqlite:////var/lib/psych/runs.db")
    assert path == Path("/var/lib/psych/runs.db")
    assert query == []


def test_three_slashes_name_a_path_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path, _ = split_url("sqlite:///data/runs.db")
    assert path == tmp_path / "data" / "runs.db"
    assert path.is_absolute()


def test_a_relative_path_is_fixed_when_the_store_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = SqliteStore("sqlite:///runs.db")
    monkeypatch.chdir(tmp_path.parent)
    assert store.path == tmp_path / "runs.db"


def test_percent_escapes_and_scheme_case_are_understood() -> None:
    path, _ = split_url("SQLite:////tmp/my%20runs.db")
    assert path == Path("/tmp/my runs.db")


def test_defaults() -> None:
    settings = SqliteSettings.from_url("sqlite:////tmp/x.db", **{})
    assert settings == SqliteSettings(
        path=Path("/tmp/x.db"), synchronous="NORMAL", busy_timeout_ms=5000, readers=2
    )


def test_query_options_are_read_and_keywords_override_them() -> None:
    url = "sqlite:////tmp/x.db?synchronous=full&busy_timeout_ms=250&readers=0"
    from_query = SqliteSettings.from_url(url, **{})
    assert (from_query.synchronous, from_query.busy_timeout_ms, from_query.readers) == (
        "FULL",
        250,
        0,
    )
    overridden = SqliteSettings.from_url(url, **{"readers": 3, "synchronous": "normal"})
    assert (overridden.synchronous, overridden.busy_timeout_ms, overridden.readers) == (
        "NORMAL",
        250,
        3,
    )


def test_the_store_constructor_takes_the_same_options() -> None:
    store = SqliteStore("sqlite:////tmp/x.db", synchronous="EXTRA", busy_timeout_ms=10, readers=1)
    assert store.settings == SqliteSettings(Path("/tmp/x.db"), "EXTRA", 10, 1)


@pytest.mark.parametrize(
    ("url", "complaint"),
    [
        ("sqlite:", "'//'"),
        ("sqlite:/x.db", "'//'"),
        ("sqlite://", "no database file"),
        ("sqlite:///", "no database file"),
        ("sqlite://localhost/x.db", "host"),
        ("sqlite:///:memory:", "memory://"),
        ("sqlite:///file:x.db?mode=ro", "memory://"),
        ("sqlite:///data/", "does not name a file"),
        ("postgresql://host/db", "not a sqlite URL"),
        ("runs.db", "not a sqlite URL"),
        ("sqlite:///x.db#part", "fragment"),
        ("sqlite:///x.db?colour=blue", "unknown option 'colour'"),
        ("sqlite:///x.db?readers", "malformed query"),
        ("sqlite:///x.db?readers=two", "whole number"),
        ("sqlite:///x.db?readers=-1", "negative"),
        ("sqlite:///x.db?busy_timeout_ms=99999999999", "too large"),
        ("sqlite:///x.db?synchronous=OFF", "NORMAL, FULL, EXTRA"),
        ("sqlite:///x.db?readers=1&readers=2", "twice"),
    ],
)
def test_malformed_urls_are_refused_with_a_reason(url: str, complaint: str) -> None:
    with pytest.raises(InvalidStoreUrl) as caught:
        SqliteSettings.from_url(url, **{})
    assert complaint in str(caught.value)


@pytest.mark.parametrize(
    ("options", "error", "complaint"),
    [
        ({"colour": "blue"}, TypeError, "no option 'colour'"),
        ({"readers": "2"}, TypeError, "must be an int"),
        ({"readers": True}, TypeError, "must be an int"),
        ({"busy_timeout_ms": -5}, ValueError, "negative"),
        ({"synchronous": "OFF"}, ValueError, "one of"),
        ({"synchronous": 2}, TypeError, "must be a string"),
    ],
)
def test_bad_keyword_options_are_refused(
    options: dict[str, object], error: type[Exception], complaint: str
) -> None:
    with pytest.raises(error) as caught:
        SqliteSettings.from_url("sqlite:////tmp/x.db", **options)
    assert complaint in str(caught.value)
