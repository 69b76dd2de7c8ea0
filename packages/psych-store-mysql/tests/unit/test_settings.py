"""URL and option parsing: everything is decided before a socket opens."""

import ssl

import pytest

from psych_runtime.adapters import InvalidStoreUrl
from psych_store_mysql.settings import MySQLSettings


def test_a_full_url_is_read_into_every_field() -> None:
    settings = MySQLSettings.from_url(
        "mysql://app:s%40cret@db.internal:3307/agents"
        "?table_prefix=prod_&pool_min_size=2&pool_max_size=20&connect_timeout=2.5"
        "&pool_recycle=600&migrate_lock_timeout=5&max_statement_bytes=65536"
    )
    assert settings == MySQLSettings(
        host="db.internal",
        port=3307,
        user="app",
        password="s@cret",
        database="agents",
        table_prefix="prod_",
        pool_min_size=2,
        pool_max_size=20,
        connect_timeout=2.5,
        pool_recycle=600.0,
        migrate_lock_timeout=5.0,
        max_statement_bytes=65536,
    )


def test_defaults_fill_what_the_url_leaves_out() -> None:
    settings = MySQLSettings.from_url("mariadb:///agents")
    assert (settings.host, settings.port, settings.user, settings.password) == (
        "localhost",
        3306,
        None,
        "",
    )
    assert settings.table_prefix == ""
    assert settings.max_statement_bytes is None


def test_scheme_is_case_insensitive_and_mariadb_is_accepted() -> None:
    assert MySQLSettings.from_url("MySQL://h/db").database == "db"
    assert MySQLSettings.from_url("mariadb://h/db").host == "h"


def test_keyword_options_override_the_query_string() -> None:
    context = ssl.create_default_context()
    settings = MySQLSettings.from_url(
        "mysql://h/db?table_prefix=a_", table_prefix="b_", ssl=context
    )
    assert settings.table_prefix == "b_"
    assert settings.ssl is context


def test_unix_socket_option() -> None:
    settings = MySQLSettings.from_url(
        "mysql://root@localhost/db?unix_socket=/run/mysqld/mysqld.sock"
    )
    assert settings.unix_socket == "/run/mysqld/mysqld.sock"
    assert "/run/mysqld/mysqld.sock" in settings.where


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("postgresql://h/db", "not 'postgresql'"),
        ("mysql://h", "must name one database"),
        ("mysql://h/", "must name one database"),
        ("mysql://h/a/b", "must name one database"),
        ("mysql://h:notaport/db", "cannot parse"),
        ("mysql://h:99999/db", "cannot parse"),
        ("mysql://h/db?pool_size=3", "unknown MySQL store URL option 'pool_size'"),
        ("mysql://h/db?pool_max_size=many", "needs a number"),
        ("mysql://h/db?table_prefix=a&table_prefix=b", "given twice"),
        ("mysql://h/db?table_prefix=bad-prefix", "table_prefix"),
        ("mysql://h/db?table_prefix=Upper_", "lower-case"),
        ("mysql://h/db?table_prefix=" + "a" * 33, "table_prefix"),
        ("mysql://h/db?pool_min_size=5&pool_max_size=2", "pool_min_size"),
        ("mysql://h/db?connect_timeout=0", "timeouts"),
        ("mysql://h/db?max_statement_bytes=10", "max_statement_bytes"),
        ("mysql://h/db#frag", "fragment"),
    ],
)
def test_malformed_urls_are_refused_with_a_pointed_message(url: str, fragment: str) -> None:
    with pytest.raises(InvalidStoreUrl) as caught:
        MySQLSettings.from_url(url)
    assert fragment in str(caught.value)


def test_an_unknown_keyword_option_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="unknown MySQL store option 'poolsize'"):
        MySQLSettings.from_url("mysql://h/db", poolsize=3)


def test_a_keyword_option_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(InvalidStoreUrl, match="pool_max_size"):
        MySQLSettings.from_url("mysql://h/db", pool_max_size="20")
    with pytest.raises(InvalidStoreUrl, match="ssl"):
        MySQLSettings.from_url("mysql://h/db", ssl=True)


def test_the_password_never_shows_in_repr_or_messages() -> None:
    settings = MySQLSettings.from_url("mysql://app:hunter2@db:3306/agents")
    assert "hunter2" not in repr(settings)
    assert "hunter2" not in settings.where
    assert settings.where == "MySQL at db:3306, database 'agents'"


def test_a_store_can_be_built_from_settings_instead_of_a_url() -> None:
    from psych_store_mysql import MySQLStore

    settings = MySQLSettings(host="db", database="agents", table_prefix="a_")
    store = MySQLStore(settings)
    assert store.settings is settings
    assert store.tables.records == "a_psych_records"
    with pytest.raises(TypeError, match="not both"):
        MySQLStore(settings, table_prefix="b_")
    with pytest.raises(TypeError):
        MySQLStore()
