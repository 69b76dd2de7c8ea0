"""Turn a ``mysql://`` URL plus keyword options into one validated settings object.

Everything the store needs to know about where and how to connect is decided here,
before any socket is opened, so a typo in a URL fails at once with a message that
names the offending part (and never echoes the password).
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from ssl import SSLContext
from urllib.parse import parse_qsl
from urllib.parse import unquote
from urllib.parse import urlsplit

import psych_runtime

SCHEMES = ("mysql", "mariadb")
"""URL schemes this adapter opens; MariaDB speaks the same protocol."""

DEFAULT_PORT = 3306
MAX_PREFIX_LENGTH = 32
"""Keeps ``<prefix>psych_schema_version`` and the migration lock name under 64 chars."""

_PREFIX = re.compile(r"[a-z0-9_]*")
"""Lower case only: servers with lower_case_table_names=1 would fold it anyway."""
_INT_OPTIONS = ("pool_min_size", "pool_max_size", "max_statement_bytes")
_FLOAT_OPTIONS = ("connect_timeout", "migrate_lock_timeout", "pool_recycle")
URL_OPTIONS = ("table_prefix", "unix_socket", *_INT_OPTIONS, *_FLOAT_OPTIONS)
"""Options accepted in the URL's query string (keyword options may also pass ``ssl``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MySQLSettings:
    """Where the store connects and how it names and sizes things.

    Attributes:
        host: server host name or address.
        port: TCP port.
        user: account name; None lets the driver use the operating-system user.
        password: the account's password; kept out of ``repr`` and every message.
        database: schema (database) holding the tables.
        unix_socket: connect through this socket file instead of TCP.
        table_prefix: prepended to every table name, so several deployments (or
            isolated test runs) can share one database.
        pool_min_size: connections opened up front and kept.
        pool_max_size: upper bound on concurrent connections.
        connect_timeout: seconds to wait for a connection to be established.
        pool_recycle: seconds after which an idle connection is replaced; -1 never.
        migrate_lock_timeout: seconds ``migrate()`` waits for another process's
            migration to finish.
        max_statement_bytes: an upper bound on the size of one round trip's SQL text;
            the server's ``max_allowed_packet`` lowers it further. Mostly useful for
            testing how large batches are split.
        ssl: a TLS context for encrypted connections.
    """

    host: str = "localhost"
    port: int = DEFAULT_PORT
    user: str | None = None
    password: str = field(default="", repr=False)
    database: str
    unix_socket: str | None = None
    table_prefix: str = ""
    pool_min_size: int = 1
    pool_max_size: int = 10
    connect_timeout: float = 10.0
    pool_recycle: float = -1.0
    migrate_lock_timeout: float = 60.0
    max_statement_bytes: int | None = None
    ssl: SSLContext | None = None

    @classmethod
    def from_url(cls, url: str, /, **options: object) -> "MySQLSettings":
        """Settings for ``mysql://user:pw@host:3306/db`` (``mariadb://`` alike).

        Pool sizes, timeouts and ``table_prefix`` (``URL_OPTIONS``) may be given in the
        query or as keywords, which win; a keyword ``ssl`` may carry an
        ``ssl.SSLContext``. Anything malformed or unknown raises ``InvalidStoreUrl``.
        """
        return _parse_url(url, **options)

    def __post_init__(self) -> None:
        """Refuse values the server would reject later in a less readable way."""
        if len(self.table_prefix) > MAX_PREFIX_LENGTH or not _PREFIX.fullmatch(self.table_prefix):
            raise psych_runtime.adapters.InvalidStoreUrl(
                f"table_prefix {self.table_prefix!r} must be at most {MAX_PREFIX_LENGTH} "
                "lower-case letters, digits or underscores"
            )
        if self.pool_min_size < 0 or self.pool_max_size < 1:
            raise psych_runtime.adapters.InvalidStoreUrl(
                "pool sizes must be >= 0 (min) and >= 1 (max)"
            )
        if self.pool_min_size > self.pool_max_size:
            raise psych_runtime.adapters.InvalidStoreUrl(
                "pool_min_size must not exceed pool_max_size"
            )
        if self.connect_timeout <= 0 or self.migrate_lock_timeout < 0:
            raise psych_runtime.adapters.InvalidStoreUrl("timeouts must be positive")
        if self.max_statement_bytes is not None and self.max_statement_bytes < 1024:
            raise psych_runtime.adapters.InvalidStoreUrl(
                "max_statement_bytes must be at least 1024"
            )

    @property
    def where(self) -> str:
        """The server and database for messages: never the user's password."""
        place = self.unix_socket if self.unix_socket else f"{self.host}:{self.port}"
        return f"MySQL at {place}, database {self.database!r}"


