"""``psych skills``: guides for coding agents on building with Psych Runtime.

Each skill is a folder under ``psych_runtime/agent_skills`` holding a ``SKILL.md``: YAML
front matter with a ``name`` and a ``description``, then Markdown. ``install`` copies
them into a project's agent-skills folder, where coding agents look for them.
"""

import argparse
import sys
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from psych_runtime.cli.command import Command

DEFAULT_DEST = Path(".agents") / "skills"
SKILL_FILE = "SKILL.md"


class SkillError(Exception):
    """A skill is malformed, unknown, or its target exists and ``--force`` was not given."""


@dataclass(frozen=True, slots=True)
class Skill:
    """One shipped skill.

    Attributes:
        name: the front matter's ``name``, equal to its folder's name.
        description: the front matter's ``description``: when an agent should use it.
        text: the whole ``SKILL.md``.
    """

    name: str
    description: str
    text: str


def _skills_root() -> Traversable:
    return files("psych_runtime").joinpath("agent_skills")


def parse_skill(text: str, folder: str) -> Skill:
    """Read a ``SKILL.md``: front matter between ``---`` lines, then the body.

    Only the flat ``key: value`` form of front matter is understood, which is all a
    skill needs.

    Raises:
        SkillError: no front matter, a missing ``name`` or ``description``, or a name
            that differs from the folder's.
    """
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise SkillError(f"skill {folder!r}: {SKILL_FILE} does not start with front matter")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise SkillError(f"skill {folder!r}: the front matter is not closed") from None
    fields: dict[str, str] = {}
    for line in lines[1:end]:
        key, sep, value = line.partition(":")
        if sep and key.strip():
            fields[key.strip()] = value.strip().strip("\"'")
    name = fields.get("name", "")
    description = fields.get("description", "")
    if not name or not description:
        raise SkillError(f"skill {folder!r}: front matter needs a name and a description")
    if name != folder:
        raise SkillError(f"skill {folder!r}: its front matter names it {name!r}")
    return Skill(name=name, description=description, text=text)


def shipped_skills() -> list[Skill]:
    """Every skill in this release, sorted by name."""
    found = []
    for entry in _skills_root().iterdir():
        skill_file = entry.joinpath(SKILL_FILE)
        if entry.is_dir() and skill_file.is_file():
            found.append(parse_skill(skill_file.read_text(encoding="utf-8"), entry.name))
    return sorted(found, key=lambda skill: skill.name)


def install_skills(dest: Path, names: list[str], *, force: bool = False) -> list[Path]:
    """Write the chosen skills (all when ``names`` is empty) under ``dest``.

    Returns:
        The ``SKILL.md`` files written.

    Raises:
        SkillError: an unknown name, or a skill already installed that differs from
            this release's and ``force`` is False.
    """
    available = {skill.name: skill for skill in shipped_skills()}
    unknown = sorted(set(names) - set(available))
    if unknown:
        raise SkillError(
            f"no skill named {', '.join(unknown)}; available: {', '.join(sorted(available))}"
        )
    chosen = [available[name] for name in (names or sorted(available))]
    targets = [dest / skill.name / SKILL_FILE for skill in chosen]
    if not force:
        changed = [
            target
            for skill, target in zip(chosen, targets, strict=True)
            if target.exists() and target.read_text(encoding="utf-8") != skill.text
        ]
        if changed:
            raise SkillError(
                f"{', '.join(map(str, changed))} already exist(s) with other content; "
                "use --force to overwrite"
            )
    for skill, target in zip(chosen, targets, strict=True):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(skill.text, encoding="utf-8")
    return targets


def _arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``list`` and ``install`` actions of ``psych skills`` and their options."""
    actions = parser.add_subparsers(dest="skills_action", metavar="ACTION", required=True)
    actions.add_parser("list", help="print each skill's name and description")
    install = actions.add_parser("install", help="copy skills into a project's agent-skills folder")
    install.add_argument(
        "names", nargs="*", metavar="NAME", help="skills to install (default: all of them)"
    )
    install.add_argument(
        "--dest",
        type=Path,
        default=DEFAULT_DEST,
        metavar="DIR",
        help="the agent-skills folder (default: %(default)s)",
    )
    install.add_argument(
        "--force", action="store_true", help="overwrite installed skills that were changed"
    )


def run(args: argparse.Namespace) -> int:
    """Carry out ``psych skills list`` or ``psych skills install``."""
    try:
        if args.skills_action == "list":
            for skill in shipped_skills():
                print(f"{skill.name}\n    {skill.description}")
            return 0
        written = install_skills(args.dest, list(args.names), force=args.force)
    except SkillError as exc:
        print(f"psych skills: {exc}", file=sys.stderr)
        return 1
    print(f"Installed {len(written)} skill(s) into {args.dest}:")
    for path in written:
        print(f"  {path}")
    return 0


COMMAND = Command(
    "skills",
    help="list or install skills that teach coding agents to build with Psych",
    description=(
        "Skills are short guides for coding agents (how to build, test and run agents "
        "with this library), shipped inside the package."
    ),
    arguments=_arguments,
    run=run,
)


__all__ = ["COMMAND", "Skill", "SkillError", "install_skills", "parse_skill", "shipped_skills"]
