"""The README's main example runs exactly as printed, and matches examples/quickstart.py."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _readme_program() -> str:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    return next(b for b in blocks if "psych_runtime.session(" in b)


def test_the_readme_program_runs_and_prints_the_answer(tmp_path: Path) -> None:
    program = tmp_path / "readme_example.py"
    program.write_text(_readme_program())
    done = subprocess.run(
        [sys.executable, str(program)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Parcel P-100 is out for delivery."
    assert (tmp_path / "courier.db").exists()  # the Run outlives the program
    assert lines[1].startswith("completed 1 ")


def test_the_readme_program_is_the_quickstart_example() -> None:
    example = (ROOT / "examples" / "quickstart.py").read_text()
    assert _readme_program().strip() in example


def test_the_core_package_readme_program_runs(tmp_path: Path) -> None:
    text = (ROOT / "packages" / "psych-core" / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    program = tmp_path / "core_readme.py"
    program.write_text(next(b for b in blocks if "psych_runtime.session(" in b))
    done = subprocess.run(
        [sys.executable, str(program)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["Two copies are free to borrow."]


def test_the_readme_approval_example_runs_and_is_the_example_file(tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    block = next(b for b in blocks if "ApprovalRules" in b)
    assert block.strip() in (ROOT / "examples" / "approvals.py").read_text()
    program = tmp_path / "approvals.py"
    program.write_text(block)
    done = subprocess.run(
        [sys.executable, str(program)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["waiting for: refund {'order_id': 'A-1'}", "Done."]


def test_the_readme_workflow_example_runs_and_is_the_example_file(tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    block = next(b for b in blocks if "WorkflowSpec(" in b)
    assert block.strip() in (ROOT / "examples" / "workflow.py").read_text()
    program = tmp_path / "workflow.py"
    program.write_text(block)
    done = subprocess.run(
        [sys.executable, str(program)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    asked, output = done.stdout.splitlines()
    assert asked == "asked: Refund the disputed orders?"
    assert "refunded A-1, A-2" in output
    assert "Arrived damaged." in output and "Never delivered." in output
