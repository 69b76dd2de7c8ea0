"""The usage examples in the tools package's docstrings run as written."""

import doctest

import pytest

import psych_runtime.tools
import psych_runtime.tools.registry


@pytest.mark.parametrize("module", [psych_runtime.tools, psych_runtime.tools.registry])
def test_docstring_examples_run(module: object) -> None:
    result = doctest.testmod(module, raise_on_error=False, verbose=False)  # type: ignore[arg-type]
    assert result.attempted > 0
    assert result.failed == 0
