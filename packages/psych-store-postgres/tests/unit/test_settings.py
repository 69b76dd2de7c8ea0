import pytest

from psych_runtime.adapters import InvalidStoreUrl
from psych_store_postgres.settings import DEFAULT_MAX_SIZE
from psych_store_postgres.settings import DEFAULT_MIN_SIZE
from psych_store_postgres.settings import DEFAULT_SCHEMA
from psych_store_postgres.settings import DEFAULT_WATCH_PEERS
from psych_store_postgres.settings import PostgresSettings


def test_defaults_apply_when_the_url_says_nothing() -> None:
    settings = PostgresSettings.from_url("postgresql://app@db.internal:6543/orders")
    assert settings.schema == DEFAULT_SCHEMA
    assert (settings.min_size, settings.max_size) == (DEFAULT_MIN_SIZE, DEFAULT_MAX_SIZE)
    assert settings.listen and settings.liveness_locks
    assert settings.address == "db.internal:6543/orders"
    assert settings.dsn == "postgresql://app@db.internal:6543/orders"


def test_own_options_are_taken_out_of_the_query_and_the_rest_is_kept() -> None:
    settings = PostgresSettings.from_url(
        "postgres://app:pw@h/db?schema=tenant_one&min_size=2&max_size=4&sslmode=disable"
        "&listen=off&liveness_locks=false"
    )
    assert settings.schema == "tenant_one"
    assert (settings.min_size, settings.max_size) == (2, 4)
    assert not settings.listen
    assert not settings.liveness_locks
    # asyncpg would send unknown parameters to the server as settings; ours must be gone.
    assert settings.dsn == "postgresql://app:pw@h/db?sslmode=disable"
    assert settings.passed_keys == {"sslmode"}


def test_keyword_options_override_the_url() -> None:
    settings = PostgresSettings.from_url(
        "postgresql://h/db?schema=from_url&max_size=3", schema="from_kwarg", max_size=8
    )
    assert settings.schema == "from_kwarg"
    assert settings.max_size == 8


def test_the_address_never_contains_the_password() -> None:
    settings = PostgresSettings.from_url("postgresql://app:hunter2@h:5433/db")
    assert "hunter2" not in settings.address
    assert settings.address == "h:5433/db"


def test_a_unix_socket_host_is_described_as_such() -> None:
    settings = PostgresSettings.from_url("postgresql:///test?host=/var/run/postgresql")
    assert settings.address == "/var/run/postgresql (unix socket)/test"


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("mysql://h/db", "postgresql://"),
        ("postgresql:h/db", "looks like"),
        ("postgresql://h:notaport/db", "cannot parse"),
        ("postgresql://h:99999/db", "cannot parse"),
        ("postgresql://h/db?schema=Bad-Name", "schema"),
        ("postgresql://h/db?schema=1abc", "schema"),
        ("postgresql://h/db?schema=" + "a" * 64, "schema"),
        ("postgresql://h/db?min_size=-1", "min_size"),
        ("postgresql://h/db?max_size=0", "max_size"),
        ("postgresql://h/db?max_size=lots", "max_size"),
        ("postgresql://h/db?min_size=5&max_size=2", "must not exceed"),
        ("postgresql://h/db?listen=maybe", "listen"),
        ("postgresql://h/db?schema=a&schema=b", "twice"),
        ("postgresql://h/db?novalue", "query string"),
    ],
)
def test_malformed_urls_are_refused_with_a_clear_message(url: str, fragment: str) -> None:
    with pytest.raises(InvalidStoreUrl) as caught:
        PostgresSettings.from_url(url)
    assert fragment in str(caught.value)


def test_a_bad_keyword_value_is_refused_too() -> None:
    with pytest.raises(InvalidStoreUrl):
        PostgresSettings.from_url("postgresql://h/db", schema="drop table")
    with pytest.raises(TypeError, match="max_size"):
        PostgresSettings.from_url("postgresql://h/db", max_size=True)  # a bool is not a size
    with pytest.raises(TypeError, match="unknown option"):
        PostgresSettings.from_url("postgresql://h/db", pool=3)


def test_watch_peers_comes_from_the_url_or_a_keyword_and_is_never_negative() -> None:
    assert PostgresSettings.from_url("postgresql://h/db").watch_peers == DEFAULT_WATCH_PEERS
    from_url = PostgresSettings.from_url("postgresql://h/db?watch_peers=0&sslmode=disable")
    assert from_url.watch_peers == 0
    assert from_url.dsn == "postgresql://h/db?sslmode=disable"
    assert (
        PostgresSettings.from_url("postgresql://h/db?watch_peers=0", watch_peers=5).watch_peers == 5
    )
    with pytest.raises(InvalidStoreUrl, match="watch_peers"):
        PostgresSettings.from_url("postgresql://h/db?watch_peers=-1")
    with pytest.raises(TypeError, match="watch_peers"):
        PostgresSettings.from_url("postgresql://h/db", watch_peers="2")
