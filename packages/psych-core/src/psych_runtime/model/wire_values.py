"""Reading the loosely typed values of a provider's JSON, the same way for every wire format."""

from collections.abc import Mapping


def count_of(value: object) -> int:
    """A token count or index as a whole number of at least 0; 0 for anything else.

    Providers and the proxies in front of them send null, floats, strings and booleans
    where a count belongs; none of that may fail a stream or go negative.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(int(value), 0)


def mapping_of(value: object) -> Mapping[str, object]:
    """``value`` when it is a JSON object, else an empty one, so lookups need no checks."""
    return value if isinstance(value, Mapping) else {}


__all__ = ["count_of", "mapping_of"]
