"""Turn a ``sqlite://`` URL plus keyword options into the settings a store runs with.

The URL follows the convention SQLAlchemy made familiar: what follows ``sqlite:///``
is the file path, so a fourth slash makes it absolute (``sqlite:////var/lib/psych.db``)
and without it the path is relative to the working directory at the moment the store
is constructed (``sqlite:///psych.db``). Options may ride in the query string
(``?synchronous=FULL``) or be passed as keywords; a keyword wins over the query.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl
from urllib.parse import unquote

from psych_runtime.adapters.store import InvalidStoreUrl
from psych_runtime.adapters.store import merge_url_options

SCHEME = "sqlite"
"""The URL scheme this package opens."""

SYNCHRONOUS_MODES = ("NORMAL", "FULL", "EXTRA")
"""Accepted ``synchronous`` levels; OFF is refused because it gives up crash safety."""

DEFAULT_SYNCHRONOUS = "NORMAL"
DEFAULT_BUSY_TIMEOUT_MS = 5000
DEFAULT_READERS = 2

OPTION_NAMES = ("synchronous", "busy_timeout_ms", "readers")
"""Every option a URL query or a keyword may set."""

_INT32_MAX = 2**31 - 1
"""SQLite keeps the busy timeout in a C int."""

_EXAMPLES = "sqlite:////absolute/path/psych.db or sqlite:///relative/psych.db"


@dataclass(frozen=True, slots=True)
class SqliteSettings:
    """Everything a store needs to open its connections.

    Attributes:
        path: the database file, already made absolute so a later ``chdir`` cannot
            point the store at another file.
        synchronous: SQLite's ``PRAGMA synchronous`` level. NORMAL (the default) in WAL
            mode survives a crash of any process but may lose the most recent commits
            on power loss or an OS crash; FULL syncs the WAL on every commit and keeps
            them, at the cost of one fsync per append.
        busy_timeout_ms: how long a connection waits for another connection (in this
            process or another) to release the write lock before giving up.
        readers: threads (each with its own connection) serving reads; 0 runs reads on
            the writer thread.
    """

    path: Path
    synchronous: str = DEFAULT_SYNCHRONOUS
    busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS
    readers: int = DEFAULT_READERS

    @classmethod
    def from_url(cls, url: str, /, **options: object) -> "SqliteSettings":
        """Settings for ``sqlite:////absolute/path.db`` (three slashes: relative).

        ``synchronous``, ``busy_timeout_ms`` and ``readers`` may be given in the query
        or as keywords, which win. A malformed URL or query value raises
        ``InvalidStoreUrl``; an unknown or mistyped keyword ``TypeError``.
        """
        return _resolve(url, options)


def split_url(url: str) -> tuple[Path, list[tuple[str, str]]]:
    """Split a ``sqlite://`` URL into an absolute file path and its query pairs.

    Raises:
        InvalidStoreUrl: the URL is not a ``sqlite:///<path>`` URL with a file path.
    """
    scheme, colon, rest = url.partition(":")
    if not colon or scheme.lower() != SCHEME:
        raise InvalidStoreUrl(f"{url!r} is not a sqlite URL; write {_EXAMPLES}")
    if not rest.startswith("//"):
        raise InvalidStoreUrl(f"{url!r} lacks the '//' after 'sqlite:'; write {_EXAMPLES}")
    location, _, query = rest[2:].partition("?")
    if "#" in location or "#" in query:
        raise InvalidStoreUrl(f"{url!r} has a '#fragment', which a sqlite URL cannot use")
    host, slash, raw_path = location.partition("/")
    if host:
        raise InvalidStoreUrl(
            f"{url!r} names a host ({host!r}); a sqlite URL names a local file, so "
            f"nothing goes between 'sqlite://' and the path: {_EXAMPLES}"
        )
    path_text = unquote(raw_path)
    if not slash or not path_text:
        raise InvalidStoreUrl(f"{url!r} names no database file; write {_EXAMPLES}")
    if path_text == ":memory:" or path_text.startswith("file:"):
        raise InvalidStoreUrl(
            f"{url!r}: in-memory and 'file:' URI databases are not supported here; "
            "use memory:// for a store that lives only in this process"
        )
    if path_text.endswith("/") or "\x00" in path_text:
        raise InvalidStoreUrl(f"{url!r} does not name a file (it ends in '/' or holds NUL)")
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True) if query else []
    except ValueError as exc:
        raise InvalidStoreUrl(f"{url!r} has a malformed query string: {exc}") from exc
    return Path(path_text).absolute(), pairs


def _resolve(url: str, options: Mapping[str, object]) -> SqliteSettings:
    """Combine the URL's query options with keyword options into checked settings.

    Raises:
        InvalidStoreUrl: the URL, or an option in its query string, is malformed.
        TypeError: a keyword option is unknown or of the wrong type.
        ValueError: a keyword option has an unusable value.
    """
    path, pairs = split_url(url)
    chosen = merge_url_options(
        url,
        pairs,
        options,
        OPTION_NAMES,
        what="sqlite store",
        read=lambda name, text: _checked(name, _from_text(name, text)),
    )
    # Query values were checked above; a bad keyword value raises its own error here.
    return SqliteSettings(
        path=path,
        synchronous=_synchronous(chosen.get("synchronous", DEFAULT_SYNCHRONOUS)),
        busy_timeout_ms=_count(
            "busy_timeout_ms", chosen.get("busy_timeout_ms", DEFAULT_BUSY_TIMEOUT_MS)
        ),
        readers=_count("readers", chosen.get("readers", DEFAULT_READERS)),
    )


def _checked(name: str, value: object) -> object:
    """Validate one option value, returning it in its canonical form."""
    if name == "synchronous":
        return _synchronous(value)
    return _count(name, value)


def _from_text(name: str, text: str) -> object:
    """Read one query-string value; numbers arrive as text and are converted here."""
    if name == "synchronous":
        return text
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"option {name!r} must be a whole number, got {text!r}") from None


def _synchronous(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"option 'synchronous' must be a string, got {type(value).__name__}")
    level = value.upper()
    if level not in SYNCHRONOUS_MODES:
        raise ValueError(
            f"option 'synchronous' must be one of {', '.join(SYNCHRONOUS_MODES)}, got {value!r}"
        )
    return level


def _count(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"option {name!r} must be an int, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"option {name!r} must not be negative, got {value}")
    if value > _INT32_MAX:
        raise ValueError(f"option {name!r} is too large, got {value}")
    return value


__all__ = [
    "DEFAULT_BUSY_TIMEOUT_MS",
    "DEFAULT_READERS",
    "DEFAULT_SYNCHRONOUS",
    "OPTION_NAMES",
    "SCHEME",
    "SYNCHRONOUS_MODES",
    "SqliteSettings",
    "split_url",
]
