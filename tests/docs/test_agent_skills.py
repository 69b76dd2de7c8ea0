"""The skills for coding agents: all 26 ship, well formed, and every code block runs.

Every ``python`` block of every ``SKILL.md`` runs, in order, in one namespace per
skill, inside a single process (one interpreter start for all of them, each skill in a
scratch folder of its own). A block may use top-level ``await``, or be a complete
program ending in ``asyncio.run``. The skill about stores runs against the suite's
PostgreSQL server: its blocks read ``PSYCH_STORE_URL``, set here to a scratch schema.
A block that cannot run is marked ``<!-- not-run: reason -->``; the marks are counted.
"""

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from psych_runtime.cli.skills import install_skills
from psych_runtime.cli.skills import parse_skill
from psych_runtime.cli.skills import shipped_skills
from tests.docs.test_code_blocks import NOT_RUN
from tests.support.scratch_stores import scratch_store_url

ROOT = Path(__file__).resolve().parents[2]
SKILLS = ROOT / "packages" / "psych-core" / "src" / "psych_runtime" / "agent_skills"
FENCE = re.compile(r"(?P<before>[^\n]*)\n```python\n(?P<code>.*?)```", flags=re.DOTALL)

ENTRY = "psych"
TOPICS = (
    "psych-quickstart",
    "psych-agents",
    "psych-workflows",
    "psych-builder",
    "psych-code-tools",
    "psych-http-tools",
    "psych-mcp",
    "psych-mcp-oauth",
    "psych-a2a",
    "psych-sandbox",
    "psych-agent-skills",
    "psych-memory",
    "psych-subagents",
    "psych-approvals",
    "psych-interrupts",
    "psych-suspend-resume",
    "psych-compaction",
    "psych-streaming",
    "psych-report",
    "psych-pricing",
    "psych-telemetry",
    "psych-stores",
    "psych-blobs",
    "psych-multitenancy",
    "psych-testing",
)

# Runs [[skill, [[first_line, code], ...]], ...] from stdin; one JSON line per skill.
RUNNER = """
import ast, asyncio, inspect, json, os, sys, tempfile, time, traceback
skills = json.load(sys.stdin)
root = sys.argv[1]
loop = asyncio.new_event_loop()
for name, blocks in skills:
    folder = tempfile.mkdtemp(prefix=name + "-", dir=root)
    os.chdir(folder)
    namespace = {"__name__": "__main__"}
    began = time.monotonic()
    failure = None
    try:
        for line, code in blocks:
            path = f"agent_skills/{name}/SKILL.md"
            source = "\\n" * (line - 1) + code
            compiled = compile(source, path, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            if compiled.co_flags & inspect.CO_COROUTINE:
                loop.run_until_complete(eval(compiled, namespace))
            else:
                exec(compiled, namespace)
    except BaseException:
        failure = traceback.format_exc()
    seconds = time.monotonic() - began
    print(json.dumps({"skill": name, "failure": failure, "seconds": seconds}), flush=True)
loop.close()
"""


def skill_text(name: str) -> str:
    return (SKILLS / name / "SKILL.md").read_text()


def blocks(name: str) -> tuple[list[tuple[int, str]], list[str]]:
    """A skill's blocks to run (first line, code) and the reasons of those not run."""
    text = skill_text(name)
    runnable: list[tuple[int, str]] = []
    skipped: list[str] = []
    for match in FENCE.finditer("\n" + text):
        mark = NOT_RUN.search(match["before"])
        if mark is not None:
            skipped.append(mark["reason"].strip())
            continue
        runnable.append((text.count("\n", 0, match.start("code") - 1) + 1, match["code"]))
    return runnable, skipped


def test_the_entry_skill_and_its_25_topics_ship() -> None:
    assert [skill.name for skill in shipped_skills()] == sorted((ENTRY, *TOPICS))


def test_the_entry_skill_names_every_topic_and_each_topic_points_back() -> None:
    entry = skill_text(ENTRY)
    for topic in TOPICS:
        assert f"`{topic}`" in entry, topic
        assert f"`{ENTRY}`" in skill_text(topic), f"{topic} does not point to the entry skill"


@pytest.mark.parametrize("name", [ENTRY, *TOPICS])
def test_the_front_matter_says_what_and_when(name: str) -> None:
    skill = parse_skill(skill_text(name), name)
    assert skill.name == name
    assert 60 <= len(skill.description) <= 1024, skill.description
    assert re.search(r"\b(use|load|read) (it|this)? ?when\b", skill.description, re.I), (
        f"{name}: the description must say when to load the skill"
    )
    text = skill_text(name)
    assert re.search(r"^## .*(trap|mistake|pitfall|wrong)", text, re.M | re.I), (
        f"{name}: no section on the traps to avoid"
    )
    assert blocks(name)[0], f"{name} has no code that runs"


def test_install_writes_the_agent_skills_layout(tmp_path: Path) -> None:
    written = install_skills(tmp_path / ".agents" / "skills", [])
    assert len(written) == 26
    for path in written:
        assert path.name == "SKILL.md"
        assert path.parent.parent == tmp_path / ".agents" / "skills"
        assert path.read_text().startswith(f"---\nname: {path.parent.name}\n")


def test_few_blocks_are_marked_not_run() -> None:
    marked = {name: blocks(name)[1] for name in (ENTRY, *TOPICS) if blocks(name)[1]}
    total = sum(len(blocks(name)[0]) for name in (ENTRY, *TOPICS))
    skipped = sum(len(reasons) for reasons in marked.values())
    print(f"{total} blocks run, {skipped} marked not-run: {marked}")
    assert all(all(reasons) for reasons in marked.values()), "a not-run mark must say why"
    assert skipped * 5 <= total + skipped, marked


@pytest.fixture(scope="module")
def store_url() -> Iterator[str]:
    """A PostgreSQL schema nobody has migrated yet, dropped afterwards."""
    url, cleanup = asyncio.run(scratch_store_url("postgres", migrate=False))
    try:
        yield url
    finally:
        asyncio.run(cleanup())


@pytest.fixture(scope="module")
def results(store_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every skill's blocks, run once in one process; each skill's outcome by name."""
    payload = [[name, blocks(name)[0]] for name in (ENTRY, *TOPICS)]
    env = {**os.environ, "PSYCH_STORE_URL": store_url}
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(tmp_path_factory.mktemp("skills"))],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )
    found = {}
    for line in done.stdout.splitlines():
        if line.startswith("{") and '"skill"' in line:
            result = json.loads(line)
            found[result["skill"]] = result
    assert found, done.stderr[-4000:]
    print("\n".join(f"{r['seconds']:6.2f} s  {name}" for name, r in found.items()))
    return found


@pytest.mark.parametrize("name", [ENTRY, *TOPICS])
def test_the_skill_code_runs(name: str, results: dict[str, Any]) -> None:
    assert name in results, f"{name} never finished: an earlier skill ended the process"
    assert results[name]["failure"] is None, results[name]["failure"]
