"""psych-mcp installs into a fresh environment beside the core alone, and registers.

Its declared dependencies must be enough: a missing one would only show up on a user's
machine, never in the workspace, where every package's dependencies are installed.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]

CHECK = """
import psych_mcp
from psych_runtime.plugins.urls import installed_capabilities, tool_source_factories
assert "mcp_servers" in installed_capabilities(), installed_capabilities()
[factory] = [f for f in tool_source_factories() if f.name == "mcp"]
tools = factory.build(http=None, secrets=None)
assert isinstance(tools, psych_mcp.McpTools)
print("ok")
"""


@pytest.mark.slow
def test_psych_mcp_installs_and_imports_on_top_of_the_core_alone(tmp_path: Path) -> None:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed")
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [
            uv,
            "pip",
            "install",
            "--quiet",
            "--python",
            str(python),
            str(ROOT / "packages" / "psych-core"),
            str(ROOT / "packages" / "psych-mcp"),
        ],
        check=True,
        timeout=600,
    )
    done = subprocess.run(
        [str(python), "-c", CHECK], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
