"""The READMEs' programs run exactly as printed, and match the files in examples/."""

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


def test_the_readme_approval_example_runs_and_is_the_example_file(tmp_path: Path) -> None:
    block = _block(ROOT / "README.md", "ApprovalRules")
    assert block.strip() in (ROOT / "examples" / "approvals.py").read_text()
    assert _run(block, tmp_path) == ["waiting for: refund {'order_id': 'A-1'}", "Done."]


def test_the_readme_workflow_example_runs_and_is_the_example_file(tmp_path: Path) -> None:
    block = _block(ROOT / "README.md", "WorkflowSpec(")
    assert block.strip() in (ROOT / "examples" / "workflow.py").read_text()
    asked, output = _run(block, tmp_path)
    assert asked == "asked: Refund the disputed orders?"
    assert "refunded A-1, A-2" in output
    assert "Arrived damaged." in output and "Never delivered." in output


def test_the_readme_subagents_example_runs_and_is_the_example_file(tmp_path: Path) -> None:
    block = _block(ROOT / "README.md", "SubagentRef(")
    assert block.strip() in (ROOT / "examples" / "research_team.py").read_text()
    answer, historian, scientist, totals = _run(block, tmp_path)
    assert answer == "Newspapers covered tides since 1953; a 2021 survey models them."
    assert historian == "historian completed 1 call"
    assert scientist == "scientist completed 1 call"
    assert totals == "runs 3 input tokens 720"  # six model calls of 120 input tokens


def test_the_readme_memory_example_runs_and_is_the_example_file(tmp_path: Path) -> None:
    block = _block(ROOT / "README.md", "open_memory_store(")
    assert block.strip() in (ROOT / "examples" / "memory.py").read_text()
    assert _run(block, tmp_path) == [
        "Booked on the 9:40, window seat as usual.",
        "['Prefers the window seat.']",
        "erased 1",
    ]
    assert (tmp_path / "concierge.db").exists()


def test_the_readme_mcp_snippet_builds_a_spec(tmp_path: Path) -> None:
    block = _block(ROOT / "README.md", "McpServer(")
    assert _run(block + "\nprint(agent.mcp_servers[0].name)\n", tmp_path) == ["crm"]
