"""Turning a ``postgresql://`` URL plus keyword options into connection settings.

The URL is a libpq-style connection URI. A few query parameters belong to this store
rather than to the server (``schema``, ``min_size``, ``max_size``, ``listen``,
``liveness_locks``, ``watch_peers``); they are taken out here so the driver never
mistakes them for server settings. Everything else in the query string is passed
through to asyncpg.

Parsing happens in the constructor, without touching the network, so a typo fails at
once with ``InvalidStoreUrl`` instead of surfacing later as a confusing connect error.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl
from urllib.parse import unquote
from urllib.parse import urlencode
from urllib.parse import urlsplit
from urllib.parse import urlunsplit

from psych_runtime.adapters.store import InvalidStoreUrl

SCHEMES = ("postgresql", "postgres")
"""URL schemes this store opens."""

DEFAULT_SCHEMA = "psych"
DEFAULT_MIN_SIZE = 2
DEFAULT_MAX_SIZE = 10
DEFAULT_PORT = 5432

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_OWN_OPTIONS = frozenset(
    {"schema", "min_size", "max_size", "listen", "liveness_locks", "watch_peers"}
)
KEYWORD_OPTIONS = _OWN_OPTIONS | {"connect_timeout"}
"""The keyword options ``from_url`` accepts."""
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_WATCH_PEERS = 2
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True, slots=True)
class PostgresSettings:
    """Everything the store needs to connect, decided before any connection is made.

    Attributes:
        dsn: the URL as asyncpg should see it, with this store's own options removed.
        schema: the PostgreSQL schema every table of this deployment lives in.
        min_size: connections the pool keeps open.
        max_size: the most connections the pool opens at once.
        listen: whether to keep a LISTEN connection for cross-process wake-ups.
        liveness_locks: whether claims hold a per-worker advisory lock so a dead
            process's Runs can be taken over before their lease runs out.
        address: ``host:port/database`` for error messages; never holds a password.
        passed_keys: query parameters handed to asyncpg, so defaults the store would
            set itself (``application_name``, ``jit``) yield to what the URL says.
        connect_timeout: seconds to wait for a new connection.
        watch_peers: how many other claiming processes an idle instance watches (one
            connection each, blocked on the peer's liveness lock) so it wakes the
            moment one dies; 0 leaves noticing a dead peer to the next poll.
    """

    dsn: str
    schema: str
    min_size: int
    max_size: int
    listen: bool
    liveness_locks: bool
    address: str
    passed_keys: frozenset[str] = frozenset()
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    watch_peers: int = DEFAULT_WATCH_PEERS

    @classmethod
    def from_url(cls, url: str, /, **options: object) -> "PostgresSettings":
        """Settings for a ``postgresql://`` or ``postgres://`` URL.

        Keyword options (``schema``, ``min_size``, ``max_size``, ``listen``,
        ``liveness_locks``, ``watch_peers``, ``connect_timeout``) override the same
        names in the URL's query string; any other query parameter is handed to asyncpg.

        Raises:
            InvalidStoreUrl: the URL, or an option in its query, is malformed.
            TypeError: a keyword option is unknown or of the wrong type.
        """
        unknown = sorted(set(options) - KEYWORD_OPTIONS)
        if unknown:
            raise TypeError(
                f"unknown option(s) for the PostgreSQL store: {', '.join(unknown)}; "
                f"known: {', '.join(sorted(KEYWORD_OPTIONS))}"
            )
        timeout = _optional(options, "connect_timeout", float)
        return _parse(
            url,
            schema=_optional(options, "schema", str),
            min_size=_optional(options, "min_size", int),
            max_size=_optional(options, "max_size", int),
            listen=_optional(options, "listen", bool),
            liveness_locks=_optional(options, "liveness_locks", bool),
            watch_peers=_optional(options, "watch_peers", int),
            connect_timeout=DEFAULT_CONNECT_TIMEOUT if timeout is None else timeout,
        )


def _optional[T](options: Mapping[str, object], name: str, kind: type[T]) -> T | None:
    """The option ``name`` if given, checked against ``kind`` (an int passes as a float)."""
    value = options.get(name)
    if value is None:
        return None
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"option {name} must be {kind.__name__}, got {value!r}")
    return value


def check_schema_name(name: str) -> str:
    """Return ``name`` if it is usable as this store's schema, else raise.

    Only lower-case unquoted-identifier names are accepted: they read the same in
    ``psql`` with or without quotes, and they can be spliced into SQL safely.
    """
    if not isinstance(name, str) or not _SCHEMA_NAME.fullmatch(name):
        raise InvalidStoreUrl(
            f"schema {name!r} is not usable: use 1 to 63 characters of lower-case letters, "
            "digits and underscores, not starting with a digit"
        )
    return name


def _to_int(option: str, value: object, minimum: int) -> int:
    if isinstance(value, bool):
        raise InvalidStoreUrl(f"{option} must be a whole number, got {value!r}")
    try:
        number = int(value) if isinstance(value, (int, str)) else None
    except ValueError:
        number = None
    if number is None:
        raise InvalidStoreUrl(f"{option} must be a whole number, got {value!r}")
    if number < minimum:
        raise InvalidStoreUrl(f"{option} must be at least {minimum}, got {number}")
    return number


def _to_bool(option: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in _TRUE:
        return True
    if isinstance(value, str) and value.lower() in _FALSE:
        return False
    raise InvalidStoreUrl(f"{option} must be true or false, got {value!r}")


def _address(host: str | None, port: int | None, database: str) -> str:
    where = host or "localhost"
    if where.startswith("/"):
        return f"{where} (unix socket)/{database}"
    return f"{where}:{port or DEFAULT_PORT}/{database}"


def _parse(
    url: str,
    *,
    schema: str | None = None,
    min_size: int | None = None,
    max_size: int | None = None,
    listen: bool | None = None,
    liveness_locks: bool | None = None,
    watch_peers: int | None = None,
    connect_timeout: float = 10.0,
) -> PostgresSettings:
    """Validate a store URL and merge it with keyword options (keywords win).

    Raises:
        InvalidStoreUrl: the scheme is not ``postgresql``/``postgres``, the port is not
            a number, an option has a bad value, or ``min_size`` exceeds ``max_size``.
    """
    if not isinstance(url, str):
        raise InvalidStoreUrl(f"a store URL must be a string, got {type(url).__name__}")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidStoreUrl(f"cannot parse PostgreSQL store URL: {exc}") from None
    if parts.scheme.lower() not in SCHEMES:
        raise InvalidStoreUrl(
            f"a PostgreSQL store URL starts with postgresql:// or postgres://, "
            f"not {parts.scheme + '://' if parts.scheme else 'nothing'}"
        )
    if not url[len(parts.scheme) :].startswith("://"):
        raise InvalidStoreUrl("a PostgreSQL store URL looks like postgresql://user@host:5432/db")
    try:
        query = parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
    except ValueError as exc:
        raise InvalidStoreUrl(f"cannot parse the query string of the store URL: {exc}") from None
    own: dict[str, str] = {}
    passed: list[tuple[str, str]] = []
    for key, value in query:
        if key in _OWN_OPTIONS:
            if key in own:
                raise InvalidStoreUrl(f"the store URL gives {key} twice")
            own[key] = value
        else:
            passed.append((key, value))

    chosen_schema = check_schema_name(
        schema if schema is not None else own.get("schema", DEFAULT_SCHEMA)
    )
    low = _to_int(
        "min_size", min_size if min_size is not None else own.get("min_size", DEFAULT_MIN_SIZE), 0
    )
    high = _to_int(
        "max_size", max_size if max_size is not None else own.get("max_size", DEFAULT_MAX_SIZE), 1
    )
    if low > high:
        raise InvalidStoreUrl(f"min_size ({low}) must not exceed max_size ({high})")
    wants_listen = _to_bool("listen", listen if listen is not None else own.get("listen", "true"))
    wants_locks = _to_bool(
        "liveness_locks",
        liveness_locks if liveness_locks is not None else own.get("liveness_locks", "true"),
    )
    peers = _to_int(
        "watch_peers",
        watch_peers if watch_peers is not None else own.get("watch_peers", DEFAULT_WATCH_PEERS),
        0,
    )

    host = parts.hostname
    if host is None:
        # A unix socket directory may be given as ?host=/path, libpq style.
        host = dict(passed).get("host")
    database = unquote(parts.path.lstrip("/")) or unquote(parts.username or "") or "postgres"
    dsn = urlunsplit(("postgresql", parts.netloc, parts.path, urlencode(passed), parts.fragment))
    return PostgresSettings(
        dsn=dsn,
        schema=chosen_schema,
        min_size=low,
        max_size=high,
        listen=wants_listen,
        liveness_locks=wants_locks,
        address=_address(host, port, database),
        passed_keys=frozenset(key for key, _ in passed),
        connect_timeout=connect_timeout,
        watch_peers=peers,
    )


__all__ = [
    "DEFAULT_MAX_SIZE",
    "DEFAULT_MIN_SIZE",
    "DEFAULT_SCHEMA",
    "DEFAULT_WATCH_PEERS",
    "KEYWORD_OPTIONS",
    "SCHEMES",
    "PostgresSettings",
    "check_schema_name",
]
