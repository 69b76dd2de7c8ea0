"""The core must stay a deterministic function of its inputs.

This walks every module under ``psych_runtime/core`` and fails on any import that could
bring in IO, a clock, randomness or concurrency, on any call that reads the wall clock,
and on any import of another part of ``psych_runtime``.
"""

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "src" / "psych_runtime" / "core"

FORBIDDEN_MODULES = {
    "asyncio",
    "concurrent",
    "http",
    "httpx",
    "io",
    "multiprocessing",
    "os",
    "pathlib",
    "random",
    "secrets",
    "selectors",
    "shutil",
    "signal",
    "socket",
    "ssl",
    "subprocess",
    "sys",
    "tempfile",
    "threading",
    "time",
    "urllib",
    "uuid",
}
CLOCK_CALLS = {"now", "utcnow", "today", "monotonic", "perf_counter", "time_ns"}


def _modules() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            found.append(f"line {node.lineno}: relative import (use psych_runtime.core...)")
        for name in names:
            top = name.split(".")[0]
            if top in FORBIDDEN_MODULES:
                found.append(f"line {node.lineno}: imports {name}")
            if top == "psych_runtime" and not (
                name == "psych_runtime.core" or name.startswith("psych_runtime.core.")
            ):
                found.append(f"line {node.lineno}: imports {name} from outside the core")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in CLOCK_CALLS
        ):
            found.append(f"line {node.lineno}: calls .{node.func.attr}() (a clock)")
    return found


def test_there_are_core_modules_to_check() -> None:
    assert len(_modules()) >= 5


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(CORE)))
def test_core_module_is_pure(path: Path) -> None:
    assert _violations(path) == []


def test_the_checker_catches_what_it_should(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import asyncio\nfrom time import sleep\nimport random as r\n"
        "from psych_runtime.store import port\nfrom datetime import datetime\n"
        "x = datetime.now()\nfrom . import y\n"
    )
    problems = _violations(bad)
    assert len(problems) == 6, problems
