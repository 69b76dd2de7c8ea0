"""The READMEs' programs run exactly as printed, and the programs in examples/ run."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _block(readme: Path, marker: str) -> str:
    """The first Python block of ``readme`` that contains ``marker``."""
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), flags=re.DOTALL)
    return next(b for b in blocks if marker in b)


def _run(program: str, where: Path) -> list[str]:
    """Run ``program`` as a script in ``where``; its output lines (it must succeed)."""
    script = where / "program.py"
    script.write_text(program)
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=where,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _readme_program() -> str:
    return _block(ROOT / "README.md", "psych_runtime.session(")


def test_the_readme_program_runs_and_prints_the_answer(tmp_path: Path) -> None:
    lines = _run(_readme_program(), tmp_path)
    assert lines[0] == "Parcel P-100 is out for delivery."
    assert (tmp_path / "courier.db").exists()  # the Run outlives the program
    assert lines[1].startswith("completed 1 ")


def test_the_readme_program_is_the_quickstart_example() -> None:
    example = (ROOT / "examples" / "quickstart.py").read_text()
    assert _readme_program().strip() in example


def test_the_core_package_readme_program_runs(tmp_path: Path) -> None:
    program = _block(ROOT / "packages" / "psych-core" / "README.md", "psych_runtime.session(")
    assert _run(program, tmp_path) == ["Two copies are free to borrow."]


def _example(name: str, where: Path) -> list[str]:
    return _run((ROOT / "examples" / name).read_text(), where)


def test_the_approvals_example_runs(tmp_path: Path) -> None:
    assert _example("approvals.py", tmp_path) == [
        "waiting for: refund {'order_id': 'A-1'}",
        "Done.",
    ]


def test_the_workflow_example_runs(tmp_path: Path) -> None:
    asked, output = _example("workflow.py", tmp_path)
    assert asked == "asked: Refund the disputed orders?"
    assert "refunded A-1, A-2" in output
    assert "Arrived damaged." in output and "Never delivered." in output


def test_the_subagents_example_runs(tmp_path: Path) -> None:
    answer, historian, scientist, totals = _example("research_team.py", tmp_path)
    assert answer == "Newspapers covered tides since 1953; a 2021 survey models them."
    assert historian == "historian completed 1 call"
    assert scientist == "scientist completed 1 call"
    assert totals == "runs 3 input tokens 720"  # six model calls of 120 input tokens


def test_the_memory_example_runs(tmp_path: Path) -> None:
    assert _example("memory.py", tmp_path) == [
        "Booked on the 9:40, window seat as usual.",
        "['Prefers the window seat.']",
        "erased 1",
    ]
    assert (tmp_path / "concierge.db").exists()
