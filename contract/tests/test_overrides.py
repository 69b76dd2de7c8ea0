"""The override rule the suites enforce: a standard case may only be replaced by an xfail."""

import pytest

from psych_contract._overrides import overridden_without_xfail


class Suite:
    def test_one(self) -> None: ...

    def test_two(self) -> None: ...

    def helper(self) -> None: ...


def test_an_untouched_subclass_has_no_offenders() -> None:
    class Adapter(Suite):
        pass

    assert overridden_without_xfail(Suite, Adapter) == []


def test_a_plain_override_is_reported() -> None:
    class Adapter(Suite):
        def test_two(self) -> None: ...

    assert overridden_without_xfail(Suite, Adapter) == ["test_two"]


def test_an_xfail_with_a_reason_is_allowed_but_one_without_is_not() -> None:
    class Adapter(Suite):
        @pytest.mark.xfail(reason="the backend cannot", strict=True)
        def test_one(self) -> None: ...

        @pytest.mark.xfail(strict=True)
        def test_two(self) -> None: ...

    assert overridden_without_xfail(Suite, Adapter) == ["test_two"]


def test_non_test_members_may_be_overridden() -> None:
    class Adapter(Suite):
        def helper(self) -> None: ...

    assert overridden_without_xfail(Suite, Adapter) == []
