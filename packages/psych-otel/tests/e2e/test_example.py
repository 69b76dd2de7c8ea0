"""examples/otel_console.py runs and prints every span of its Run, innermost first."""

import asyncio
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "otel_console.py"


async def test_the_console_example_prints_the_runs_spans(tmp_path: Path) -> None:
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    expected = [
        "chat gpt-4o-mini ",
        "execute_tool track_parcel ",
        "psych.turn ",
        "chat gpt-4o-mini ",
        "psych.turn ",
        "psych.attempt",
        "psych.run ",
    ]
    assert len(lines) == len(expected) + 1, lines
    assert all(line.startswith(name) for line, name in zip(lines, expected, strict=False)), lines
    assert "gen_ai.tool.name=track_parcel" in lines[1]
    assert lines[-2] == "psych.run psych.run.terminal_state=completed"
    assert lines[-1] == "Parcel P-100 is out for delivery."
