"""``psych new``: write a small project the developer owns and runs themselves."""

import argparse
import sys
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from psych_runtime.cli.command import Command

DEFAULT_TEMPLATE = "minimal"
PLACEHOLDER = "{{project_name}}"
ALIASES = {"default": "minimal"}
"""Earlier names of templates, still accepted."""
NEXT_STEPS = {
    "minimal": ("python main.py", "pytest"),
    "tour": ("python main.py", "pytest"),
    "fastapi": ("python worker.py &", "uvicorn app:app", "pytest"),
}
"""What to type after ``cd NAME``, per template; ``python main.py`` when not listed."""

_SKIPPED = frozenset({"__pycache__", "__init__.py", ".pytest_cache", ".ruff_cache", ".mypy_cache"})
_RENAMED = {"gitignore": ".gitignore"}
"""Stored without the leading dot so packaging tools do not treat it as their own."""


class ProjectExists(Exception):
    """The target directory already holds files and ``--force`` was not given."""


def _templates_root() -> Traversable:
    return files("psych_runtime").joinpath("templates")


def available_templates() -> list[str]:
    """Names of the templates shipped with this release, sorted."""
    return sorted(
        entry.name
        for entry in _templates_root().iterdir()
        if entry.is_dir() and entry.name not in _SKIPPED
    )


def _arguments(parser: argparse.ArgumentParser) -> None:
    """Add the name and template options of ``psych new``."""
    parser.add_argument("name", metavar="NAME", help="directory to create")
    parser.add_argument(
        "--template",
        default=DEFAULT_TEMPLATE,
        choices=available_templates() + sorted(ALIASES),
        help="which template to start from (default: %(default)s, also called `default`)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="write into NAME even if it is not empty, overwriting the template's files",
    )


def create_project(target: Path, template: str, *, force: bool = False) -> list[Path]:
    """Copy ``template`` into ``target`` and return the files written.

    Files already in ``target`` that the template does not provide are left alone, even
    with ``force``, so re-running over a project never deletes the developer's work.

    Raises:
        ProjectExists: ``target`` is a non-empty directory and ``force`` is False.
        NotADirectoryError: ``target`` exists and is not a directory.
        ValueError: no template of that name ships with this release.
    """
    template = ALIASES.get(template, template)
    if template not in available_templates():
        raise ValueError(f"no template named {template!r}")
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"{target} exists and is not a directory")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise ProjectExists(
            f"{target} already exists and is not empty; use --force to write into it"
        )
    project_name = target.resolve().name
    written: list[Path] = []
    _copy_tree(_templates_root().joinpath(template), target, project_name, written)
    return written


def _copy_tree(source: Traversable, target: Path, project_name: str, written: list[Path]) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for entry in sorted(source.iterdir(), key=lambda item: item.name):
        if entry.name in _SKIPPED or entry.name.endswith((".pyc", ".pyo")):
            continue
        destination = target / _RENAMED.get(entry.name, entry.name)
        if entry.is_dir():
            _copy_tree(entry, destination, project_name, written)
            continue
        text = entry.read_text(encoding="utf-8").replace(PLACEHOLDER, project_name)
        destination.write_text(text, encoding="utf-8")
        written.append(destination)


def run(args: argparse.Namespace) -> int:
    """Carry out ``psych new`` and report what was written."""
    target = Path(args.name)
    try:
        written = create_project(target, args.template, force=args.force)
    except (ProjectExists, NotADirectoryError, ValueError) as exc:
        print(f"psych new: {exc}", file=sys.stderr)
        return 1
    template = ALIASES.get(args.template, args.template)
    print(f"Created {target} from the {template!r} template:")
    for path in written:
        print(f"  {path}")
    print("\nNext:")
    print(f"  cd {target}")
    for step in NEXT_STEPS.get(template, ("python main.py",)):
        print(f"  {step}")
    return 0


COMMAND = Command(
    "new",
    help="create a new project directory from a template",
    description=(
        "Write a small, runnable project into NAME: `minimal` (one agent, one tool; "
        "`default` is another name for it), `tour` (streaming, approvals, threads, "
        "cost) or `fastapi` (a web app that dispatches and streams Runs, and a "
        "separate Worker process). The result is ordinary code you own, with its own "
        "tests."
    ),
    arguments=_arguments,
    run=run,
)
