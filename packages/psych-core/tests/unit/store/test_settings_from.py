"""``settings_from``: a store built from a URL with options, or from ready settings."""

from dataclasses import dataclass
from typing import Self

import pytest

from psych_runtime.adapters import settings_from


@dataclass(frozen=True)
class _Settings:
    url: str
    size: int = 1

    @classmethod
    def from_url(cls, url: str, /, **options: object) -> Self:
        size = options.pop("size", 1)
        if options:
            raise TypeError(f"unknown options {sorted(options)}")
        assert isinstance(size, int)
        return cls(url, size)


def test_a_url_is_parsed_with_its_options() -> None:
    assert settings_from("acme://x", _Settings, {"size": 4}) == _Settings("acme://x", 4)


def test_options_left_at_none_count_as_not_given() -> None:
    assert settings_from("acme://x", _Settings, {"size": None}) == _Settings("acme://x", 1)


def test_ready_settings_pass_through_unchanged() -> None:
    ready = _Settings("acme://y", 2)
    assert settings_from(ready, _Settings, {}) is ready
    assert settings_from(ready, _Settings, {"size": None}) is ready


def test_settings_and_options_together_are_refused() -> None:
    with pytest.raises(TypeError, match="not both"):
        settings_from(_Settings("acme://y"), _Settings, {"size": 3})


def test_anything_else_is_refused() -> None:
    with pytest.raises(TypeError, match="expected a store URL or a _Settings, got int"):
        settings_from(5, _Settings, {})  # type: ignore[arg-type]