def _parse_url(url: str, **options: object) -> MySQLSettings:
    """Read a store URL and keyword options into settings.

    The URL has the shape
    ``mysql://user:password@host:port/database?table_prefix=app_&pool_max_size=20``
    (``mariadb://`` is the same). Keyword options override query-string values and
    may also carry an ``ssl.SSLContext`` as ``ssl``.

    Raises:
        InvalidStoreUrl: the URL is malformed, names no database, or carries an
            option this store does not know or a value it cannot use.
        TypeError: a keyword option this store does not know.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise psych_runtime.adapters.InvalidStoreUrl(
            f"cannot parse the MySQL store URL: {exc}"
        ) from exc
    if parts.scheme.lower() not in SCHEMES:
        raise psych_runtime.adapters.InvalidStoreUrl(
            f"the MySQL store opens {' or '.join(s + '://' for s in SCHEMES)} URLs, "
            f"not {parts.scheme or '(no scheme)'!r}"
        )
    if parts.fragment:
        raise psych_runtime.adapters.InvalidStoreUrl("a MySQL store URL takes no #fragment")
    database = unquote(parts.path.lstrip("/"))
    if not database or "/" in database:
        raise psych_runtime.adapters.InvalidStoreUrl(
            "the MySQL store URL must name one database, as in mysql://user@host:3306/mydb"
        )
    values: dict[str, object] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True, strict_parsing=False):
        if key not in URL_OPTIONS:
            raise psych_runtime.adapters.InvalidStoreUrl(
                f"unknown MySQL store URL option {key!r}; known: {', '.join(URL_OPTIONS)}"
            )
        if key in values:
            raise psych_runtime.adapters.InvalidStoreUrl(
                f"option {key!r} is given twice in the URL"
            )
        values[key] = _convert(key, value)
    for key, option in options.items():
        if key not in (*URL_OPTIONS, "ssl"):
            raise TypeError(
                f"unknown MySQL store option {key!r}; known: {', '.join((*URL_OPTIONS, 'ssl'))}"
            )
        values[key] = option
    return _build(
        values,
        host=parts.hostname or "localhost",
        port=port if port is not None else DEFAULT_PORT,
        user=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else "",
        database=database,
    )


def _convert(key: str, text: str) -> object:
    """Parse one query-string value by the option's type."""
    try:
        if key in _INT_OPTIONS:
            return int(text)
        if key in _FLOAT_OPTIONS:
            return float(text)
    except ValueError:
        raise psych_runtime.adapters.InvalidStoreUrl(
            f"option {key!r} needs a number, got {text!r}"
        ) from None
    return text


def _build(
    values: Mapping[str, object],
    *,
    host: str,
    port: int,
    user: str | None,
    password: str,
    database: str,
) -> MySQLSettings:
    """Check each option's type and assemble the settings."""
    prefix = values.get("table_prefix", "")
    socket_path = values.get("unix_socket")
    context = values.get("ssl")
    if not isinstance(prefix, str):
        raise psych_runtime.adapters.InvalidStoreUrl("table_prefix must be a string")
    if socket_path is not None and not isinstance(socket_path, str):
        raise psych_runtime.adapters.InvalidStoreUrl("unix_socket must be a path string")
    if context is not None and not isinstance(context, SSLContext):
        raise psych_runtime.adapters.InvalidStoreUrl("ssl must be an ssl.SSLContext")
    max_bytes = values.get("max_statement_bytes")
    return MySQLSettings(
        host=host,
        port=port,
        user=user,
        password=password,
        database=database,
        unix_socket=socket_path or None,
        table_prefix=prefix,
        pool_min_size=_int(values, "pool_min_size", 1),
        pool_max_size=_int(values, "pool_max_size", 10),
        connect_timeout=_float(values, "connect_timeout", 10.0),
        pool_recycle=_float(values, "pool_recycle", -1.0),
        migrate_lock_timeout=_float(values, "migrate_lock_timeout", 60.0),
        max_statement_bytes=None if max_bytes is None else _int(values, "max_statement_bytes", 0),
        ssl=context,
    )


def _int(values: Mapping[str, object], key: str, default: int) -> int:
    value = values.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise psych_runtime.adapters.InvalidStoreUrl(f"option {key!r} must be an integer")
    return value


def _float(values: Mapping[str, object], key: str, default: float) -> float:
    value = values.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise psych_runtime.adapters.InvalidStoreUrl(f"option {key!r} must be a number")
    return float(value)


__all__ = ["SCHEMES", "URL_OPTIONS", "MySQLSettings"]
