"""The README's example is real code: it runs as written."""

from pathlib import Path

import pytest

from psych_contract.readme import run_readme_example

README = Path(__file__).resolve().parents[2] / "README.md"


def test_both_directions_run(capsys: pytest.CaptureFixture[str]) -> None:
    run_readme_example(README)
    assert capsys.readouterr().out == "The helper says 4.\n"
