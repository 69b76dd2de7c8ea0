"""Each plugin package installs into a fresh environment beside the core alone.

Its declared dependencies must be enough: a missing one would only show up on a user's
machine, never in the workspace, where every package's dependencies are installed.
After installing, the plugin must register what it offers.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CHECKS = {
    "psych-mcp": """
import psych_mcp
from psych_runtime.plugins.urls import installed_capabilities, tool_source_factories
assert "mcp_servers" in installed_capabilities(), installed_capabilities()
[factory] = [f for f in tool_source_factories() if f.name == "mcp"]
assert isinstance(factory.build(http=None, secrets=None), psych_mcp.McpTools)
""",
    "psych-sandbox": """
import psych_sandbox
from psych_runtime.plugins.urls import installed_capabilities, sandbox_backends
assert "code_execution" in installed_capabilities(), installed_capabilities()
assert {"subprocess", "namespaces", "oci"} <= set(sandbox_backends()), sandbox_backends()
assert psych_sandbox.SubprocessSandbox is not None
""",
}


@pytest.mark.slow
@pytest.mark.parametrize("package", sorted(CHECKS))
def test_a_plugin_installs_and_registers_on_top_of_the_core_alone(
    package: str, tmp_path: Path
) -> None:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed")
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    sources = [str(ROOT / "packages" / "psych-core"), str(ROOT / "packages" / package)]
    install = [uv, "pip", "install", "--quiet", "--python", str(python), *sources]
    subprocess.run(install, check=True, timeout=600)
    done = subprocess.run(
        [str(python), "-c", CHECKS[package] + "print('ok')"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
