"""The Sandbox conformance suite, escape matrix included.

Subclass ``SandboxContract`` in your backend's tests and override the ``sandbox``
fixture so it yields an opened sandbox (and closes it afterwards). Set
``kernel_enforced = True`` when the backend claims containment (``Isolation.CONTAINED``):
then every escape case must pass, none may skip.

The escape cases are each a program that tries to break out: fork bomb, memory hog,
disk fill, an endless sleep (wall clock), a busy loop (CPU), a TCP connection to the
host's loopback (PostgreSQL's 5432 and a listener the case opens), the host's
environment, a host file only its owner may read, writing outside the workspace,
killing the host, and leaving a daemon behind. Each must end as data (an ``Execution``
saying what stopped it or that the action failed), never by raising, and the host
(this test process) must survive. A case a backend's ``capabilities`` say it cannot
prevent is skipped with the reason, so a backend that only *reports* a guarantee (a
plain subprocess reports ``NO_NETWORK``) is never credited with it.

A backend that enforces ``UNPRIVILEGED_USER`` is expected to run the program under a
uid of its own: the host's processes and owner-only files are then out of reach, and no
process of the program may survive it.

Only the public port is used: ``psych_runtime.adapters``.
"""

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

import pytest
import pytest_asyncio
from pydantic import JsonValue

from psych_contract._overrides import Suite
from psych_contract._overrides import must_override
from psych_contract._overrides import overridden_without_xfail
from psych_runtime.adapters.sandbox import BindingRefused
from psych_runtime.adapters.sandbox import Execution
from psych_runtime.adapters.sandbox import ExecutionStatus
from psych_runtime.adapters.sandbox import Guarantee
from psych_runtime.adapters.sandbox import Program
from psych_runtime.adapters.sandbox import ResolvedLimits
from psych_runtime.adapters.sandbox import Sandbox
from psych_runtime.spec import Isolation

JsonObject = dict[str, JsonValue]


def processes_with(marker: str) -> list[int]:
    """Pids of host processes whose command line contains ``marker``."""
    found: list[int] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError), open(f"/proc/{entry.name}/cmdline", "rb") as f:
            if marker.encode() in f.read():
                found.append(int(entry.name))
    return found


def killed_survivors(marker: str) -> list[int]:
    """Processes still carrying ``marker`` right now (each killed, so none outlives the case)."""
    survivors = processes_with(marker)
    for pid in survivors:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return survivors


def host_leftovers(marker: str) -> list[str]:
    """Files named after ``marker`` in the host's shared scratch directories."""
    found: list[str] = []
    for directory in ("/dev/shm", tempfile.gettempdir(), "/tmp", "/var/tmp"):
        with contextlib.suppress(OSError):
            found += [
                os.path.join(directory, name)
                for name in os.listdir(directory)
                if name.startswith(marker)
            ]
    for path in found:
        with contextlib.suppress(OSError):
            os.unlink(path)
    return sorted(set(found))


_MIB = 1024 * 1024


def daemon_source(marker: str, then: str) -> str:
    """A program that leaves a double-forked, detached daemon, then runs ``then``.

    The daemon is a ``sleep`` whose command line carries ``marker``. The program goes on
    only once the daemon has started (a pipe whose last writer closes on the daemon's
    exec), prints ``daemon up``, and then runs ``then``.
    """
    return (
        "import os, sys, time\n"
        "ready_r, ready_w = os.pipe()\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        os.close(ready_r)\n"
        f"        os.execv('/bin/sleep', ['{marker}', '30'])\n"
        "    os._exit(0)\n"
        "os.close(ready_w)\n"
        "os.read(ready_r, 1)\n"
        "print('daemon up', flush=True)\n"
        f"{then}\n"
    )


def fill_source(directory: str, marker: str, total: int) -> str:
    """A program that writes ``total`` bytes into ``directory`` in 1 MiB files, then waits.

    It holds on to what it wrote (sleeping), so a backend that counts the directory
    stops it with ``limit: disk`` and one that does not lets it run into the wall clock.
    """
    return (
        "import time\n"
        f"for i in range({max(1, total // _MIB)}):\n"
        f"    with open({directory!r} + '/{marker}-' + str(i), 'wb') as f:\n"
        f"        f.write(b'x' * {_MIB})\n"
        "time.sleep(60)"
    )


