"""A Worker in its own process, for tests and benchmarks that use real processes.

Usage: ``python tests/support/worker_process.py URL MARKER_DIR MODE [NUMBER]``

MODE ``work`` runs a Worker (lease NUMBER seconds, default 2) whose ``charge`` tool
writes two marker files, ``started.<pid>`` and ``call.<run id>.<call id>.<pid>``, and
then hangs (when ``PSYCH_E2E_HANG=1``, or for the order id
``PSYCH_E2E_HANG_ON`` names), sleeps a random time up to
``PSYCH_E2E_TOOL_SECONDS`` (default 0), or returns at once, writing
``done.<run id>.<call id>.<pid>`` as it returns; the model calls ``charge``
``PSYCH_E2E_TURNS`` times (default 1) and then answers; for the model id ``lead`` it
delegates once to its roster subagent ``clerk`` and then answers. ``PSYCH_E2E_CONCURRENCY`` and
``PSYCH_E2E_MAX_ATTEMPTS`` set the Worker's concurrency and attempt limit,
``PSYCH_E2E_APPROVE=1`` makes every ``charge`` call wait for an approval, and
``PSYCH_E2E_SLOW_ANSWER=1`` streams the final answer one word every half second.
``PSYCH_E2E_MARKERS=0`` leaves the marker files out (for benchmarks that only count
settled Runs: the documented workload's tool does no IO).
``PSYCH_E2E_DEFAULT_TIMING=1`` keeps the Worker's own lease, heartbeat, poll and
supervisor timings (otherwise they are shortened for quick tests, the lease to NUMBER
seconds). MODE
``claim`` only claims Runs in a loop and prints each claimed run id, to race another
process for them; after NUMBER idle seconds it prints ``done`` and keeps its claims
until a line arrives on standard input.
"""

import asyncio
import os
import random
import subprocess
import sys
from collections.abc import AsyncIterator
from collections.abc import Mapping
from datetime import UTC
from datetime import datetime
from pathlib import Path

import psych_runtime
from psych_runtime.models import ModelRequest
from psych_runtime.models import StreamEvent
from psych_runtime.testing import FakeModel


class ConversationModel:
    """Calls ``charge`` a set number of times, then answers, judging by the conversation.

    Deciding from the messages it is sent (not from a script position) lets any number
    of Workers and processes share it, and lets a reclaiming Worker carry on correctly.
    """

    def __init__(self, turns: int) -> None:
        self.turns = turns

    async def known_models(self) -> frozenset[str]:
        return frozenset()

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        done = sum(1 for m in request.messages if m.role == "tool")
        script = FakeModel()
        if request.model == "lead":
            # A parent with a roster: hand the charge to its "clerk" subagent, then answer.
            if done:
                script.turn(text="The clerk has dealt with it.")
            else:
                script.turn(tool_calls=[("delegate", {"agent": "clerk", "task": "Charge A0."})])
        elif done >= self.turns:
            if os.environ.get("PSYCH_E2E_SLOW_ANSWER") == "1":
                # An answer that takes a minute to stream, for interrupts mid-stream.
                script.turn(text=" ".join(["word"] * 120), chunk_delay_seconds=0.5)
            else:
                script.turn(text="The charge is settled.")
        else:
            script.turn(tool_calls=[("charge", {"order_id": f"A{done}"})])
        return script.stream(request)


