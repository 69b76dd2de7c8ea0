"""``merge_url_options``: a store URL's query options, overridden by keyword options."""

from collections.abc import Mapping

import pytest

from psych_runtime.adapters.store import InvalidStoreUrl
from psych_runtime.adapters.store import merge_url_options

KNOWN = ("size", "name")


def _read(name: str, text: str) -> object:
    return int(text) if name == "size" else text


def _merged(
    query: list[tuple[str, str]], keywords: Mapping[str, object] | None = None
) -> dict[str, object]:
    return merge_url_options(
        "acme://x", query, keywords or {}, KNOWN, what="acme store", read=_read
    )


def test_keyword_options_override_the_query() -> None:
    assert _merged([("size", "2"), ("name", "a")], {"size": 5}) == {"size": 5, "name": "a"}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ([("colour", "blue")], r"^'acme://x': unknown option 'colour'; known: size, name$"),
        ([("size", "1"), ("size", "2")], r"^'acme://x': option 'size' is given twice$"),
        ([("size", "many")], r"^'acme://x': invalid literal for int"),
    ],
    ids=["unknown", "twice", "unreadable"],
)
def test_a_fault_in_the_query_is_the_urls(query: list[tuple[str, str]], message: str) -> None:
    with pytest.raises(InvalidStoreUrl, match=message):
        _merged(query)


def test_an_unknown_keyword_option_is_the_callers_fault() -> None:
    with pytest.raises(TypeError, match=r"^the acme store has no option 'colour'; known: size"):
        _merged([], {"colour": "blue"})


def test_the_query_options_are_checked_together_before_keywords_join_them() -> None:
    seen: list[dict[str, object]] = []

    def check(chosen: dict[str, object]) -> None:
        seen.append(dict(chosen))
        raise ValueError("size and name disagree")

    with pytest.raises(InvalidStoreUrl, match=r"^'acme://x': size and name disagree$"):
        merge_url_options(
            "acme://x", [("size", "1")], {"name": "b"}, KNOWN, what="acme", read=_read, check=check
        )
    assert seen == [{"size": 1}]
