"""Every Python block in the READMEs and the guides runs (the skills' in test_agent_skills).

Each Markdown file's ``python`` blocks run in order, in one namespace, in a process of
their own started in a scratch directory (blocks may create SQLite files there). A
block may use top-level ``await``; a block that calls ``asyncio.run`` itself runs as a
plain script. A block that cannot run here (it needs a real API key or a server this
machine does not have) is marked with ``<!-- not-run: reason -->`` on the line before
its fence; the marks are counted, and a mark without a reason fails.

Services are the test suite's own: PostgreSQL and MariaDB on loopback, and for the
DynamoDB package's README a moto server, named to the blocks through
``AWS_ENDPOINT_URL`` with fake credentials, so no real account can be reached.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.scratch_stores import start_moto

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"(?P<before>[^\n]*)\n```python\n(?P<code>.*?)```", flags=re.DOTALL)
NOT_RUN = re.compile(r"<!--\s*not-run:(?P<reason>.*?)-->")

# Runs the blocks given as JSON on stdin: [[first_line, code], ...].
RUNNER = """
import ast, asyncio, inspect, json, sys
blocks = json.load(sys.stdin)
path = sys.argv[1]
namespace = {"__name__": "__main__"}
loop = asyncio.new_event_loop()
for line, code in blocks:
    source = "\\n" * (line - 1) + code
    compiled = compile(source, path, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    if compiled.co_flags & inspect.CO_COROUTINE:
        loop.run_until_complete(eval(compiled, namespace))
    else:
        exec(compiled, namespace)
loop.close()
"""


def _documents() -> list[Path]:
    found = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found += sorted(ROOT.glob("packages/*/README.md"))
    found += [
        ROOT / "contract" / "README.md",
        ROOT / "examples" / "psych-store-example" / "README.md",
    ]
    return [path for path in found if path.exists()]


def _blocks(path: Path) -> tuple[list[tuple[int, str]], list[str]]:
    """The blocks of ``path`` to run (first line number, code) and the skipped ones' reasons."""
    text = path.read_text()
    runnable: list[tuple[int, str]] = []
    skipped: list[str] = []
    for match in FENCE.finditer("\n" + text):
        mark = NOT_RUN.search(match["before"])
        if mark is not None:
            skipped.append(mark["reason"].strip())
            continue
        first_line = text.count("\n", 0, match.start("code") - 1) + 1
        runnable.append((first_line, match["code"]))
    return runnable, skipped


DOCUMENTS = [path for path in _documents() if "```python" in path.read_text()]


@pytest.mark.parametrize("path", DOCUMENTS, ids=[str(p.relative_to(ROOT)) for p in DOCUMENTS])
def test_the_python_blocks_run(path: Path, tmp_path: Path) -> None:
    blocks, skipped = _blocks(path)
    assert all(skipped), f"{path}: a not-run mark must say why"
    if not blocks:
        pytest.skip(f"every block is marked not-run ({len(skipped)})")
    env = dict(os.environ)
    if "dynamodb://" in path.read_text():
        env["AWS_ENDPOINT_URL"] = start_moto()  # also sets fake credentials in os.environ
        env.update({k: v for k, v in os.environ.items() if k.startswith("AWS_")})
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(path)],
        input=json.dumps(blocks),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-4000:]


def test_documents_with_python_blocks_are_found() -> None:
    names = {str(path.relative_to(ROOT)) for path in DOCUMENTS}
    assert "README.md" in names
    assert "docs/writing-a-store-adapter.md" in names


def test_few_blocks_are_marked_not_run() -> None:
    marked = {str(p.relative_to(ROOT)): _blocks(p)[1] for p in DOCUMENTS if _blocks(p)[1]}
    total = sum(len(b) for b in (_blocks(p)[0] for p in DOCUMENTS))
    skipped = sum(len(reasons) for reasons in marked.values())
    print(f"{total} blocks run, {skipped} marked not-run: {marked}")
    # Marks are for blocks that are excerpts or need what no test has; keep them rare.
    assert skipped * 5 <= total + skipped, marked
