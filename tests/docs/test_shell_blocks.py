"""Every shell block of the README and the guides runs as written.

The blocks are typed into an interactive shell on a pseudo-terminal (see
``tests/docs/shell.py``), in a fresh copy of the repository, in the order a reader
meets them, and every line must exit 0. A document says what it runs after with marks
(HTML comments, invisible on the page), on the line before a fence:

- ``<!-- set-up: NAME -->``: in ``docs/install.md``, this block starts the set-up NAME,
  ``hatch`` (the development environment, ``hatch shell``) or ``wheels`` (a virtualenv
  with wheels built from the clone); the blocks after it, up to the next set-up, are
  part of it too.
- ``<!-- after-set-up: NAME -->`` (anywhere in a document): the document's blocks run
  after that set-up, and its prose must say so. The set-up and every document that
  runs after it share one terminal, in which the set-up is typed once; each document
  starts at the root of the copy.
- ``<!-- new-shell -->``: this block starts a new terminal at the root of the copy.
- ``<!-- file: NAME -->`` (before a ``python`` fence): the reader saves the block as
  NAME; it is written there, at the root of the copy, before the next shell block runs.
- ``<!-- not-run: reason -->``: the block is not run, for the reason given; the marks
  are counted and kept rare.

A document without ``after-set-up`` runs in a terminal of its own. Between terminals,
the copy is put back as it was made (the hatch environment, outside the copy, stays).
Fences must name their language (``sh`` for commands, ``text`` for anything else), so a
command cannot hide in an untyped block.

The packages' READMEs are checked, not run: each install line is pip's
``--find-links dist`` over this repository's distributions (and their extras), the very
command the ``wheels`` set-up runs; ``tests/e2e/test_packages_install_alone.py``
installs every wheel with its dependencies.
"""

import re
import shlex
import subprocess
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

import pytest

from tests.docs.shell import ROOT
from tests.docs.shell import CommandFailed
from tests.docs.shell import Terminal
from tests.docs.shell import fresh_copy
from tests.docs.shell import fresh_environment
from tests.docs.shell import restore

pytestmark = pytest.mark.slow

FENCE = re.compile(r"(?P<before>[^\n]*)\n```(?P<lang>[^\n`]*)\n(?P<code>.*?)```", re.DOTALL)
MARK = re.compile(r"<!--\s*(?P<kind>[a-z-]+)(?::(?P<value>.*?))?\s*-->")
SETUPS = ("hatch", "wheels")
INSTALL = "docs/install.md"


@dataclass
class Step:
    """One thing a reader does: type a shell block, save a file, or open a new terminal."""

    kind: str  # "sh", "file" or "new-shell"
    text: str = ""
    name: str = ""
    line: int = 0
    setup: str = ""  # in docs/install.md: the set-up this block belongs to


@dataclass
class Document:
    """A Markdown file's steps, in order, and what it runs after."""

    path: str
    steps: list[Step] = field(default_factory=list)
    after: str | None = None
    not_run: list[str] = field(default_factory=list)
    bare_fences: list[int] = field(default_factory=list)


def _marks(text: str) -> dict[str, str]:
    return {m["kind"]: (m["value"] or "").strip() for m in MARK.finditer(text)}


