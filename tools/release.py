"""Release one distribution of the monorepo, or check that the workspace could be released.

Every package releases on its own cadence, so the dangerous moment is a bump that a
sibling's dependency range no longer admits (``psych-store-sqlite`` asking for
``psych-runtime>=0.2,<0.3`` while the core goes to 0.3.0): users would get a resolver
error, or worse, an old adapter. This tool refuses that before touching a file.

    python tools/release.py check
        every sibling range in the workspace admits the sibling's current version.
    python tools/release.py release psych-store-sqlite 0.2.1 [--out DIR] [--no-build]
        refuse a version that is not above the current one (the current one itself is
        accepted once, for the first release of a line whose changelog has no section
        for it yet) and any sibling range that would not admit the new version; set the
        version; turn the changelog's "## Unreleased" section into "## 0.2.1 (DATE)" under a
        fresh empty "## Unreleased"; build the sdist and wheel (hatchling, the backend
        ``hatch build`` uses); check the
        built metadata (name, version, dependencies, readme, license, typed marker).
    python tools/release.py build [NAME ...] --out DIR
        build wheels only (every package when no name is given), for install checks.

Exit status 0 on success, 1 on a refusal (the reasons on stderr), 2 on usage errors.
"""

from __future__ import annotations

import argparse
import datetime
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from email.parser import HeaderParser
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]

_VERSION_LINE = re.compile(r'^__version__[ \t]*=[ \t]*"([^"]+)"[ \t]*$', re.MULTILINE)
_UNRELEASED = "## Unreleased"


class ReleaseRefused(Exception):
    """The release cannot go ahead; ``problems`` says why, one line each."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


@dataclass(frozen=True)
class Package:
    """One distribution of the workspace.

    Attributes:
        name: the distribution name, canonicalised (``psych-store-sqlite``).
        directory: the folder holding its ``pyproject.toml``.
        module: the import package its wheel ships (``psych_store_sqlite``).
        version_file: the ``_version.py`` hatch reads the version from.
        requirements: its dependencies, extras included.
    """

    name: str
    directory: Path
    module: str
    version_file: Path
    requirements: tuple[Requirement, ...] = field(default=())

    @property
    def version(self) -> Version:
        """The version its ``_version.py`` states."""
        found = _VERSION_LINE.search(self.version_file.read_text())
        if found is None:
            raise ReleaseRefused([f"{self.version_file} has no __version__ line"])
        return Version(found.group(1))

    @property
    def changelog(self) -> Path:
        return self.directory / "CHANGELOG.md"


def workspace_packages(root: Path = ROOT) -> dict[str, Package]:
    """Every published distribution: ``packages/*`` and ``contract``, by canonical name."""
    found: dict[str, Package] = {}
    for pyproject in sorted(
        [*root.glob("packages/*/pyproject.toml"), root / "contract/pyproject.toml"]
    ):
        if not pyproject.exists():
            continue
        data = tomllib.loads(pyproject.read_text())
        project = data["project"]
        hatch = data.get("tool", {}).get("hatch", {})
        version_file = pyproject.parent / hatch["version"]["path"]
        [source] = hatch["build"]["targets"]["wheel"]["packages"]
        requirements = [Requirement(text) for text in project.get("dependencies", [])]
        for extra in project.get("optional-dependencies", {}).values():
            requirements += [Requirement(text) for text in extra]
        name = canonicalize_name(project["name"])
        found[name] = Package(
            name=name,
            directory=pyproject.parent,
            module=Path(source).name,
            version_file=version_file,
            requirements=tuple(requirements),
        )
    return found


def range_problems(
    packages: Mapping[str, Package], versions: Mapping[str, Version] | None = None
) -> list[str]:
    """Each sibling range that does not admit the sibling's version (current, or as given)."""
    versions = dict(versions or {})
    problems = []
    for package in packages.values():
        for requirement in package.requirements:
            sibling = canonicalize_name(requirement.name)
            if sibling not in packages:
                continue
            version = versions.get(sibling, packages[sibling].version)
            if not requirement.specifier.contains(version, prereleases=True):
                problems.append(
                    f"{package.name} requires {requirement}, which does not admit "
                    f"{sibling} {version}: widen the range in {package.directory.name}/"
                    "pyproject.toml (and release it) first"
                )
    return problems


