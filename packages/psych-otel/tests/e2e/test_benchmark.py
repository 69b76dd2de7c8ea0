"""``python -m benchmarks.otel --quick`` keeps running and prints one line per mode.

No timing is judged here; only that the command works and its figures are sane.
"""

import asyncio
import json
import math
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]


async def test_the_overhead_benchmark_prints_a_line_per_mode() -> None:
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "benchmarks.otel", "--quick"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert [line["mode"] for line in lines] == ["none", "api", "sdk"]
    for line in lines:
        assert line["metric"] == "telemetry_overhead"
        assert line["k"] == 10 and line["samples"] == 30
        assert math.isfinite(line["run_median_ms"]) and line["run_median_ms"] > 0
    assert lines[0]["telemetry_overhead_per_tool_turn_ms"] == 0.0
