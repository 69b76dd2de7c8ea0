"""Argument checks every BlobStore adapter applies the same way.

Sharing them keeps the adapters' refusals identical, which is what the conformance
suite expects: a caller's mistake should read the same on any backend.
"""


def check_window(offset: int, length: int | None) -> None:
    """Refuse a negative window; a window past the end is legal and reads empty.

    Raises:
        ValueError: ``offset`` or ``length`` is negative.
    """
    if offset < 0:
        raise ValueError(f"a blob window cannot start at a negative offset ({offset})")
    if length is not None and length < 0:
        raise ValueError(f"a blob window cannot have a negative length ({length})")


def check_content_type(content_type: str) -> None:
    """Refuse an empty content type: a reader needs it to decode the bytes.

    Raises:
        ValueError: the content type is empty or not a string.
    """
    if not isinstance(content_type, str) or not content_type:
        raise ValueError("a blob needs a non-empty content type")


def coerce_bytes(data: bytes | bytearray | memoryview) -> bytes:
    """An immutable copy of ``data``, refusing text passed by mistake.

    Raises:
        TypeError: ``data`` is not bytes-like (a ``str`` must be encoded first).
    """
    if isinstance(data, bytes):
        return data
    if isinstance(data, bytearray | memoryview):
        return bytes(data)
    raise TypeError(f"a blob holds bytes, not {type(data).__name__}; encode it first")


__all__ = ["check_content_type", "check_window", "coerce_bytes"]
