"""Every distribution's wheel installs into a fresh environment with only what it declares.

In the workspace every package's dependencies are installed together, so a package
that imports something it forgot to declare works here and breaks on a user's machine.
These cases build each package's wheel (with the release tool), install the core's
wheel alone first, then each other wheel beside it in a virtualenv of its own, and run
a smoke check: the module imports, its entry points load and register what they
offer, ``psych doctor`` reports it, and a package-specific check (a Run on the core
alone and on SQLite, a sandbox program, the plugin's registrations).
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools import release

pytestmark = pytest.mark.slow

CORE = "psych-runtime"

RUN_ON = """
import asyncio
import psych_runtime
from psych_runtime.testing import FakeModel

async def where(order_id: str) -> str:
    '''Say where an order is.'''
    return f"{order_id} is at the depot"

spec = psych_runtime.AgentSpec(name="a", model="fake-standard", tools=("where",))
model = FakeModel().turn(tool_calls=[("where", {"order_id": "A1"})]).turn(text="At the depot.")

async def main() -> None:
    async with psych_runtime.session(model, tools=[where], store=STORE) as s:
        answer = await s.ask(spec, "Where is A1?")
        assert answer.text == "At the depot.", answer
        report = await s.report(answer.run_id)
        assert report.totals.tool_calls == 1, report

asyncio.run(main())
"""

CHECKS = {
    CORE: "STORE = 'memory://'\n" + RUN_ON,
    "psych-store-sqlite": "import tempfile, os\n"
    "STORE = 'sqlite:///' + os.path.join(tempfile.mkdtemp(), 'runs.db')\n" + RUN_ON,
    "psych-store-postgres": """
from psych_runtime.plugins.urls import store_backends
assert {"postgres", "postgresql"} & set(store_backends()), store_backends()
""",
    "psych-store-mysql": """
from psych_runtime.plugins.urls import store_backends
assert {"mysql", "mariadb"} & set(store_backends()), store_backends()
""",
    "psych-store-dynamo": """
from psych_runtime.plugins.urls import store_backends
assert {"dynamodb"} & set(store_backends()), store_backends()
""",
    "psych-a2a": """
import psych_a2a
from psych_runtime.plugins.installed import installed_capabilities, tool_source_factories
assert "a2a_peers" in installed_capabilities(), installed_capabilities()
[factory] = [f for f in tool_source_factories() if f.name == "a2a"]
assert isinstance(factory.build(http=None, secrets=None), psych_a2a.A2ATools)
assert psych_a2a.A2AMount is not None and psych_a2a.CardVerifier is not None
""",
    "psych-mcp": """
import psych_mcp
from psych_runtime.plugins.installed import installed_capabilities, tool_source_factories
assert "mcp_servers" in installed_capabilities(), installed_capabilities()
[factory] = [f for f in tool_source_factories() if f.name == "mcp"]
assert isinstance(factory.build(http=None, secrets=None), psych_mcp.McpTools)
""",
    "psych-sandbox": """
import asyncio
import psych_sandbox
from psych_runtime.adapters import Program
from psych_runtime.plugins.installed import installed_capabilities, sandbox_backends
assert "code_execution" in installed_capabilities(), installed_capabilities()
assert {"subprocess", "namespaces", "oci"} <= set(sandbox_backends()), sandbox_backends()

async def main() -> None:
    sandbox = await psych_sandbox.SubprocessSandbox.open()
    try:
        async def refuse(name, arguments):
            raise AssertionError(name)
        done = await sandbox.execute(Program(source="6 * 7"), refuse)
        assert done.value == 42, done
    finally:
        await sandbox.close()

asyncio.run(main())
""",
    "psych-otel": """
import psych_otel
from psych_runtime.plugins.installed import installed_telemetry
assert isinstance(installed_telemetry(), psych_otel.OtelTelemetry), installed_telemetry()
""",
    "psych-contract": """
import psych_contract
assert psych_contract.StoreContract is not None
""",
}
"""Package-specific smoke checks; a package without one gets the generic check only."""

GENERIC = """
import importlib, importlib.metadata, sys
name, module = sys.argv[1], sys.argv[2]
importlib.import_module(module)
for point in importlib.metadata.distribution(name).entry_points:
    if point.group == "psych_runtime":
        point.load()
"""


def _uv() -> str:
    uv = shutil.which("uv")
    if uv is None:
        pytest.fail("uv is not installed: the install checks need it (pip install uv)")
    return uv


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every package's wheel, built once for the module."""
    out = tmp_path_factory.mktemp("wheels")
    built: dict[str, Path] = {}
    for name, package in release.workspace_packages().items():
        [wheel] = release.build(package, out, sdist=False)
        built[name] = wheel
    return built


def _venv(tmp_path: Path, *wheels: Path) -> Path:
    uv = _uv()
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    install = [uv, "pip", "install", "--quiet", "--python", str(python), *map(str, wheels)]
    subprocess.run(install, check=True, timeout=600)
    return python


def _run(python: Path, code: str, *args: str) -> None:
    done = subprocess.run(
        [str(python), "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        cwd=python.parent,  # not the repository: only the installed copies are importable
    )
    assert done.returncode == 0, done.stderr[-4000:]


def _doctor(python: Path, name: str) -> None:
    psych = python.parent / "psych"
    done = subprocess.run(
        [str(psych), "doctor"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert name in done.stdout, done.stdout


def test_the_core_installs_alone_and_runs_an_agent(wheels: dict[str, Path], tmp_path: Path) -> None:
    python = _venv(tmp_path, wheels[CORE])
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=freeze"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    assert "psych-store" not in listed  # nothing beyond the core's own dependencies
    _run(python, GENERIC, CORE, "psych_runtime")
    _run(python, CHECKS[CORE])
    _doctor(python, CORE)


def _others() -> list[str]:
    return sorted(name for name in release.workspace_packages() if name != CORE)


@pytest.mark.parametrize("name", _others())
def test_a_package_installs_beside_the_core_alone(
    name: str, wheels: dict[str, Path], tmp_path: Path
) -> None:
    package = release.workspace_packages()[name]
    python = _venv(tmp_path, wheels[CORE], wheels[name])
    _run(python, GENERIC, name, package.module)
    if name in CHECKS:
        _run(python, CHECKS[name])
    if any(r.name == CORE for r in package.requirements):
        _doctor(python, name)
