"""tools/release.py on a small workspace of its own, and its check on the real one."""

import datetime
import zipfile
from pathlib import Path

import pytest
from packaging.version import Version

from tools import release
from tools.release import ReleaseRefused

DATE = datetime.date(2026, 12, 4)

PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.26"]
build-backend = "hatchling.build"

[project]
name = "{name}"
dynamic = ["version"]
description = "A package of the release tool's test workspace."
readme = "README.md"
license = "Apache-2.0"
requires-python = ">=3.12"
dependencies = [{dependencies}]

[tool.hatch.version]
path = "src/{module}/_version.py"

[tool.hatch.build.targets.wheel]
packages = ["src/{module}"]
"""

CHANGELOG = """\
# Changelog: {name}

## Unreleased

### Added
- Something worth releasing.

## 0.1.0 (2026-11-01)

### Added
- The first release.
"""


def _package(root: Path, name: str, version: str, dependencies: str = "") -> Path:
    module = name.replace("-", "_")
    folder = root / "packages" / name
    source = folder / "src" / module
    source.mkdir(parents=True)
    (source / "__init__.py").write_text('"""A test package."""\n')
    (source / "py.typed").write_text("")
    (source / "_version.py").write_text(f'__version__ = "{version}"\n')
    (folder / "README.md").write_text(f"# {name}\n")
    (folder / "CHANGELOG.md").write_text(CHANGELOG.format(name=name))
    text = PYPROJECT.format(name=name, module=module, dependencies=dependencies)
    (folder / "pyproject.toml").write_text(text)
    return folder


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    _package(tmp_path, "demo-core", "0.1.0", '"httpx>=0.27"')
    _package(tmp_path, "demo-plugin", "0.1.0", '"demo-core>=0.1,<0.2"')
    return tmp_path


def test_a_release_bumps_the_version_and_changelog_and_builds_checked_files(
    workspace: Path,
) -> None:
    out = workspace / "dist"
    built = release.release("demo-plugin", "0.1.1", out=out, date=DATE, root=workspace)
    assert sorted(p.name for p in built) == [
        "demo_plugin-0.1.1-py3-none-any.whl",
        "demo_plugin-0.1.1.tar.gz",
    ]
    folder = workspace / "packages" / "demo-plugin"
    assert (folder / "src/demo_plugin/_version.py").read_text() == '__version__ = "0.1.1"\n'
    changelog = (folder / "CHANGELOG.md").read_text()
    assert "## Unreleased\n\n## 0.1.1 (2026-12-04)\n\n### Added\n- Something worth" in changelog
    assert changelog.count("## Unreleased") == 1
    with zipfile.ZipFile(built[0]) as wheel:
        metadata = wheel.read("demo_plugin-0.1.1.dist-info/METADATA").decode()
    assert "Requires-Dist: demo-core<0.2,>=0.1" in metadata
    # The sibling was not touched.
    core = workspace / "packages/demo-core/src/demo_core/_version.py"
    assert core.read_text() == '__version__ = "0.1.0"\n'


def test_a_bump_a_sibling_range_does_not_admit_is_refused_before_any_file_changes(
    workspace: Path,
) -> None:
    folder = workspace / "packages" / "demo-core"
    before = {p: p.read_text() for p in folder.rglob("*") if p.is_file()}
    with pytest.raises(ReleaseRefused) as refused:
        release.release("demo-core", "0.2.0", out=workspace / "dist", date=DATE, root=workspace)
    [problem] = refused.value.problems
    assert "demo-plugin requires demo-core<0.2,>=0.1" in problem
    assert "0.2.0" in problem
    assert {p: p.read_text() for p in folder.rglob("*") if p.is_file()} == before
    assert not (workspace / "dist").exists()
    # Within the range, the same package releases.
    release.release("demo-core", "0.1.5", out=workspace / "dist", date=DATE, root=workspace)


@pytest.mark.parametrize(
    ("version", "reason"),
    [("0.1.0", "not above"), ("0.0.9", "not above"), ("one", "not a version")],
)
def test_a_version_that_is_not_a_step_forward_is_refused(
    workspace: Path, version: str, reason: str
) -> None:
    with pytest.raises(ReleaseRefused, match=reason):
        release.release("demo-plugin", version, out=workspace / "d", date=DATE, root=workspace)


def test_the_version_a_line_starts_at_is_released_once(workspace: Path) -> None:
    folder = _package(workspace, "demo-fresh", "0.2.0")
    changelog = folder / "CHANGELOG.md"
    changelog.write_text("# Changelog\n\n## Unreleased\n\n### Added\n- Everything.\n")
    release.release(
        "demo-fresh", "0.2.0", out=workspace / "d", date=DATE, do_build=False, root=workspace
    )
    assert "## Unreleased\n\n## 0.2.0 (2026-12-04)\n" in changelog.read_text()
    changelog.write_text(
        changelog.read_text().replace("## Unreleased\n", "## Unreleased\n- More.\n")
    )
    with pytest.raises(ReleaseRefused, match=r"is at 0\.2\.0; 0\.2\.0 is not above it"):
        release.release(
            "demo-fresh", "0.2.0", out=workspace / "d", date=DATE, do_build=False, root=workspace
        )


def test_an_empty_unreleased_section_is_refused(workspace: Path) -> None:
    changelog = workspace / "packages/demo-plugin/CHANGELOG.md"
    changelog.write_text("# Changelog\n\n## Unreleased\n\n## 0.1.0 (2026-11-01)\n- first\n")
    with pytest.raises(ReleaseRefused, match="empty"):
        release.release("demo-plugin", "0.1.1", out=workspace / "d", date=DATE, root=workspace)
    version = workspace / "packages/demo-plugin/src/demo_plugin/_version.py"
    assert version.read_text() == '__version__ = "0.1.0"\n'


def test_an_unknown_package_is_refused(workspace: Path) -> None:
    with pytest.raises(ReleaseRefused, match="no package 'demo-nothing'"):
        release.release("demo-nothing", "1.0", out=workspace / "d", date=DATE, root=workspace)


def test_a_relative_out_folder_is_the_callers_not_the_packages(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    package = release.workspace_packages(workspace)["demo-core"]
    [wheel] = release.build(package, Path("dist"), sdist=False)
    assert wheel == workspace / "dist" / "demo_core-0.1.0-py3-none-any.whl"
    assert wheel.exists() and not (package.directory / "dist").exists()


def test_built_metadata_is_checked(workspace: Path) -> None:
    package = release.workspace_packages(workspace)["demo-plugin"]
    (package.directory / "src/demo_plugin/py.typed").unlink()
    built = release.build(package, workspace / "dist")
    problems = release.artifact_problems(package, built, package.version)
    assert problems == ["the wheel has no demo_plugin/py.typed"]
    assert release.artifact_problems(package, built, Version("9.9")) == [
        "wheel Version is '0.1.0', expected 9.9",
        "the wheel has no demo_plugin/py.typed",
    ]


def test_every_sibling_range_in_this_workspace_admits_its_sibling() -> None:
    packages = release.workspace_packages()
    assert {"psych-runtime", "psych-contract", "psych-store-sqlite"} <= set(packages)
    assert release.range_problems(packages) == []
    assert release.main(["check"]) == 0


def test_every_package_starts_above_the_earlier_releases_on_the_index() -> None:
    # psych-runtime 0.1.0 to 0.1.4 on the package index are an earlier code base: no
    # package here may be at or below that line, nor let a sibling pick it up.
    packages = release.workspace_packages()
    assert {str(p.version) for p in packages.values()} == {"0.2.0"}
    for package in packages.values():
        for requirement in package.requirements:
            if requirement.name in packages:
                assert not requirement.specifier.contains("0.1.4"), (package.name, requirement)
                assert requirement.specifier.contains("0.2.0"), (package.name, requirement)


def test_the_check_names_a_range_that_excludes_the_current_version(workspace: Path) -> None:
    plugin = workspace / "packages/demo-plugin/pyproject.toml"
    plugin.write_text(plugin.read_text().replace("<0.2", "<0.1"))
    problems = release.range_problems(release.workspace_packages(workspace))
    assert len(problems) == 1 and "does not admit demo-core 0.1.0" in problems[0]
