"""``psych skills``: the shipped skills, their front matter, and installing them."""

import re
import zipfile
from pathlib import Path

import pytest

from psych_runtime.cli.main import main
from psych_runtime.cli.skills import SkillError
from psych_runtime.cli.skills import parse_skill
from psych_runtime.cli.skills import shipped_skills

TOPICS = (
    "quickstart agents workflows builder code-tools http-tools mcp mcp-oauth a2a sandbox "
    "agent-skills memory subagents approvals interrupts suspend-resume compaction streaming "
    "report pricing telemetry stores blobs multitenancy testing"
)
EXPECTED = {"psych", *(f"psych-{topic}" for topic in TOPICS.split())}
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def test_list_prints_every_skill_with_its_description(capsys):
    assert main(["skills", "list"]) == 0

    out = capsys.readouterr().out
    for skill in shipped_skills():
        assert f"{skill.name}\n    {skill.description}\n" in out
    assert {skill.name for skill in shipped_skills()} == EXPECTED


def test_every_skill_has_front_matter_and_code():
    # Their code runs in tests/docs/test_agent_skills.py, all skills in one process.
    assert len(EXPECTED) == 26
    for skill in shipped_skills():
        assert skill.text.startswith(f"---\nname: {skill.name}\ndescription: ")
        assert PYTHON_BLOCK.findall(skill.text), f"{skill.name} has no python example"


def test_install_writes_every_skill_into_the_default_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)

    assert main(["skills", "install"]) == 0

    installed = {p.parent.name for p in (tmp_path / ".agents" / "skills").glob("*/SKILL.md")}
    assert installed == EXPECTED
    for skill in shipped_skills():
        written = tmp_path / ".agents" / "skills" / skill.name / "SKILL.md"
        assert written.read_text() == skill.text
    assert "Installed 26 skill(s)" in capsys.readouterr().out


def test_install_some_into_a_chosen_folder_and_refuse_to_clobber_edits(tmp_path, capsys):
    dest = tmp_path / "skills"

    assert main(["skills", "install", "psych-code-tools", "--dest", str(dest)]) == 0
    assert [p.name for p in dest.iterdir()] == ["psych-code-tools"]
    # Installing the same content again is fine; an edited copy is kept unless forced.
    assert main(["skills", "install", "psych-code-tools", "--dest", str(dest)]) == 0
    edited = dest / "psych-code-tools" / "SKILL.md"
    edited.write_text("my notes")
    capsys.readouterr()

    assert main(["skills", "install", "--dest", str(dest)]) == 1
    assert "--force" in capsys.readouterr().err
    assert edited.read_text() == "my notes"
    assert not (dest / "psych-testing").exists()

    assert main(["skills", "install", "--dest", str(dest), "--force"]) == 0
    assert edited.read_text().startswith("---\nname: psych-code-tools\n")


def test_an_unknown_skill_is_refused(tmp_path, capsys):
    assert main(["skills", "install", "nope", "--dest", str(tmp_path)]) == 1
    assert "no skill named nope" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# no front matter", "does not start"),
        ("---\nname: x\n", "not closed"),
        ("---\nname: x\n---\nbody", "needs a name and a description"),
        ("---\nname: other\ndescription: d\n---\n", "names it 'other'"),
    ],
)
def test_malformed_skills_are_refused(text, message):
    with pytest.raises(SkillError, match=message):
        parse_skill(text, "x")


def test_the_wheel_ships_the_skills_and_templates(tmp_path):
    hatchling = pytest.importorskip("hatchling.builders.wheel")
    root = Path(__file__).resolve().parents[3]
    builder = hatchling.WheelBuilder(str(root))
    [wheel] = list(builder.build(directory=str(tmp_path), versions=["standard"]))

    names = set(zipfile.ZipFile(wheel).namelist())
    for skill in EXPECTED:
        assert f"psych_runtime/agent_skills/{skill}/SKILL.md" in names
    for template in ("minimal", "tour", "fastapi"):
        assert any(name.startswith(f"psych_runtime/templates/{template}/") for name in names)
