"""An interpreter older than 3.12 is told, in those words, that the project needs 3.12.

What ``docs/install.md`` promises under "On an older Python", on a real Python 3.11
(pyenv's, when the machine has one; the cases skip otherwise): hatch stops with the
message of ``tools/check_python.py`` before resolving anything, and pip refuses a wheel.
"""

import os
import subprocess
from pathlib import Path

import pytest

from tests.docs.shell import fresh_copy
from tests.docs.shell import fresh_environment
from tools import release


def _python_3_11() -> Path:
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    found = sorted(pyenv.glob("versions/3.11*/bin/python3.11"))
    if not found:
        pytest.skip("no Python 3.11 here (pyenv versions 3.11.x)")
    return found[-1]


def test_hatch_on_3_11_says_the_project_needs_3_12_before_resolving(tmp_path: Path) -> None:
    python = _python_3_11()
    fresh_copy(tmp_path)
    env = fresh_environment()
    try:
        done = subprocess.run(
            ["hatch", "run", "example"],
            cwd=tmp_path,
            env={**env, "HATCH_PYTHON": str(python)},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        subprocess.run(["hatch", "env", "prune"], cwd=tmp_path, env=env, capture_output=True)
    shown = done.stdout + done.stderr
    assert done.returncode != 0, shown
    assert "This project needs Python 3.12 or newer" in shown, shown
    assert "with Python 3.11" in shown and "hatch env prune" in shown, shown
    # It stopped before the resolver, which names whichever package it met first.
    assert "Syncing dependencies" not in shown and "depends on Python" not in shown, shown


def test_pip_on_3_11_refuses_a_wheel(tmp_path: Path) -> None:
    python = _python_3_11()
    [wheel] = release.build(release.workspace_packages()["psych-runtime"], tmp_path, sdist=False)
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index", str(wheel)],
        env=fresh_environment(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "requires a different Python: 3.11" in done.stderr
    assert "not in '>=3.12'" in done.stderr