def released_changelog(text: str, version: Version, date: datetime.date) -> str:
    """The changelog with its Unreleased section renamed to ``version`` and a fresh one above.

    Raises:
        ReleaseRefused: there is no Unreleased section, or it says nothing.
    """
    start = text.find(_UNRELEASED + "\n")
    if start < 0:
        raise ReleaseRefused(["the changelog has no '## Unreleased' section"])
    body_start = start + len(_UNRELEASED) + 1
    following = text.find("\n## ", body_start)
    body = text[body_start : following if following >= 0 else len(text)]
    if not body.strip():
        raise ReleaseRefused(["the changelog's Unreleased section is empty: nothing to release"])
    if f"## {version} " in text or f"## {version}\n" in text:
        raise ReleaseRefused([f"the changelog already has a section for {version}"])
    heading = f"{_UNRELEASED}\n\n## {version} ({date.isoformat()})\n"
    return text[:start] + heading + text[body_start:]


def _released(package: Package) -> bool:
    """Whether the changelog already has a section for the package's current version.

    A package starts its line at a version nobody has released yet (every package here
    starts at 0.2.0, above the 0.1 releases of the earlier code base on the package
    index), so releasing exactly that version is its first release, not a step back.
    """
    current = package.version
    text = package.changelog.read_text() if package.changelog.exists() else ""
    return f"## {current} " in text or f"## {current}\n" in text


def set_version(package: Package, version: Version) -> None:
    """Write ``version`` into the package's ``_version.py``."""
    text = package.version_file.read_text()
    package.version_file.write_text(_VERSION_LINE.sub(f'__version__ = "{version}"', text, count=1))


