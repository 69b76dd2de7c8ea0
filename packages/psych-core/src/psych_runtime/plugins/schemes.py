"""Reading a URL's scheme and finding the backend registered for it.

Stores and blob stores are both opened this way; only the wording of the errors and
the table of first-party packages differ, so both ``open_*`` functions share this.
"""

import re
from collections.abc import Mapping

from psych_runtime.plugins.errors import _UnknownScheme
from psych_runtime.plugins.manager import autoload_enabled
from psych_runtime.store.errors import InvalidStoreUrl

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")


def url_scheme(url: str, *, what: str, examples: str) -> str:
    """The lower-cased scheme of ``url``.

    Args:
        url: the URL to read.
        what: what the URL opens, for the error message (``"store"``).
        examples: sample URLs the error message suggests.

    Raises:
        InvalidStoreUrl: the URL does not start with ``scheme:``.
    """
    match = _SCHEME.match(url)
    if match is None:
        raise InvalidStoreUrl(
            f"{what} URL {url!r} has no scheme; write it as scheme://..., for example {examples}"
        )
    return match.group(1).lower()


def backend_for[B](
    backends: Mapping[str, B],
    scheme: str,
    first_party: Mapping[str, str],
    unknown: type[_UnknownScheme],
) -> B:
    """The backend registered for ``scheme``.

    Args:
        backends: every loaded backend, keyed by scheme.
        scheme: the scheme asked for, lower case.
        first_party: which of our own distributions serves which scheme, so the error
            can say what to install.
        unknown: the error to raise when no backend claims the scheme.

    Raises:
        _UnknownScheme: (the ``unknown`` subclass) nothing claims the scheme.
    """
    backend = backends.get(scheme)
    if backend is None:
        # ``postgresql+asyncpg`` style schemes still get the base scheme's hint.
        package = first_party.get(scheme.split("+", 1)[0])
        raise unknown(scheme, tuple(sorted(backends)), package, autoload=autoload_enabled())
    return backend


__all__ = ["backend_for", "url_scheme"]
