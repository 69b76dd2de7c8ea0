"""Repository check: every published package is complete and depends on the core by a range.

Run from the repository root: ``python tools/checks/package_layout.py [ROOT]``. Exits 1
and lists every problem when a package under ``packages/``, ``contract/`` or
``examples/`` lacks a
version, ``py.typed``, a README or a CHANGELOG, when an adapter pins ``psych-runtime``
to nothing, to one exact version, or to an open-ended range, or when an adapter's source
imports the core from anywhere but its public namespaces.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

CORE_DISTRIBUTION = "psych-runtime"
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")
PUBLIC_MODULES = frozenset(
    {
        "psych_runtime",
        "psych_runtime.adapters",
        # One public module per port, for adapter authors.
        "psych_runtime.adapters.blob",
        "psych_runtime.adapters.memory",
        "psych_runtime.adapters.plugins",
        "psych_runtime.adapters.sandbox",
        "psych_runtime.adapters.store",
        "psych_runtime.adapters.telemetry",
        "psych_runtime.adapters.tools",
        "psych_runtime.models",
        "psych_runtime.records",
        "psych_runtime.spec",
        "psych_runtime.testing",
    }
)
_VERSION_ASSIGN = re.compile(r"""^__version__\s*=\s*["']([^"']+)["']""", re.MULTILINE)


@dataclass(frozen=True)
class Problem:
    package: str
    message: str

    def __str__(self) -> str:
        return f"{self.package}: {self.message}"


def package_dirs(root: Path) -> list[Path]:
    """Every directory that holds a published distribution."""
    found = sorted(p.parent for p in (root / "packages").glob("*/pyproject.toml"))
    if (root / "contract" / "pyproject.toml").exists():
        found.append(root / "contract")
    # The example adapter is held to the rules it teaches.
    found += sorted(p.parent for p in (root / "examples").glob("*/pyproject.toml"))
    return found


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _version_of(pkg: Path, project: dict[str, object], tool: dict[str, object]) -> str | None:
    version = project.get("version")
    if isinstance(version, str) and version:
        return version
    dynamic = project.get("dynamic", [])
    if not isinstance(dynamic, list) or "version" not in dynamic:
        return None
    hatch = tool.get("hatch", {})
    path = None
    if isinstance(hatch, dict):
        version_cfg = hatch.get("version", {})
        if isinstance(version_cfg, dict):
            path = version_cfg.get("path")
    if not isinstance(path, str):
        return None
    file = pkg / path
    if not file.exists():
        return None
    match = _VERSION_ASSIGN.search(file.read_text())
    return match.group(1) if match else None


def _bounded_range(spec: str) -> bool:
    """True when the specifier has both a lower and an exclusive upper bound (or ~=)."""
    clauses = [c.strip() for c in spec.split(",") if c.strip()]
    if any(c.startswith("~=") for c in clauses):
        return True
    lower = any(
        c.startswith(">=") or (c.startswith(">") and not c.startswith(">=")) for c in clauses
    )
    upper = any(c.startswith("<") for c in clauses)
    return lower and upper


def internal_core_imports(source: str) -> list[tuple[int, str]]:
    """(line, module) for every import of a core module outside the public namespaces."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
            if node.module == "psych_runtime":
                named = [f"psych_runtime.{alias.name}" for alias in node.names]
                modules = [m for m in named if _looks_like_module(m)]
        else:
            continue
        found.extend(
            (node.lineno, module)
            for module in modules
            if module.split(".")[0] == "psych_runtime" and module not in PUBLIC_MODULES
        )
    return found


def _looks_like_module(dotted: str) -> bool:
    """Whether ``from psych_runtime import name`` names a submodule rather than a value."""
    try:
        return importlib.util.find_spec(dotted) is not None
    except ImportError:
        return False


def check_package(pkg: Path) -> list[Problem]:
    """All problems of one package directory."""
    problems: list[Problem] = []
    label = str(pkg.name)
    try:
        data = tomllib.loads((pkg / "pyproject.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return [Problem(label, f"unreadable pyproject.toml: {exc}")]
    project = data.get("project", {})
    tool = data.get("tool", {})
    name = project.get("name")
    if not isinstance(name, str) or not name:
        problems.append(Problem(label, "pyproject.toml has no [project] name"))
        name = label
    label = name
    if _version_of(pkg, project, tool) is None:
        problems.append(Problem(label, "no version (static, or a hatch version file)"))
    for doc in ("README.md", "CHANGELOG.md"):
        if not (pkg / doc).is_file():
            problems.append(Problem(label, f"missing {doc}"))
    src = pkg / "src"
    import_dirs = (
        [d for d in src.iterdir() if d.is_dir() and (d / "__init__.py").exists()]
        if src.is_dir()
        else []
    )
    if not import_dirs:
        problems.append(Problem(label, "no package under src/"))
    for d in import_dirs:
        if not (d / "py.typed").is_file():
            problems.append(Problem(label, f"missing src/{d.name}/py.typed"))
    if _normalise(name) != CORE_DISTRIBUTION:
        for d in import_dirs:
            for file in sorted(d.rglob("*.py")):
                for line, module in internal_core_imports(file.read_text()):
                    where = file.relative_to(pkg)
                    problems.append(
                        Problem(label, f"{where}:{line} imports internal module {module}")
                    )
        deps = project.get("dependencies", [])
        core_specs = []
        for dep in deps if isinstance(deps, list) else []:
            match = _REQUIREMENT.match(str(dep))
            if match and _normalise(match.group(1)) == CORE_DISTRIBUTION:
                core_specs.append(match.group(3).split(";")[0].strip())
        if not core_specs:
            problems.append(Problem(label, f"does not depend on {CORE_DISTRIBUTION}"))
        for spec in core_specs:
            if not _bounded_range(spec):
                problems.append(
                    Problem(
                        label,
                        f"depends on {CORE_DISTRIBUTION}{spec or ''}: "
                        "use a range such as >=0.2,<0.3",
                    )
                )
    return problems


def check_repository(root: Path) -> list[Problem]:
    """All problems of every package in the repository."""
    problems: list[Problem] = []
    for pkg in package_dirs(root):
        problems.extend(check_package(pkg))
    return problems


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else Path.cwd()
    problems = check_repository(root)
    for problem in problems:
        print(f"package-layout: {problem}", file=sys.stderr)
    if not problems:
        print(f"package-layout: {len(package_dirs(root))} packages OK")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
