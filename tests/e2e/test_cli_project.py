"""`psych new` writes a project whose main.py runs with no API key and keeps its Runs."""

import os
import subprocess
import sys
from pathlib import Path

from psych_runtime.cli.main import main


def test_the_generated_project_runs_with_no_api_key(tmp_path: Path) -> None:
    target = tmp_path / "demo"
    assert main(["new", str(target)]) == 0
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.endswith("API_KEY") and not name.startswith("PSYCH_")
    }
    for _ in range(2):  # a second start finds the store from the first one
        done = subprocess.run(
            [sys.executable, "main.py"],
            cwd=target,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[0] == "Yes: 42 units of LAMP-7 are in stock."
        assert any(line.startswith("usage: ") for line in lines)
    assert (target / "storefront.db").exists()
