"""The rule every suite enforces on its subclasses: override a case only to xfail it."""


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