async def work(url: str, markers: Path, lease: float) -> None:
    pause = float(os.environ.get("PSYCH_E2E_TOOL_SECONDS", "0"))
    write_markers = os.environ.get("PSYCH_E2E_MARKERS") != "0"

    async def charge(order_id: str, context: psych_runtime.ToolContext) -> str:
        """Charge an order."""
        if write_markers:
            pid = os.getpid()
            (markers / f"started.{pid}").write_text(order_id)
            (markers / f"call.{context.run_id}.{context.call_id}.{pid}").write_text(order_id)
        hang_on = os.environ.get("PSYCH_E2E_HANG_ON")
        if os.environ.get("PSYCH_E2E_HANG") == "1" or order_id == hang_on:
            await asyncio.Event().wait()
        if pause:
            await asyncio.sleep(random.uniform(0, pause))
        if write_markers:
            (markers / f"done.{context.run_id}.{context.call_id}.{os.getpid()}").write_text("")
        return "charged"

    store = await psych_runtime.open_store(url)
    registry = psych_runtime.ToolRegistry()
    registry.register(charge)
    approvals = None
    if os.environ.get("PSYCH_E2E_APPROVE") == "1":
        approvals = psych_runtime.ApprovalRules(always=frozenset({"charge"}))
    runtime = psych_runtime.Runtime(
        store,
        ConversationModel(int(os.environ.get("PSYCH_E2E_TURNS", "1"))),
        registry,
        approvals=approvals,
    )
    concurrency = int(os.environ.get("PSYCH_E2E_CONCURRENCY", "4"))
    if os.environ.get("PSYCH_E2E_DEFAULT_TIMING") == "1":
        worker = psych_runtime.Worker(store, runtime, concurrency=concurrency)
    else:
        worker = psych_runtime.Worker(
            store,
            runtime,
            lease_seconds=lease,
            heartbeat_seconds=lease / 4,
            poll_interval=0.05,
            supervisor_interval=0.1,
            concurrency=concurrency,
        )
    if "PSYCH_E2E_MAX_ATTEMPTS" in os.environ:
        worker.max_attempts = int(os.environ["PSYCH_E2E_MAX_ATTEMPTS"])
    print("ready", flush=True)
    await worker.run()


async def claim(url: str, seconds: float) -> None:
    store = await psych_runtime.open_store(url)
    worker_id = psych_runtime.records.WorkerId(f"wrk_{os.getpid()}")
    print("ready", flush=True)
    idle_since = None
    loop = asyncio.get_running_loop()
    while True:
        header = await store.claim(worker_id, datetime.now(UTC), 300.0)
        if header is None:
            idle_since = idle_since or loop.time()
            if loop.time() - idle_since > seconds:
                break
            await asyncio.sleep(0.01)
            continue
        idle_since = None
        print(f"claimed {header.run_id}", flush=True)
    # Stay alive, holding what was claimed, until the parent has heard from every racer:
    # a closed store is a dead Worker, whose Runs another claimer may rightly take over.
    print("done", flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    await store.close()


SCRIPT = Path(__file__).resolve()


def spawn_worker(
    url: str,
    markers: Path,
    mode: str = "work",
    number: float = 2.0,
    *,
    env: Mapping[str, str] | None = None,
    keep_stdin: bool = False,
    capture_stderr: bool = False,
) -> subprocess.Popen[str]:
    """Start this script in a new process and return once it has printed ``ready``.

    Args:
        url: the store URL the process opens.
        markers: the folder the ``charge`` tool writes its marker files into.
        mode: ``work`` or ``claim`` (see the module docstring).
        number: the lease seconds (``work``) or idle seconds (``claim``).
        env: ``PSYCH_E2E_*`` settings added to this process's environment.
        keep_stdin: give the process a pipe for standard input (``claim`` mode waits
            for a line on it before it exits); otherwise it reads from /dev/null.
        capture_stderr: pipe standard error back to the caller (read it only after
            the process ended); otherwise it is discarded.

    Raises:
        RuntimeError: the process ended or printed something else before ``ready``.
    """
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), url, str(markers), mode, str(number)],
        stdin=subprocess.PIPE if keep_stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if capture_stderr else subprocess.DEVNULL,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if line != "ready":
        process.kill()
        _, err = process.communicate()
        raise RuntimeError(f"the worker process did not start (printed {line!r}): {err or ''}")
    return process


def main() -> None:
    url, markers, mode = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    number = float(sys.argv[4]) if len(sys.argv) > 4 else 2.0
    if mode == "work":
        asyncio.run(work(url, markers, number))
    else:
        asyncio.run(claim(url, number))


if __name__ == "__main__":
    main()
