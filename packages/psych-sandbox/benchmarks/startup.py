"""Start-up latency of a trivial program per sandbox backend, printed as JSON lines.

Run from the repository root: ``python packages/psych-sandbox/benchmarks/startup.py
[--samples N]``. Each line: the backend, its isolation, and the median, p90 and minimum
seconds of ``execute`` for the program ``1`` (process start to teardown). A backend
that cannot open here prints its reason instead.
"""

import argparse
import asyncio
import json
import statistics
import time

from pydantic import JsonValue

from psych_runtime.adapters import Program, ResolvedLimits, Sandbox
from psych_sandbox import NamespaceSandbox, OciSandbox, SandboxUnavailable, SubprocessSandbox


async def _nothing(name: str, arguments: dict[str, JsonValue]) -> JsonValue:
    return None


async def _measure(name: str, sandbox: Sandbox, samples: int) -> dict[str, object]:
    program = Program(source="1", limits=ResolvedLimits(cpu_seconds=5, wall_seconds=30))
    durations: list[float] = []
    for _ in range(samples):
        started = time.perf_counter()
        execution = await sandbox.execute(program, _nothing)
        durations.append(time.perf_counter() - started)
        assert execution.value == 1, execution
    durations.sort()
    return {
        "backend": name,
        "isolation": sandbox.capabilities.isolation.value,
        "samples": samples,
        "median_s": round(statistics.median(durations), 4),
        "p90_s": round(durations[int(0.9 * (len(durations) - 1))], 4),
        "min_s": round(durations[0], 4),
    }


async def main(samples: int) -> None:
    """Open each backend and print its start-up latency (or why it cannot open)."""
    openers = {
        "subprocess": SubprocessSandbox.open,
        "namespaces": NamespaceSandbox.open,
        "oci": OciSandbox.open,
    }
    for name, open_backend in openers.items():
        try:
            sandbox: Sandbox = await open_backend()
        except SandboxUnavailable as error:
            print(json.dumps({"backend": name, "unavailable": str(error)}))
            continue
        try:
            print(json.dumps(await _measure(name, sandbox, samples)))
        finally:
            await sandbox.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=20)
    asyncio.run(main(parser.parse_args().samples))
