"""The README's example is real code: it runs as written."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_both_directions_run(capsys: pytest.CaptureFixture[str]) -> None:
    example = next(block for block in _python_blocks() if "asyncio.run(main())" in block)
    exec(compile(example, str(README), "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out == "The helper says 4.\n"