def parse(path: str) -> Document:
    """The steps of the Markdown file at ``path`` (relative to the repository).

    A package's README is read for its install lines only (its other blocks run that
    package's own test suite, which CI runs anyway), and they run after the ``wheels``
    set-up, which its prose must point to.
    """
    text = (ROOT / path).read_text()
    document = Document(path=path)
    after = re.search(r"<!--\s*after-set-up:\s*(\S+)\s*-->", text)
    document.after = after.group(1) if after else None
    if path in PACKAGE_READMES:
        for match in FENCE.finditer("\n" + text):
            if "pip install" in match["code"]:
                line = text.count("\n", 0, max(match.start("code") - 1, 0)) + 1
                document.steps.append(Step("sh", match["code"], line=line))
                if match["lang"].strip() != "sh":
                    document.bare_fences.append(line)
        return document
    section = ""
    for match in FENCE.finditer("\n" + text):
        lang = match["lang"].strip()
        line = text.count("\n", 0, max(match.start("code") - 1, 0)) + 1
        marks = _marks(match["before"])
        if not lang:
            document.bare_fences.append(line)
            continue
        if lang == "python" and "file" in marks:
            document.steps.append(Step("file", match["code"], marks["file"], line))
            continue
        if lang != "sh":
            continue
        if "not-run" in marks:
            document.not_run.append(marks["not-run"])
            continue
        if "new-shell" in marks:
            document.steps.append(Step("new-shell", line=line))
        section = marks.get("set-up", section)
        document.steps.append(Step("sh", match["code"], line=line, setup=section))
    return document


def commands(block: str) -> Iterator[str]:
    """The command lines of a shell block: continuations joined, comments skipped."""
    pending = ""
    for raw in block.splitlines():
        line = pending + raw
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if line.strip() and not line.lstrip().startswith("#"):
            yield line


PACKAGE_READMES = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("packages/*/README.md"))


def documents() -> list[str]:
    found = ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("docs/*.md"))]
    return found + PACKAGE_READMES


PARSED = {name: parse(name) for name in documents()}


def setup_steps(name: str) -> list[Step]:
    """The blocks of ``docs/install.md`` that make up the set-up ``name``, in order."""
    return [s for s in PARSED[INSTALL].steps if s.kind == "sh" and s.setup == name]


def _distributions() -> dict[str, set[str]]:
    """Each distribution of the repository, and the extras it declares."""
    found = {}
    for pyproject in [*ROOT.glob("packages/*/pyproject.toml"), ROOT / "contract/pyproject.toml"]:
        project = tomllib.loads(pyproject.read_text())["project"]
        found[project["name"]] = set(project.get("optional-dependencies", {}))
    return found


WHEELS_INSTALL = "python -m pip install --find-links dist "
OTHERS = {"opentelemetry-sdk"}  # from the package index, beside the wheels


def test_every_package_readme_installs_from_the_wheels_until_a_release() -> None:
    distributions = _distributions()
    for name in PACKAGE_READMES:
        doc = PARSED[name]
        text = (ROOT / name).read_text()
        assert doc.steps, f"{name} has no install line"
        assert "docs/install.md" in text, f"{name}: say where dist/ comes from"
        for step in doc.steps:
            for command in commands(step.text):
                words = shlex.split(command, comments=True)
                if words[:4] != ["python", "-m", "pip", "install"]:
                    continue
                if set(words[4:]) <= OTHERS:
                    continue
                assert command.startswith(WHEELS_INSTALL), f"{name}: {command}"
                for requirement in words[6:]:
                    package, _, extra = requirement.partition("[")
                    assert package in distributions, f"{name}: {package} is not ours"
                    assert extra.rstrip("]") in distributions[package] | {""}, requirement


def test_every_fence_names_its_language_and_marks_are_known() -> None:
    bare = {name: doc.bare_fences for name, doc in PARSED.items() if doc.bare_fences}
    assert bare == {}, "fences without a language (use sh for commands, text otherwise)"
    for name, doc in PARSED.items():
        assert all(doc.not_run), f"{name}: a not-run mark must say why"
        assert doc.after in (None, *SETUPS), f"{name}: unknown set-up {doc.after!r}"
    for setup in SETUPS:
        assert setup_steps(setup), f"{INSTALL} defines no {setup!r} set-up"
    install = PARSED[INSTALL].steps
    assert all(step.setup for step in install if step.kind == "sh"), "a block of no set-up"


def test_few_shell_blocks_are_marked_not_run() -> None:
    marked = {name: doc.not_run for name, doc in PARSED.items() if doc.not_run}
    run = sum(
        step.kind == "sh"
        for name, doc in PARSED.items()
        if name not in PACKAGE_READMES
        for step in doc.steps
    )
    skipped = sum(len(reasons) for reasons in marked.values())
    print(f"{run} shell blocks run, {skipped} marked not-run: {marked}")
    assert run >= 15 and skipped * 4 <= run, marked


