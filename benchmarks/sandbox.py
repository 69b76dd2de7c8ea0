"""What running a model's program costs, per sandbox backend. Prints JSON lines.

Run with ``hatch run bench --only sandbox`` (or ``python -m benchmarks.sandbox``).
Three figures per backend that can open on this machine:

* ``sandbox_program_start``: ``execute()`` of a program that does nothing, from the
  call to the returned ``Execution``: process start, the runner's handshake, teardown
  and workspace clean-up. This is the latency a ``run_code`` call adds before the
  program's own work.
* ``sandbox_binding_call``: one host-tool call made by a program, the round trip over
  the protocol pipe to the host and back, timed inside the program over 50 calls.
* ``sandbox_interpreter_start``: the baseline, ``python -I -S -c pass`` started
  directly, so what the backend adds on top of the interpreter is visible.

A backend that cannot open here (no container engine, no user namespaces) is reported
as ``skipped`` with the reason. The ``oci`` backend runs podman from the root filesystem
``tools/sandbox_rootfs.py`` builds, when it is there.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from pydantic import JsonValue

from psych_runtime.adapters import Program
from psych_runtime.adapters import ResolvedLimits
from psych_runtime.adapters import Sandbox

_CALLS = 50


def _emit(metric: str, backend: str, **values: Any) -> None:
    print(json.dumps({"metric": metric, "store": "-", "backend": backend, **values}), flush=True)


def _ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


async def _echo(name: str, arguments: dict[str, JsonValue]) -> JsonValue:
    return arguments.get("value")


async def _timed(sandbox: Sandbox, program: Program, n: int) -> tuple[list[float], list[float]]:
    """Wall time of each execution, and the value each program returned."""
    samples, values = [], []
    for _ in range(n):
        started = time.perf_counter()
        done = await sandbox.execute(program, _echo)
        samples.append(time.perf_counter() - started)
        if done.status.value != "ok" or not isinstance(done.value, int | float):
            raise RuntimeError(f"the benchmark program failed: {done}")
        values.append(float(done.value))
    return samples, values


async def _opened() -> list[tuple[str, Callable[[], Awaitable[Sandbox]]]]:
    from psych_sandbox import NamespaceSandbox
    from psych_sandbox import OciSandbox
    from psych_sandbox import SubprocessSandbox
    from tools.sandbox_rootfs import rootfs_path

    rootfs = rootfs_path()

    async def oci() -> Sandbox:
        # The root filesystem tools/sandbox_rootfs.py builds; an image otherwise.
        if rootfs.is_dir():
            return await OciSandbox.open(rootfs=str(rootfs))
        return await OciSandbox.open()

    return [
        ("subprocess", SubprocessSandbox.open),
        ("namespaces", NamespaceSandbox.open),
        ("oci", oci),
    ]


async def bench_sandbox(quick: bool) -> None:
    """Program start-up and binding round-trip latency for every backend that opens."""
    n = 5 if quick else 30
    limits = ResolvedLimits(cpu_seconds=10, wall_seconds=30)
    idle = Program(source="0", limits=limits)
    calls = Program(
        source=(
            "import time\n"
            "started = time.perf_counter()\n"
            f"for i in range({_CALLS}):\n"
            "    tools.echo(value=i)\n"
            f"(time.perf_counter() - started) / {_CALLS}"
        ),
        limits=limits,
        bindings=("echo",),
    )
    baseline = []
    for _ in range(n):
        started = time.perf_counter()
        bare = await asyncio.create_subprocess_exec("python3", "-I", "-S", "-c", "pass")
        if await bare.wait() != 0:
            raise RuntimeError("python3 -I -S -c pass failed")
        baseline.append(time.perf_counter() - started)
    _emit("sandbox_interpreter_start", "-", median_ms=_ms(baseline), samples=n)
    try:
        backends = await _opened()
    except ImportError as missing:
        _emit("skipped", "-", reason=f"psych-sandbox is not installed: {missing}")
        return
    for name, opener in backends:
        try:
            sandbox = await opener()
        except Exception as error:
            _emit("skipped", name, reason=str(error))
            continue
        try:
            await _timed(sandbox, idle, 2)  # warm the page cache and the uid pool
            start, _ = await _timed(sandbox, idle, n)
            _, per_call = await _timed(sandbox, calls, n)
        finally:
            await sandbox.close()
        _emit("sandbox_program_start", name, median_ms=_ms(start), samples=n)
        _emit(
            "sandbox_binding_call",
            name,
            median_ms=_ms(per_call),
            calls_per_program=_CALLS,
            samples=n,
        )


if __name__ == "__main__":
    import sys

    asyncio.run(bench_sandbox("--quick" in sys.argv))
