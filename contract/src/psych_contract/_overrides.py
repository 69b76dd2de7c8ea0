"""What every suite shares: how it is collected, and the rule it enforces on subclasses.

A subclass may override a case only to xfail it, and must override the fixtures that
build the adapter under test.
"""

from typing import ClassVar
from typing import NoReturn

import pytest

from psych_runtime.adapters.store import RawItem
from psych_runtime.adapters.store import RawStorage


class Suite:
    """The base of the suites: run only in an adapter's subclass, every case under asyncio.

    A suite sets ``__test__ = False`` in its own body so that it is never run bare
    (imported into a test module, say); any class below it is collected unless it says
    otherwise.
    """

    __test__: ClassVar[bool] = False
    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.asyncio]

    def __init_subclass__(cls) -> None:
        """Make subclasses collectable; a suite itself keeps its own ``__test__``."""
        super().__init_subclass__()
        if "__test__" not in cls.__dict__:
            cls.__test__ = True


def must_override(message: str) -> NoReturn:
    """Stand-in body of a fixture the adapter's subclass has to provide; never returns."""
    pytest.fail(message)


def overridden_without_xfail(suite: type, subclass: type) -> list[str]:
    """The cases of ``suite`` that ``subclass`` replaces without an explained xfail.

    A case counts as explained when the override carries ``pytest.mark.xfail`` with a
    non-empty ``reason``; anything else silently swaps a standard case for the
    adapter's own.
    """
    offenders: list[str] = []
    for name, original in vars(suite).items():
        if not name.startswith("test_"):
            continue
        current = getattr(subclass, name)
        if current is original:
            continue
        marks = getattr(current, "pytestmark", [])
        if not any(mark.name == "xfail" and mark.kwargs.get("reason") for mark in marks):
            offenders.append(name)
    return offenders


async def raw_items(adapter: object, kind: str) -> list[RawItem]:
    """What ``adapter``'s backend holds, read below the port; every ``kind`` must show it.

    A deletion checked only through the port passes when the data is merely hidden, so
    the suites look here; an adapter without ``raw_storage()`` fails the case.
    """
    assert isinstance(adapter, RawStorage), (
        f"{type(adapter).__name__} has no raw_storage(): every {kind} must show what its "
        "backend holds, so deletion can be checked below the port"
    )
    return await adapter.raw_storage()
