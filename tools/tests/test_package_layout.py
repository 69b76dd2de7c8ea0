from pathlib import Path

import pytest

from tools.checks.package_layout import check_package
from tools.checks.package_layout import check_repository
from tools.checks.package_layout import main

REPO = Path(__file__).resolve().parents[2]


def _write_package(
    root: Path,
    name: str,
    *,
    deps: list[str],
    typed: bool = True,
    docs: bool = True,
    version: bool = True,
) -> Path:
    pkg = root / "packages" / name
    module = name.replace("-", "_")
    (pkg / "src" / module).mkdir(parents=True)
    (pkg / "src" / module / "__init__.py").write_text("")
    (pkg / "src" / module / "_version.py").write_text('__version__ = "0.1.0"\n')
    if typed:
        (pkg / "src" / module / "py.typed").write_text("")
    if docs:
        (pkg / "README.md").write_text("# x\n")
        (pkg / "CHANGELOG.md").write_text("# x\n")
    dep_lines = ", ".join(f'"{d}"' for d in deps)
    version_cfg = f'[tool.hatch.version]\npath = "src/{module}/_version.py"\n' if version else ""
    (pkg / "pyproject.toml").write_text(
        f'[project]\nname = "{name}"\ndynamic = ["version"]\n'
        f"dependencies = [{dep_lines}]\n{version_cfg}"
    )
    return pkg


def test_the_real_repository_passes() -> None:
    assert check_repository(REPO) == []
    assert main([str(REPO)]) == 0


def test_a_complete_adapter_passes(tmp_path: Path) -> None:
    pkg = _write_package(tmp_path, "psych-store-good", deps=["psych-runtime>=0.1,<0.2", "asyncpg"])
    assert check_package(pkg) == []


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"deps": ["psych-runtime>=0.1,<0.2"], "typed": False}, "py.typed"),
        ({"deps": ["psych-runtime>=0.1,<0.2"], "docs": False}, "README.md"),
        ({"deps": ["psych-runtime>=0.1,<0.2"], "version": False}, "no version"),
        ({"deps": ["asyncpg"]}, "does not depend on psych-runtime"),
        ({"deps": ["psych-runtime"]}, "use a range"),
        ({"deps": ["psych-runtime==0.1.0"]}, "use a range"),
        ({"deps": ["psych-runtime>=0.1"]}, "use a range"),
    ],
)
def test_a_bad_package_is_reported(
    tmp_path: Path, kwargs: dict[str, object], fragment: str
) -> None:
    pkg = _write_package(tmp_path, "psych-store-bad", **kwargs)  # type: ignore[arg-type]
    problems = check_package(pkg)
    assert any(fragment in str(p) for p in problems), problems
    assert main([str(tmp_path)]) == 1


@pytest.mark.parametrize(
    "line",
    [
        "from psych_runtime.store.port import Store",
        "import psych_runtime.core.storable",
        "from psych_runtime import core",
        "    from psych_runtime.plugins import reset_plugin_manager",
    ],
)
def test_an_adapter_importing_an_internal_core_module_is_reported(
    tmp_path: Path, line: str
) -> None:
    pkg = _write_package(tmp_path, "psych-store-deep", deps=["psych-runtime>=0.1,<0.2"])
    source = f"def f() -> None:\n{line}\n" if line.startswith(" ") else f"{line}\n"
    (pkg / "src" / "psych_store_deep" / "store.py").write_text(source)
    problems = [str(p) for p in check_package(pkg)]
    assert len(problems) == 1 and "imports internal module psych_runtime." in problems[0]
    assert "src/psych_store_deep/store.py" in problems[0]


def test_imports_from_the_public_namespaces_are_fine(tmp_path: Path) -> None:
    pkg = _write_package(tmp_path, "psych-store-flat", deps=["psych-runtime>=0.1,<0.2"])
    (pkg / "src" / "psych_store_flat" / "store.py").write_text(
        "import psych_runtime\n"
        "from psych_runtime import AgentSpec, adapters, open_store\n"
        "from psych_runtime.adapters import RunHeader, Store\n"
        "from psych_runtime.records import Record\n"
        "import psych_runtime.testing\n"
    )
    assert check_package(pkg) == []
