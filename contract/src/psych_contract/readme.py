"""Run a package README's example as a test, so the example stays real code."""

import re
from pathlib import Path

PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", flags=re.DOTALL)


def run_readme_example(readme: Path, *, marker: str = "asyncio.run(main())") -> None:
    """Run the first ``python`` block of ``readme`` that contains ``marker``, as written.

    The block runs as a module of its own (``__name__`` is ``"readme"``); what it prints
    is left for the caller to read from ``capsys``.
    """
    example = next(b for b in PYTHON_BLOCK.findall(readme.read_text()) if marker in b)
    exec(compile(example, str(readme), "exec"), {"__name__": "readme"})


__all__ = ["run_readme_example"]
