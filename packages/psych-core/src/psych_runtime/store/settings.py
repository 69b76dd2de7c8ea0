"""One way for every adapter to turn "a URL and options, or ready settings" into settings.

Each store adapter keeps its resolved configuration in a frozen settings class with a
``from_url(url, **options)`` constructor, and each store accepts either a URL (plus
keyword options that override the URL's query) or such settings.
``settings_from`` is that choice, written once, and ``merge_url_options`` merges a
URL's query options with the keyword options that override them.
"""

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Protocol
from typing import Self

from psych_runtime.store.errors import InvalidStoreUrl


class UrlSettings(Protocol):
    """A settings class built from a store URL and keyword options."""

    @classmethod
    def from_url(cls, url: str, /, **options: object) -> Self:
        """Parse ``url``; keyword options override the same names in its query."""
        ...


def settings_from[S: UrlSettings](
    given: str | S, kind: type[S], options: Mapping[str, object]
) -> S:
    """Settings for a store built from ``given``: a URL with ``options``, or settings.

    Options whose value is None are treated as not given, so a constructor may pass its
    keyword defaults straight through.

    Raises:
        TypeError: settings were given together with options, or ``given`` is neither a
            string nor a ``kind``.
        InvalidStoreUrl: raised by ``kind.from_url`` for a malformed URL or option.
    """
    chosen = {name: value for name, value in options.items() if value is not None}
    if isinstance(given, kind):
        if chosen:
            raise TypeError(
                f"pass either a URL with options or a {kind.__name__}, not both "
                f"(got options {', '.join(sorted(chosen))})"
            )
        return given
    if not isinstance(given, str):
        raise TypeError(f"expected a store URL or a {kind.__name__}, got {type(given).__name__}")
    return kind.from_url(given, **chosen)


def merge_url_options(
    shown: str,
    query: Iterable[tuple[str, str]],
    keywords: Mapping[str, object],
    known: Sequence[str],
    *,
    what: str,
    read: Callable[[str, str], object],
    check: Callable[[dict[str, object]], object] | None = None,
) -> dict[str, object]:
    """A store URL's query options, overridden by the keyword options of the same names.

    A fault in the query is the URL's (``InvalidStoreUrl``); a fault in a keyword option
    is the caller's (``TypeError``), and its value is left for the settings to check.

    Args:
        shown: the URL as messages may show it (without a password).
        query: the query's name and value pairs, in order.
        keywords: the keyword options given beside the URL.
        known: every option name the store takes.
        what: the store, for a keyword option's message (``"sqlite store"``).
        read: turns one query value (text) into the option's value; a ``TypeError`` or
            ``ValueError`` it raises becomes ``InvalidStoreUrl``.
        check: called with the query's options once all are read, to check them
            together; its ``TypeError`` or ``ValueError`` becomes ``InvalidStoreUrl``.

    Raises:
        InvalidStoreUrl: the query names an unknown option, gives one twice, or holds a
            value ``read`` or ``check`` refuses.
        TypeError: a keyword option is unknown.
    """
    chosen: dict[str, object] = {}
    for name, text in query:
        if name not in known:
            raise InvalidStoreUrl(f"{shown!r}: unknown option {name!r}; known: {', '.join(known)}")
        if name in chosen:
            raise InvalidStoreUrl(f"{shown!r}: option {name!r} is given twice")
        try:
            chosen[name] = read(name, text)
        except (TypeError, ValueError) as exc:
            raise InvalidStoreUrl(f"{shown!r}: {exc}") from exc
    if check is not None:
        try:
            check(chosen)
        except (TypeError, ValueError) as exc:
            raise InvalidStoreUrl(f"{shown!r}: {exc}") from exc
    for name, value in keywords.items():
        if name not in known:
            raise TypeError(f"the {what} has no option {name!r}; known: {', '.join(known)}")
        chosen[name] = value
    return chosen


__all__ = ["UrlSettings", "merge_url_options", "settings_from"]
