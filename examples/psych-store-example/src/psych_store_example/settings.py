"""``example://NAME`` parsed once into settings the store keeps."""

from dataclasses import dataclass
from urllib.parse import urlsplit

from psych_runtime.adapters.store import InvalidStoreUrl


@dataclass(frozen=True, slots=True)
class ExampleSettings:
    """Where the store keeps its data.

    Attributes:
        database: the name of the in-process database; stores on one name share it.
    """

    database: str

    @classmethod
    def from_url(cls, url: str, /, **options: object) -> "ExampleSettings":
        """Settings for ``example://NAME``; the store takes no options.

        Raises:
            InvalidStoreUrl: the URL is not ``example://NAME``.
            TypeError: an option was given.
        """
        if options:
            raise TypeError(f"the example store takes no options, got {sorted(options)}")
        parts = urlsplit(url)
        if parts.scheme != "example" or not parts.netloc or parts.path not in ("", "/"):
            raise InvalidStoreUrl(f"{url!r} is not an example store URL: write example://NAME")
        return cls(database=parts.netloc)


__all__ = ["ExampleSettings"]