async def _none_left(marker: str, seconds: float = 3.0) -> list[int]:
    """Wait until no process carries ``marker``; the survivors (killed) if some remain."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not processes_with(marker):
            return []
        await asyncio.sleep(0.05)
    survivors = processes_with(marker)
    for pid in survivors:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return survivors


class Recorder:
    """A host side for bindings: records each call, answers from ``answers``."""

    def __init__(self, answers: dict[str, JsonValue] | None = None) -> None:
        self.answers = answers or {}
        self.calls: list[tuple[str, JsonObject]] = []

    async def __call__(self, name: str, arguments: JsonObject) -> JsonValue:
        """Record the call; refuse ``refuse``, answer the rest."""
        self.calls.append((name, arguments))
        if name == "refuse":
            raise BindingRefused("denied", "the host refuses this call")
        return self.answers.get(name, {"tool": name, "arguments": arguments})


class SandboxContract(Suite):
    """Conformance cases every Sandbox backend must pass.

    Attributes (override as class attributes in your subclass):
        kernel_enforced: the backend claims containment; escape cases may not skip.
        limits: the limits the cases run under; small, so the suite is fast and the
            escape cases cannot hurt the machine.
    """

    __test__: ClassVar[bool] = False

    kernel_enforced: ClassVar[bool] = False
    limits: ClassVar[ResolvedLimits] = ResolvedLimits(
        cpu_seconds=2.0,
        wall_seconds=5.0,
        memory_bytes=256 * 1024 * 1024,
        file_size_bytes=8 * 1024 * 1024,
        process_count=64,
        disk_bytes=16 * 1024 * 1024,
    )

    @pytest_asyncio.fixture
    async def sandbox(self) -> AsyncIterator[Sandbox]:
        """Override: yield an opened sandbox, and close it after the test."""
        yield must_override("override the `sandbox` fixture in your SandboxContract subclass")

    # --- helpers ---------------------------------------------------------------------

    def program(self, source: str, **fields: object) -> Program:
        """A program under the suite's limits, unless ``limits`` is given."""
        fields.setdefault("limits", self.limits)
        return Program(source=source, **fields)  # type: ignore[arg-type]

    async def run(
        self, sandbox: Sandbox, source: str, binding: Recorder | None = None, **fields: object
    ) -> Execution:
        """Run ``source`` under the suite's limits; the result must be an ``Execution``."""
        execution = await sandbox.execute(self.program(source, **fields), binding or Recorder())
        assert isinstance(execution, Execution)
        return execution

    def require_quota(self, sandbox: Sandbox) -> None:
        """Skip unless the backend keeps a disk quota (enforced or reported); fail if contained."""
        capabilities = sandbox.capabilities
        if Guarantee.DISK_QUOTA in capabilities.enforced | capabilities.reported:
            return
        if self.kernel_enforced:
            pytest.fail("the backend claims containment but keeps no disk quota")
        pytest.skip("the backend keeps no disk quota")

    def require_scratch(self, sandbox: Sandbox) -> None:
        """Skip unless the program's scratch space is its own; fail if containment is claimed."""
        self.require(
            sandbox,
            Guarantee.PRIVATE_SCRATCH,
            reason="the program shares the host's /tmp, /dev/shm and IPC, so what it "
            "leaves there outlives it and no limit counts it",
        )

    async def assert_stopped_for_disk(
        self, sandbox: Sandbox, source: str, where: str, **fields: object
    ) -> None:
        """Run ``source`` (which stores more than ``disk_bytes``, then waits): ``limit: disk``."""
        execution = await self.run(sandbox, source, None, max_artifacts=0, **fields)
        assert execution.status is ExecutionStatus.LIMIT, (where, execution)
        assert execution.limit == "disk", (where, execution)

    def require_daemons_reaped(self, sandbox: Sandbox) -> str:
        """Skip unless a program's daemons cannot outlive it; a fresh marker to start one by.

        A double-forked daemon leaves the program's process group, so only a backend that
        runs programs as another user or in a process namespace of their own can reap it.
        """
        self.require(
            sandbox,
            Guarantee.UNPRIVILEGED_USER,
            Guarantee.NO_HOST_PROCESSES,
            reason="a double-forked daemon escapes the process group",
        )
        return f"psych-daemon-{uuid.uuid4().hex}"

    def require(self, sandbox: Sandbox, *any_of: Guarantee, reason: str) -> None:
        """Skip unless one of ``any_of`` is enforced; fail instead when containment is claimed."""
        enforced = sandbox.capabilities.enforced
        if any(guarantee in enforced for guarantee in any_of):
            return
        names = " or ".join(g.value for g in any_of)
        if self.kernel_enforced:
            pytest.fail(f"the backend claims containment but does not enforce {names}")
        pytest.skip(f"{reason} (the backend does not enforce {names})")

    # --- the port --------------------------------------------------------------------

    async def test_overridden_cases_are_marked_xfail(self) -> None:
        """A subclass may override a case only to mark it ``xfail(reason=...)``."""
        offenders = overridden_without_xfail(SandboxContract, type(self))
        assert offenders == [], f"overridden without xfail(reason=...): {offenders}"

    async def test_sandbox_satisfies_the_protocol(self, sandbox: Sandbox) -> None:
        """The backend is a ``Sandbox`` and says honestly what it contains.

        Nothing is both enforced and only reported; a separate process is the floor;
        a backend claiming containment has isolation ``contained``.
        """
        assert isinstance(sandbox, Sandbox)
        capabilities = sandbox.capabilities
        assert capabilities.backend
        assert Guarantee.SEPARATE_PROCESS in capabilities.enforced
        assert not capabilities.enforced & capabilities.reported
        if self.kernel_enforced:
            assert capabilities.isolation is Isolation.CONTAINED

    # --- values, output, errors ------------------------------------------------------

    async def test_last_expression_is_the_value(self, sandbox: Sandbox) -> None:
        """Without ``result`` the value is the last expression's."""
        execution = await self.run(sandbox, "x = 20\nx + 22")
        assert execution.status is ExecutionStatus.OK, execution
        assert execution.value == 42

    async def test_result_global_wins(self, sandbox: Sandbox) -> None:
        """A global ``result`` is the value, whatever the last expression is."""
        source = "result = {'a': [1, 'b', None, True, 1.5]}\n7"
        execution = await self.run(sandbox, source)
        assert execution.status is ExecutionStatus.OK, execution
        assert execution.value == {"a": [1, "b", None, True, 1.5]}

    async def test_statement_only_program_is_none(self, sandbox: Sandbox) -> None:
        """A program ending in a statement has the value None."""
        execution = await self.run(sandbox, "x = 1")
        assert execution.status is ExecutionStatus.OK
        assert execution.value is None

    async def test_value_that_is_not_json_is_an_error(self, sandbox: Sandbox) -> None:
        """A value JSON cannot hold is an error that says so, not a crash."""
        execution = await self.run(sandbox, "object()")
        assert execution.status is ExecutionStatus.ERROR
        assert "JSON" in execution.message

    async def test_output_previews_and_byte_counts(self, sandbox: Sandbox) -> None:
        """Stdout and stderr come back as previews with their full byte counts."""
        source = "import sys\nprint('a' * 10000)\nprint('b' * 3000, file=sys.stderr)\n1"
        execution = await self.run(sandbox, source, preview_bytes=256)
        assert execution.status is ExecutionStatus.OK, execution
        assert execution.stdout == "a" * 256
        assert execution.stdout_bytes == 10_001
        assert execution.stderr == "b" * 256
        assert execution.stderr_bytes == 3_001

    async def test_full_output_is_kept_when_asked(self, sandbox: Sandbox) -> None:
        """Asked to, the backend hands back all it captured, not only the previews."""
        source = "import sys\nprint('a' * 10000)\nprint('b' * 3000, file=sys.stderr)\n1"
        kept = await self.run(sandbox, source, preview_bytes=256, keep_full_output=True)
        assert kept.status is ExecutionStatus.OK, kept
        assert kept.stdout == "a" * 256
        assert kept.stdout_full == b"a" * 10_000 + b"\n"
        assert kept.stderr_full == b"b" * 3_000 + b"\n"
        plain = await self.run(sandbox, source, preview_bytes=256)
        assert plain.stdout_full is None and plain.stderr_full is None

    async def test_full_output_stops_at_the_capture_cap(self, sandbox: Sandbox) -> None:
        """Full output is never more than ``max_output_bytes``; short output keeps none."""
        source = "print('c' * 5000)"
        capped = await self.run(
            sandbox, source, preview_bytes=256, max_output_bytes=4_096, keep_full_output=True
        )
        assert capped.status is ExecutionStatus.LIMIT, capped
        assert capped.limit == "output"
        assert capped.stdout_full is not None
        assert capped.stdout_full == b"c" * 4_096
        short = await self.run(sandbox, "print('d')", keep_full_output=True)
        assert short.stdout == "d\n" and short.stdout_full is None

    async def test_traceback_is_data(self, sandbox: Sandbox) -> None:
        """An exception ends the program ``error`` with its traceback, the program's lines only."""
        source = "def f():\n    raise ValueError('boom')\n\nf()"
        execution = await self.run(sandbox, source)
        assert execution.status is ExecutionStatus.ERROR
        assert execution.traceback is not None
        assert "ValueError: boom" in execution.traceback
        assert 'File "<program>", line 2' in execution.traceback
        assert "_runner" not in execution.traceback

    async def test_syntax_error_is_data(self, sandbox: Sandbox) -> None:
        """A program that does not parse is an error with the parser's message."""
        execution = await self.run(sandbox, "def (:")
        assert execution.status is ExecutionStatus.ERROR
        assert execution.traceback is not None and "SyntaxError" in execution.traceback

    # --- bindings --------------------------------------------------------------------

    async def test_binding_is_called_and_answers(self, sandbox: Sandbox) -> None:
        """``tools.<name>(**kw)`` and ``tools.call(name, **kw)`` reach the host and return."""
        recorder = Recorder({"lookup": {"status": "shipped"}})
        source = "a = tools.lookup(order_id='A1')\nb = tools.call('odd-name', n=2)\n[a, b]"
        execution = await self.run(sandbox, source, recorder, bindings=("lookup", "odd-name"))
        assert execution.status is ExecutionStatus.OK, execution
        assert execution.value == [
            {"status": "shipped"},
            {"tool": "odd-name", "arguments": {"n": 2}},
        ]
        assert recorder.calls == [("lookup", {"order_id": "A1"}), ("odd-name", {"n": 2})]
        assert execution.binding_calls == 2

    async def test_refused_binding_raises_in_the_program(self, sandbox: Sandbox) -> None:
        """A ``BindingRefused`` raises inside the program with its kind and message."""
        source = (
            "try:\n    tools.refuse()\nexcept tools.ToolError as error:\n"
            "    result = [error.kind, error.message]"
        )
        execution = await self.run(sandbox, source, bindings=("refuse",))
        assert execution.status is ExecutionStatus.OK, execution
        assert execution.value == ["denied", "the host refuses this call"]
        uncaught = await self.run(sandbox, "tools.refuse()", bindings=("refuse",))
        assert uncaught.status is ExecutionStatus.ERROR
        assert uncaught.traceback is not None and "denied" in uncaught.traceback

    async def test_unbound_tool_never_reaches_the_host(self, sandbox: Sandbox) -> None:
        """A name the program was not given is refused without calling the host."""
        recorder = Recorder()
        source = (
            "try:\n    tools.call('secret')\nexcept tools.ToolError as error:\n"
            "    result = error.kind"
        )
        execution = await self.run(sandbox, source, recorder, bindings=("lookup",))
        assert execution.status is ExecutionStatus.OK, execution
        assert execution.value == "unknown_tool"
        assert recorder.calls == []

    # --- state, workspace, artifacts -------------------------------------------------

    async def test_no_state_between_programs(self, sandbox: Sandbox) -> None:
        """Globals, modules, environment and workspace files do not survive a program."""
        first = (
            "import os, sys\nsys.psych_leftover = 1\nos.environ['LEFTOVER'] = '1'\n"
            "open('leftover.txt', 'w').write('x')\nglobal_leftover = 1"
        )
        assert (await self.run(sandbox, first)).status is ExecutionStatus.OK
        second = (
            "import os, sys\n[hasattr(sys, 'psych_leftover'), 'LEFTOVER' in os.environ, "
            "os.path.exists('leftover.txt'), 'global_leftover' in globals()]"
        )
        execution = await self.run(sandbox, second)
        assert execution.value == [False, False, False, False]

    async def test_artifacts_are_collected_within_limits(self, sandbox: Sandbox) -> None:
        """Files left in the workspace come back, capped in count and bytes."""
        source = (
            "import os\nos.makedirs('out', exist_ok=True)\n"
            "for i in range(3):\n    open(f'out/f{i}.txt', 'w').write(str(i) * 10)\n"
            "open('big.bin', 'wb').write(b'x' * 5000)"
        )
        execution = await self.run(sandbox, source, max_artifacts=3, max_artifact_bytes=1000)
        assert execution.status is ExecutionStatus.OK, execution
        paths = [artifact.path for artifact in execution.artifacts]
        assert paths == ["big.bin", "out/f0.txt", "out/f1.txt"]
        big = execution.artifacts[0]
        assert big.size == 5000 and big.content is None
        assert execution.artifacts[1].content == b"0" * 10
        none = await self.run(sandbox, "open('a.txt', 'w').write('a')", max_artifacts=0)
        assert none.artifacts == ()

    async def test_symlink_artifact_does_not_read_host_files(self, sandbox: Sandbox) -> None:
        """A symlink the program leaves is not followed when artifacts are collected."""
        source = "import os\nos.symlink('/etc/hostname', 'link')\nos.symlink('/etc', 'dir')"
        execution = await self.run(sandbox, source)
        assert execution.status is ExecutionStatus.OK, execution
        assert all(artifact.content is None for artifact in execution.artifacts)
        assert not any(artifact.path.startswith("dir/") for artifact in execution.artifacts)

    async def test_persistent_workspace_is_kept(self, sandbox: Sandbox) -> None:
        """With ``workspace`` set, files stay for the next program and only new ones return."""
        workspace = tempfile.mkdtemp(prefix="psych-contract-ws-")
        try:
            first = await self.run(
                sandbox, "open('kept.txt', 'w').write('kept')", workspace=workspace
            )
            assert first.status is ExecutionStatus.OK, first
            second = await self.run(
                sandbox,
                "open('new.txt', 'w').write('new')\nopen('kept.txt').read()",
                workspace=workspace,
            )
            assert second.value == "kept"
            assert [artifact.path for artifact in second.artifacts] == ["new.txt"]
        finally:
            shutil.rmtree(workspace, ignore_errors=True)

    async def test_cancellation_kills_the_program(self, sandbox: Sandbox) -> None:
        """Cancelling ``execute`` kills the program before the cancellation propagates."""
        marker = f"psych-cancel-{uuid.uuid4().hex}"
        source = f"import os\nos.execv('/bin/sleep', ['{marker}', '30'])"
        limits = ResolvedLimits(wall_seconds=60, cpu_seconds=5, process_count=16)
        program = Program(source=source, limits=limits)
        task = asyncio.create_task(sandbox.execute(program, Recorder()))
        deadline = time.monotonic() + 10
        while not processes_with(marker) and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await _none_left(marker) == []

    # --- the escape matrix -----------------------------------------------------------

    async def test_escape_fork_bomb(self, sandbox: Sandbox) -> None:
        """A fork bomb stops at the process limit; nothing of it survives."""
        self.require(
            sandbox,
            Guarantee.PROCESS_LIMIT,
            reason="without a process limit a fork bomb would take the machine",
        )
        execution = await self.run(sandbox, "import os\nwhile True:\n    os.fork()")
        assert execution.status is ExecutionStatus.LIMIT, execution
        assert execution.limit == "processes"

    async def test_escape_process_limit_is_the_programs(self, sandbox: Sandbox) -> None:
        """The program can hold no more than ``process_count`` processes at once.

        It forks sleeping children until a fork fails (stopping itself at four times
        the limit, so a missing limit cannot hurt the machine) and returns the count.
        """
        self.require(sandbox, Guarantee.PROCESS_LIMIT, reason="no process limit")
        ceiling = 4 * self.limits.process_count
        source = (
            "import os, time\ncount = 0\ntry:\n"
            f"    while count < {ceiling}:\n"
            "        if os.fork() == 0:\n"
            "            time.sleep(30)\n"
            "            os._exit(0)\n"
            "        count += 1\n"
            "except OSError:\n"
            "    pass\n"
            "result = count"
        )
        execution = await self.run(sandbox, source)
        assert execution.status is ExecutionStatus.OK, execution
        assert isinstance(execution.value, int)
        assert 0 < execution.value < self.limits.process_count

    async def test_escape_memory_hog(self, sandbox: Sandbox) -> None:
        """Allocating without end stops at the memory limit."""
        self.require(sandbox, Guarantee.MEMORY_LIMIT, reason="no memory limit")
        source = "chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024 * 1024))"
        execution = await self.run(sandbox, source)
        assert execution.status is ExecutionStatus.LIMIT, execution
        assert execution.limit == "memory"

    async def test_escape_disk_fill(self, sandbox: Sandbox) -> None:
        """Growing a file without end stops at the file-size limit."""
        self.require(sandbox, Guarantee.FILE_SIZE_LIMIT, reason="no file-size limit")
        source = (
            "with open('fill.bin', 'wb') as f:\n    while True:\n        f.write(b'x' * 1048576)"
        )
        execution = await self.run(sandbox, source, max_artifacts=0)
        assert execution.status is ExecutionStatus.LIMIT, execution
        assert execution.limit == "file_size"

    async def test_escape_disk_fill_across_many_files(self, sandbox: Sandbox) -> None:
        """Many files, each under the file-size limit, stop at the workspace quota."""
        self.require_quota(sandbox)
        source = (
            "import time\n"
            "for i in range(64):\n"
            "    with open(f'part{i}.bin', 'wb') as f:\n"
            "        f.write(b'x' * 1048576)\n"
            "time.sleep(60)"
        )
        execution = await self.run(sandbox, source, max_artifacts=0)
        assert execution.status is ExecutionStatus.LIMIT, execution
        assert execution.limit == "disk"

    async def test_escape_endless_sleep_hits_the_wall_clock(self, sandbox: Sandbox) -> None:
        """A program that never ends is killed at the wall-clock limit, promptly."""
        self.require(sandbox, Guarantee.WALL_CLOCK_KILL, reason="no wall-clock kill")
        started = time.monotonic()
        execution = await self.run(sandbox, "import time\nwhile True:\n    time.sleep(0.1)")
        assert execution.status is ExecutionStatus.LIMIT, execution
        assert execution.limit == "wall"
        assert time.monotonic() - started < self.limits.wall_seconds + 4

    async def test_escape_busy_loop_hits_the_cpu_limit(self, sandbox: Sandbox) -> None:
        """A busy loop is stopped by the CPU limit before the wall clock."""
        self.require(sandbox, Guarantee.CPU_LIMIT, reason="no CPU limit")
        execution = await self.run(sandbox, "while True:\n    pass")
        assert execution.status is ExecutionStatus.LIMIT, execution
        assert execution.limit == "cpu"

    async def test_escape_network_to_host_loopback(self, sandbox: Sandbox) -> None:
        """No TCP connection reaches the host: not PostgreSQL's 5432, not a listener here."""
        self.require(
            sandbox,
            Guarantee.NO_NETWORK,
            reason="the network is denied only by convention (NO_NETWORK is reported)",
        )
        accepted: list[bool] = []

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted.append(True)
            writer.close()

        server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        source = (
            "import socket\nresult = []\n"
            f"for port in (5432, {port}):\n"
            "    try:\n"
            "        socket.create_connection(('127.0.0.1', port), timeout=2).close()\n"
            "        result.append('connected')\n"
            "    except OSError as error:\n"
            "        result.append(type(error).__name__)\n"
        )
        try:
            execution = await self.run(sandbox, source)
        finally:
            server.close()
            await server.wait_closed()
        assert execution.status is ExecutionStatus.OK, execution
        assert isinstance(execution.value, list) and "connected" not in execution.value
        assert accepted == []

    async def test_escape_host_environment_secrets(self, sandbox: Sandbox) -> None:
        """The host's environment is not the program's, nor readable through ``/proc``."""
        secret = f"psych-secret-{uuid.uuid4().hex}"
        os.environ["PSYCH_CONTRACT_SECRET"] = secret
        holder = await asyncio.create_subprocess_exec(
            "sleep", "30", env={**os.environ, "PSYCH_CONTRACT_SECRET": secret}
        )
        source = (
            "import os\nseen = [v for v in os.environ.values() if 'psych-secret' in v]\n"
            "for pid in os.listdir('/proc'):\n"
            "    try:\n"
            "        data = open(f'/proc/{pid}/environ', 'rb').read()\n"
            "    except OSError:\n"
            "        continue\n"
            "    if b'psych-secret' in data:\n"
            "        seen.append(pid)\n"
            "seen"
        )
        try:
            execution = await self.run(sandbox, source)
        finally:
            del os.environ["PSYCH_CONTRACT_SECRET"]
            holder.kill()
            await holder.wait()
        assert execution.status is ExecutionStatus.OK, execution
        assert isinstance(execution.value, list)
        in_environment = [item for item in execution.value if item == secret]
        assert in_environment == [], "the host's environment leaked into the program"
        self.require(
            sandbox,
            Guarantee.UNPRIVILEGED_USER,
            Guarantee.NO_HOST_PROCESSES,
            reason="a program running as the host's user can read its /proc/PID/environ",
        )
        assert execution.value == [], "a host process's environment was readable"

    async def test_escape_read_owner_only_host_file(self, sandbox: Sandbox) -> None:
        """A file only the host's user may read (mode 0600, in its home) stays unread."""
        self.require(
            sandbox,
            Guarantee.UNPRIVILEGED_USER,
            Guarantee.NO_HOST_FILES,
            reason="a program running as the host's user can read the host user's files",
        )
        token = uuid.uuid4().hex
        path = Path.home() / f".psych-contract-secret-{uuid.uuid4().hex}"
        path.write_text(token)
        path.chmod(0o600)
        source = f"result = open({str(path)!r}).read()"
        try:
            execution = await self.run(sandbox, source)
        finally:
            path.unlink()
        assert execution.status is ExecutionStatus.ERROR, execution
        assert token not in repr(execution)

    async def test_escape_write_outside_the_workspace(self, sandbox: Sandbox) -> None:
        """A host directory the program's user may not write stays untouched.

        With ``NO_HOST_FILES`` even the world-writable ``/tmp`` is the program's own.
        """
        self.require(
            sandbox,
            Guarantee.UNPRIVILEGED_USER,
            Guarantee.NO_HOST_FILES,
            reason="a program running as the host's user can write wherever the host can",
        )
        target = Path(tempfile.mkdtemp(prefix="psych-contract-ro-"))
        os.chmod(target, 0o755)
        token = uuid.uuid4().hex
        shared = Path(tempfile.gettempdir()) / f"psych-contract-{token}"
        source = (
            "result = []\n"
            f"for path in ({str(target / 'planted')!r}, {str(shared)!r}):\n"
            "    try:\n"
            "        open(path, 'w').write('planted')\n"
            "        result.append('written')\n"
            "    except OSError as error:\n"
            "        result.append(type(error).__name__)\n"
        )
        try:
            execution = await self.run(sandbox, source)
            assert execution.status is ExecutionStatus.OK, execution
            assert not (target / "planted").exists()
            if Guarantee.NO_HOST_FILES in sandbox.capabilities.enforced:
                assert not shared.exists()
        finally:
            shutil.rmtree(target, ignore_errors=True)
            with contextlib.suppress(OSError):
                shared.unlink()

    async def test_escape_kill_the_host(self, sandbox: Sandbox) -> None:
        """Killing its parent or the host's pid fails; this process survives."""
        self.require(
            sandbox,
            Guarantee.UNPRIVILEGED_USER,
            Guarantee.NO_HOST_PROCESSES,
            reason="a program running as the host's user could kill the host",
        )
        source = (
            "import os, signal\nresult = []\n"
            f"for pid in (os.getppid(), {os.getpid()}):\n"
            "    try:\n"
            "        os.kill(pid, signal.SIGKILL)\n"
            "        result.append('sent')\n"
            "    except OSError as error:\n"
            "        result.append(type(error).__name__)\n"
        )
        execution = await self.run(sandbox, source)
        os.kill(os.getpid(), 0)  # still here
        assert execution.status in (ExecutionStatus.OK, ExecutionStatus.ERROR), execution
        follow_up = await self.run(sandbox, "1 + 1")
        assert follow_up.value == 2

    async def test_escape_daemon_left_behind(self, sandbox: Sandbox) -> None:
        """A double-forked, detached daemon does not outlive its program."""
        marker = self.require_daemons_reaped(sandbox)
        execution = await self.run(sandbox, daemon_source(marker, "result = 'detached'"))
        assert execution.status is ExecutionStatus.OK, execution
        assert execution.value == "detached"
        assert killed_survivors(marker) == [], "the daemon survived its program"

    async def test_escape_daemon_outlives_the_wall_clock_kill(self, sandbox: Sandbox) -> None:
        """A detached daemon is gone by the time a wall-clock kill's ``execute`` returns.

        The program starts the daemon, waits until it runs, then never ends; the
        backend must reap everything the program started, not only after a normal exit.
        """
        marker = self.require_daemons_reaped(sandbox)
        source = daemon_source(marker, "while True:\n    time.sleep(0.1)")
        execution = await self.run(sandbox, source)
        survivors = killed_survivors(marker)
        assert execution.status is ExecutionStatus.LIMIT, execution
        assert execution.limit == "wall"
        assert "daemon up" in execution.stdout, "the daemon never started"
        assert survivors == [], "the daemon outlived the wall-clock kill"

    async def test_escape_daemon_outlives_a_cancelled_execute(self, sandbox: Sandbox) -> None:
        """A detached daemon is gone by the time a cancelled ``execute`` has raised.

        The host cancels only once the daemon runs (it waits for the daemon's process),
        so the daemon is certainly there when the cancellation lands.
        """
        marker = self.require_daemons_reaped(sandbox)
        source = daemon_source(marker, "while True:\n    time.sleep(0.1)")
        limits = replace(self.limits, wall_seconds=60)
        task = asyncio.create_task(
            sandbox.execute(Program(source=source, limits=limits), Recorder())
        )
        deadline = time.monotonic() + 30
        while not processes_with(marker) and not task.done():
            assert time.monotonic() < deadline, "the daemon never started"
            await asyncio.sleep(0.02)
        assert not task.done(), task.result()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert killed_survivors(marker) == [], "the daemon outlived the cancelled execute"

    # --- storage outside the workspace ---------------------------------------------------

    async def test_escape_shared_memory_fill(self, sandbox: Sandbox) -> None:
        """Files in ``/dev/shm`` count against ``disk_bytes`` and are gone afterwards."""
        self.require_scratch(sandbox)
        marker = f"psych-shm-{uuid.uuid4().hex}"
        source = fill_source("/dev/shm", marker, 2 * self.limits.disk_bytes)
        try:
            await self.assert_stopped_for_disk(sandbox, source, "/dev/shm")
        finally:
            left = host_leftovers(marker)
        assert left == [], "the program's files stayed in the host's /dev/shm"

    async def test_escape_temporary_directories_fill(self, sandbox: Sandbox) -> None:
        """Files in ``/tmp`` and ``/var/tmp`` count against ``disk_bytes`` and are gone after."""
        self.require_scratch(sandbox)
        marker = f"psych-tmp-{uuid.uuid4().hex}"
        try:
            for directory in ("/tmp", "/var/tmp"):
                probe = await self.run(sandbox, f"import os\nos.path.isdir({directory!r})")
                if probe.value is not True:
                    continue  # the backend has no such directory
                source = fill_source(directory, marker, 2 * self.limits.disk_bytes)
                await self.assert_stopped_for_disk(sandbox, source, directory)
        finally:
            left = host_leftovers(marker)
        assert left == [], "the program's files stayed in the host's temporary directories"

    async def test_escape_every_writable_mount_is_counted(self, sandbox: Sandbox) -> None:
        """Every mount the program can write to counts against ``disk_bytes``.

        The program lists the mounts it sees and tries to create a file in each (``/proc``
        and ``/sys`` aside; its own workspace is ``.``); then each writable one is filled
        on its own, past the quota,
        and must be stopped for it. An uncapped tmpfs (a root or ``/dev`` left writable)
        runs into the wall clock instead.
        """
        self.require_scratch(sandbox)
        marker = f"psych-mount-{uuid.uuid4().hex}"
        discover = (
            "import os\nplaces = []\nseen = set()\n"
            "for line in open('/proc/self/mountinfo'):\n"
            "    point = line.split()[4].replace('\\\\040', ' ')\n"
            "    if point in seen or point.startswith(('/proc', '/sys')):\n"
            "        continue\n"
            "    seen.add(point)\n"
            f"    probe = os.path.join(point, {marker!r})\n"
            "    try:\n"
            "        open(probe, 'wb').close()\n"
            "    except OSError:\n"
            "        continue\n"
            "    os.unlink(probe)\n"
            "    places.append('.' if point == os.getcwd() else point)\n"
            "places"
        )
        try:
            found = await self.run(sandbox, discover)
            assert found.status is ExecutionStatus.OK, found
            assert isinstance(found.value, list) and found.value, found
            for place in found.value:
                assert isinstance(place, str)
                source = fill_source(place, marker, 2 * self.limits.disk_bytes)
                await self.assert_stopped_for_disk(sandbox, source, place)
        finally:
            left = host_leftovers(marker)
        assert left == []

    async def test_escape_quota_spans_every_place(self, sandbox: Sandbox) -> None:
        """The workspace and the scratch space share one quota, ``disk_bytes``.

        Three quarters of the quota in the workspace, and as much again in ``/tmp``:
        neither alone is over, together they are.
        """
        self.require_scratch(sandbox)
        self.require_quota(sandbox)
        half = 3 * self.limits.disk_bytes // 4 // _MIB
        source = (
            "import time\n"
            f"for place in ('.', '/tmp'):\n"
            f"    for i in range({half}):\n"
            "        with open(place + '/part-' + str(i), 'wb') as f:\n"
            f"            f.write(b'x' * {_MIB})\n"
            "time.sleep(60)"
        )
        await self.assert_stopped_for_disk(sandbox, source, "workspace and /tmp")

    async def test_escape_inode_fill(self, sandbox: Sandbox) -> None:
        """Empty files cost inodes: enough of them stop the program at its disk quota.

        Each file, directory or link counts at least 4 KiB; the workspace is tried, and
        ``/tmp`` where the scratch space is the program's own.
        """
        self.require_quota(sandbox)
        places = ["."]
        if Guarantee.PRIVATE_SCRATCH in sandbox.capabilities.enforced:
            places.append("/tmp")
        count = 2 * self.limits.disk_bytes // 4096
        for place in places:
            source = (
                "import os, time\n"
                f"os.makedirs({place!r} + '/inodes', exist_ok=True)\n"
                f"for i in range({count}):\n"
                f"    open({place!r} + '/inodes/' + str(i), 'w').close()\n"
                "time.sleep(60)"
            )
            # Thousands of file creations cost real kernel time, more on a busy host:
            # the CPU and wall limits are raised so that only the disk quota can stop it.
            patient = replace(self.limits, cpu_seconds=30.0, wall_seconds=60.0)
            await self.assert_stopped_for_disk(sandbox, source, place, limits=patient)

    async def test_escape_storage_held_open(self, sandbox: Sandbox) -> None:
        """Files with no name (``memfd_create``, unlinked while open) still count.

        Each stays under the file-size limit; together they pass ``disk_bytes``.
        """
        self.require_quota(sandbox)
        chunks = 2 * self.limits.disk_bytes // _MIB
        memfd = (
            "import os, time\nheld = []\n"
            f"for i in range({chunks}):\n"
            "    fd = os.memfd_create('held-%d' % i)\n"
            f"    os.write(fd, b'x' * {_MIB})\n"
            "    held.append(fd)\n"
            "time.sleep(60)"
        )
        await self.assert_stopped_for_disk(sandbox, memfd, "memfd")
        unlinked = (
            "import os, time\nheld = []\n"
            f"for i in range({chunks}):\n"
            "    f = open('held-%d' % i, 'wb')\n"
            "    os.unlink('held-%d' % i)\n"
            f"    f.write(b'x' * {_MIB})\n"
            "    f.flush()\n"
            "    held.append(f)\n"
            "time.sleep(60)"
        )
        await self.assert_stopped_for_disk(sandbox, unlinked, "unlinked files")

    async def test_escape_system_v_and_message_queues(self, sandbox: Sandbox) -> None:
        """System V segments and POSIX message queues hold no more than ``disk_bytes``.

        They would outlive the program in a shared IPC namespace; the backend must give
        the program its own and cap (or refuse) what it may keep there.
        """
        self.require_scratch(sandbox)
        total = 2 * self.limits.disk_bytes
        source = (
            "import ctypes, os\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "libc.shmat.restype = ctypes.c_void_p\n"
            "kept = 0\n"
            f"while kept < {total}:\n"
            f"    ident = libc.shmget(0, {_MIB}, 0o1600)\n"
            "    if ident < 0:\n"
            "        break\n"
            "    address = libc.shmat(ident, None, 0)\n"
            "    if address in (None, ctypes.c_void_p(-1).value):\n"
            "        break\n"
            f"    ctypes.memset(address, 1, {_MIB})\n"
            "    libc.shmdt(ctypes.c_void_p(address))\n"
            f"    kept += {_MIB}\n"
            "queued = 0\n"
            "mq_open = getattr(libc, 'mq_open', None)\n"
            f"while mq_open is not None and queued < {total}:\n"
            "    name = ('/q-%d' % queued).encode()\n"
            "    if mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, None) < 0:\n"
            "        break\n"
            "    queued += 10 * 8192\n"
            "[kept, queued]"
        )
        execution = await self.run(sandbox, source)
        if execution.status is ExecutionStatus.LIMIT:
            assert execution.limit in ("disk", "memory"), execution
            return
        assert execution.status is ExecutionStatus.OK, execution
        assert isinstance(execution.value, list)
        kept, queued = execution.value
        assert isinstance(kept, int) and isinstance(queued, int)
        assert kept + queued <= self.limits.disk_bytes, execution.value


__all__ = ["Recorder", "SandboxContract", "daemon_source", "processes_with"]
