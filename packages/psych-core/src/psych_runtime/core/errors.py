"""The exception hierarchy every layer shares.

Everything the library raises on purpose derives from ``PsychError`` so a consumer can
catch the library's refusals in one place without also catching their own bugs.
"""


class PsychError(Exception):
    """Base class of every error Psych Runtime raises deliberately."""


class AccessDenied(PsychError):
    """The caller's Scope may not see or touch this Run (or resource)."""


class RunNotFound(PsychError):
    """No Run with this id exists (for this tenant)."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id!r} not found")
        self.run_id = run_id


class VersionNotFound(PsychError):
    """A Run pins a Version the store does not hold."""

    def __init__(self, version_hash: str) -> None:
        super().__init__(f"version {version_hash!r} not found")
        self.version_hash = version_hash


class InvalidArgument(PsychError, ValueError):
    """An argument of a call is refused before anything is read or written.

    The more specific ``InvalidDispatch`` and ``InvalidResume`` derive from it, so a
    caller may catch every refused argument of the control calls in one place.

    Attributes:
        argument: The parameter's name, when one parameter is at fault.
    """

    def __init__(self, message: str, *, argument: str | None = None) -> None:
        super().__init__(message)
        self.argument = argument


def shown(value: object, limit: int = 80) -> str:
    """A value's ``repr`` cut to ``limit`` characters, for an error message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class UnstorableValue(PsychError, ValueError):
    """A value cannot be kept by every store exactly as given.

    Raised for strings holding a lone surrogate (no UTF-8 encoding), non-finite numbers
    and nesting deeper than the stores' parsers allow, so that every store refuses the
    same values the same way instead of one keeping what another cannot.

    Attributes:
        reason: Where in the value the problem is and what it is.
    """

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


__all__ = [
    "AccessDenied",
    "InvalidArgument",
    "PsychError",
    "RunNotFound",
    "UnstorableValue",
    "VersionNotFound",
    "shown",
]