def _groups() -> list[tuple[str, list[str]]]:
    """Terminals to open: (set-up, documents after it), README first."""
    groups: list[tuple[str, list[str]]] = []
    for name in documents():
        doc = PARSED[name]
        runs = any(step.kind == "sh" for step in doc.steps)
        if runs and doc.after is None and name != INSTALL and name not in PACKAGE_READMES:
            groups.append(("", [name]))
    for setup in SETUPS:
        groups.append((setup, [name for name, doc in PARSED.items() if doc.after == setup]))
    return groups


GROUPS = _groups()


@dataclass(frozen=True)
class Copy:
    """A fresh copy of the repository and the files it was made with."""

    root: Path
    files: set[str]


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Copy]:
    """One fresh copy for the module; its hatch environments are removed afterwards."""
    where = tmp_path_factory.mktemp("clone")
    yield Copy(where, fresh_copy(where))
    subprocess.run(
        ["hatch", "env", "prune"], cwd=where, env=fresh_environment(), capture_output=True
    )


class Reader:
    """Follows documents in terminals, as a reader at a keyboard would."""

    def __init__(self, copy: Path) -> None:
        self.copy = copy
        self.terminal: Terminal | None = None
        self.shown: list[tuple[str, str, str]] = []  # (document, command, what it printed)

    def open(self) -> Terminal:
        self.close()
        self.terminal = Terminal(cwd=self.copy, env=fresh_environment())
        return self.terminal

    def close(self) -> None:
        if self.terminal is not None:
            for command, seconds in self.terminal.timings:
                print(f"{seconds:6.1f} s  {command}")
            self.terminal.close()
            self.terminal = None

    def type(self, block: str, where: str) -> None:
        assert self.terminal is not None
        for command in commands(block):
            try:
                self.shown.append((where.split(":")[0], command, self.terminal.run(command)))
            except CommandFailed as failed:
                raise CommandFailed(f"{where}: {failed}") from None

    def follow(self, document: Document) -> None:
        terminal = self.terminal
        assert terminal is not None
        terminal.run(f"cd {self.copy}")
        for step in document.steps:
            where = f"{document.path}:{step.line}"
            if step.kind == "new-shell":
                self.open()
            elif step.kind == "file":
                (self.copy / step.name).write_text(step.text)
            else:
                self.type(step.text, where)


# What a newcomer must see on the front page's path: a finished Run, a generated
# project's tests passing, and a Run in psych show (an exit status alone would not say).
README_SHOWS = {
    "python -m pip install hatch && hatch run example": "Parcel P-100 is out for delivery.",
    "psych new demo && cd demo && python main.py": "Yes: 42 units of LAMP-7 are in stock.",
    "pytest": " passed",
    "psych show latest --store sqlite:///storefront.db": "settled completed",
}


@pytest.mark.parametrize(
    ("setup", "names"),
    GROUPS,
    ids=[f"{setup or 'fresh shell'}: {', '.join(names)}" for setup, names in GROUPS],
)
def test_the_shell_blocks_run(copy: Copy, setup: str, names: list[str]) -> None:
    restore(copy.root, copy.files)
    reader = Reader(copy.root)
    try:
        reader.open()
        for step in setup_steps(setup) if setup else []:
            reader.type(step.text, f"{INSTALL}:{step.line} (set-up {setup})")
        for name in names:
            reader.follow(PARSED[name])
    finally:
        reader.close()
    if names == ["README.md"]:
        shown = {command: output for _, command, output in reader.shown}
        assert set(README_SHOWS) <= set(shown), sorted(shown)
        for command, expected in README_SHOWS.items():
            assert expected in shown[command], f"{command}:\n{shown[command][-3000:]}"
        assert " failed" not in shown["pytest"] and "warning" not in shown["pytest"].lower()
