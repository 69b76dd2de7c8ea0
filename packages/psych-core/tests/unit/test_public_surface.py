"""Everything public is reachable as ``psych_runtime.<Name>`` and listed in ``__all__``."""

import inspect
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import psych_runtime

README = Path(__file__).resolve().parents[4] / "README.md"


def _readme_names() -> set[str]:
    return set(re.findall(r"psych_runtime\.([A-Za-z_][A-Za-z0-9_]*)", README.read_text()))


def test_every_name_in_all_resolves() -> None:
    missing = [name for name in psych_runtime.__all__ if not hasattr(psych_runtime, name)]
    assert missing == []


def test_every_public_name_in_the_readme_is_exported() -> None:
    names = _readme_names() - {"testing"}
    assert len(names) > 20
    assert sorted(names - set(psych_runtime.__all__)) == []


def _classes_in(annotation: object) -> set[type]:
    found: set[type] = set()
    origin = typing.get_origin(annotation)
    if origin is not None:
        for arg in typing.get_args(annotation):
            found |= _classes_in(arg)
        return found
    if isinstance(annotation, type) and annotation.__module__.startswith("psych_runtime"):
        found.add(annotation)
    return found


@pytest.mark.parametrize("name", sorted(psych_runtime.__all__))
def test_types_returned_by_public_callables_are_exported(name: str) -> None:
    value = getattr(psych_runtime, name)
    if not callable(value) or isinstance(value, type):
        return
    if not (inspect.isfunction(value) or inspect.ismethod(value)):
        return
    hints = typing.get_type_hints(value)
    returned = _classes_in(hints.get("return"))
    not_exported = sorted(
        cls.__name__ for cls in returned if getattr(psych_runtime, cls.__name__, None) is not cls
    )
    assert not_exported == [], f"{name} returns types not exported: {not_exported}"


def test_importing_the_package_loads_no_submodule_eagerly() -> None:
    code = (
        "import sys, psych_runtime; "
        "print(sorted(m for m in sys.modules if m.startswith('psych_runtime.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['psych_runtime._version']"


def test_the_package_docstring_example_runs() -> None:
    import doctest

    failures, tried = doctest.testmod(psych_runtime, verbose=False, report=False)[:2]
    assert tried > 0 and failures == 0
