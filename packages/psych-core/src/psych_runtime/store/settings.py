"""One way for every adapter to turn "a URL and options, or ready settings" into settings.

Each store adapter keeps its resolved configuration in a frozen settings class with a
``from_url(url, **options)`` constructor, and each store accepts either a URL (plus
keyword options that override the URL's query) or such settings.
``settings_from`` is that choice, written once.
"""

from collections.abc import Mapping
from typing import Protocol, Self


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


__all__ = ["UrlSettings", "settings_from"]