def build(package: Package, out: Path, *, sdist: bool = True) -> list[Path]:
    """Build the package's wheel (and sdist) into ``out`` with hatchling; the files built.

    Hatchling is the build backend ``hatch build`` drives; calling it in this
    interpreter builds the same files without depending on which ``hatch`` is on PATH.
    """
    out = out.resolve()  # hatchling runs in the package folder, where a relative path points
    out.mkdir(parents=True, exist_ok=True)
    before = set(out.iterdir())
    targets = ["-t", "wheel", *(["-t", "sdist"] if sdist else [])]
    done = subprocess.run(
        [sys.executable, "-m", "hatchling", "build", *targets, "-d", str(out)],
        cwd=package.directory,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip()
        raise ReleaseRefused([f"building {package.name} failed: {detail}"])
    return sorted(set(out.iterdir()) - before)


def _wheel_metadata(wheel: Path) -> tuple[dict[str, list[str]], list[str]]:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        [metadata] = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode()
    headers = HeaderParser().parsestr(text)
    fields: dict[str, list[str]] = {}
    for key, value in headers.items():
        fields.setdefault(key, []).append(value)
    return fields, names


def artifact_problems(package: Package, artifacts: Sequence[Path], version: Version) -> list[str]:
    """What is wrong with the built files' metadata and contents, if anything."""
    problems = []
    wheels = [a for a in artifacts if a.suffix == ".whl"]
    sdists = [a for a in artifacts if a.name.endswith(".tar.gz")]
    if len(wheels) != 1:
        return [f"expected one wheel for {package.name}, got {[a.name for a in wheels]}"]
    fields, names = _wheel_metadata(wheels[0])

    def one(key: str) -> str:
        return fields.get(key, [""])[0]

    if canonicalize_name(one("Name")) != package.name:
        problems.append(f"wheel Name is {one('Name')!r}, expected {package.name}")
    if one("Version") != str(version):
        problems.append(f"wheel Version is {one('Version')!r}, expected {version}")
    for key in ("Summary", "License-Expression", "Requires-Python"):
        if not one(key):
            problems.append(f"wheel metadata has no {key}")
    if one("Description-Content-Type") != "text/markdown":
        problems.append("the wheel's long description is not the Markdown README")
    declared = {str(r) for r in package.requirements}
    shipped = {
        str(Requirement(text)).split(";")[0].strip() for text in fields.get("Requires-Dist", [])
    }
    missing = {d for d in declared if d not in shipped and Requirement(d).marker is None}
    if missing:
        problems.append(f"wheel Requires-Dist lacks {sorted(missing)}")
    if f"{package.module}/py.typed" not in names:
        problems.append(f"the wheel has no {package.module}/py.typed")
    if f"{package.module}/__init__.py" not in names:
        problems.append(f"the wheel does not ship the {package.module} package")
    if sdists:
        with tarfile.open(sdists[0]) as archive:
            members = archive.getnames()
        if not any(m.endswith("/pyproject.toml") for m in members):
            problems.append("the sdist has no pyproject.toml")
    return problems


def release(
    name: str,
    version_text: str,
    *,
    out: Path,
    date: datetime.date,
    do_build: bool = True,
    root: Path = ROOT,
) -> list[Path]:
    """Release ``name`` at ``version_text``; the built files.

    Every check that can refuse runs before the first file is written.

    Raises:
        ReleaseRefused: an unknown package or version, a version not above the
            current one (or equal to it once that version was released), a sibling
            range that would not admit it, an empty changelog,
            or built metadata that is wrong (the version and changelog stay bumped
            then, so the fix can be rebuilt).
    """
    packages = workspace_packages(root)
    package = packages.get(canonicalize_name(name))
    if package is None:
        raise ReleaseRefused([f"no package {name!r} here; known: {', '.join(sorted(packages))}"])
    try:
        version = Version(version_text)
    except InvalidVersion:
        raise ReleaseRefused([f"{version_text!r} is not a version"]) from None
    first_release = version == package.version and not _released(package)
    if version <= package.version and not first_release:
        raise ReleaseRefused([f"{package.name} is at {package.version}; {version} is not above it"])
    problems = range_problems(packages, {package.name: version})
    if problems:
        raise ReleaseRefused(problems)
    changelog = released_changelog(package.changelog.read_text(), version, date)
    set_version(package, version)
    package.changelog.write_text(changelog)
    if not do_build:
        return []
    artifacts = build(package, out)
    problems = artifact_problems(package, artifacts, version)
    if problems:
        raise ReleaseRefused(problems)
    return artifacts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("check", help="every sibling range admits the sibling's version")
    one = commands.add_parser("release", help="bump, changelog, build and check one package")
    one.add_argument("name")
    one.add_argument("version")
    one.add_argument("--out", type=Path, default=ROOT / "dist")
    one.add_argument("--no-build", action="store_true")
    one.add_argument("--date", type=datetime.date.fromisoformat, default=datetime.date.today())
    wheels = commands.add_parser("build", help="build wheels (every package by default)")
    wheels.add_argument("names", nargs="*")
    wheels.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            problems = range_problems(workspace_packages())
            if problems:
                raise ReleaseRefused(problems)
            print(f"{len(workspace_packages())} packages: every sibling range admits its sibling")
        elif args.command == "release":
            built = release(
                args.name, args.version, out=args.out, date=args.date, do_build=not args.no_build
            )
            for artifact in built:
                print(artifact)
        else:
            packages = workspace_packages()
            chosen: list[str] = [canonicalize_name(n) for n in args.names] or sorted(packages)
            unknown = [n for n in chosen if n not in packages]
            if unknown:
                raise ReleaseRefused([f"unknown packages: {', '.join(unknown)}"])
            for name in chosen:
                for artifact in build(packages[name], args.out, sdist=False):
                    print(artifact)
    except ReleaseRefused as refused:
        for problem in refused.problems:
            print(f"refused: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
