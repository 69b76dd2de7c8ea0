"""Several store instances, and several processes, on one database file.

The contract suite runs against one instance. These cases put two (or two processes)
on the same file, which is how Workers on one machine share SQLite: each instance has
its own writer connection, so every race here is settled by the file's lock.
"""

import asyncio
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
import pytest_asyncio

from psych_contract import _data as data
from psych_contract.lifecycle import closing
from psych_runtime import RunId
from psych_runtime.adapters import SeqConflict
from psych_runtime.records import WorkerId
from psych_store_sqlite import SqliteStore
from psych_store_sqlite import schema

RUNS = 50
LEASE = 3600.0


@pytest_asyncio.fixture
async def pair(tmp_path: Path) -> AsyncIterator[tuple[SqliteStore, SqliteStore]]:
    url = f"sqlite:///{tmp_path}/shared.db"
    async with AsyncExitStack() as stack:
        first, second = SqliteStore(url), SqliteStore(url)
        stack.push_async_callback(first.close)
        stack.push_async_callback(second.close)
        await first.migrate()
        yield first, second


async def test_two_instances_racing_claims_take_every_run_exactly_once(
    pair: tuple[SqliteStore, SqliteStore],
) -> None:
    first, second = pair
    runs = [await first.create_run(*data.admission(created_at=data.at(i))) for i in range(RUNS)]
    # Open both writers before the race, so neither starts late.
    await first.renew(runs[0].header.run_id, WorkerId("nobody"), data.at(0), LEASE)
    await second.renew(runs[0].header.run_id, WorkerId("nobody"), data.at(0), LEASE)

    async def drain(store: SqliteStore, worker: WorkerId) -> list[RunId]:
        taken: list[RunId] = []
        while (header := await store.claim(worker, data.at(1000), LEASE)) is not None:
            taken.append(header.run_id)
            # A Worker does something with its Run before claiming again; without any
            # pause one instance can hold the file's lock back to back while the other
            # sleeps in SQLite's busy handler, and the race would be one-sided.
            await asyncio.sleep(0.002)
        return taken

    drains = [drain(pair[i % 2], WorkerId(f"racer-{i}")) for i in range(8)]
    results = await asyncio.gather(*drains)
    taken = [run_id for part in results for run_id in part]
    assert sorted(taken) == sorted(admission.header.run_id for admission in runs)
    by_instance = [sum(len(part) for part in results[i::2]) for i in range(2)]
    assert all(count > 0 for count in by_instance), by_instance
    for admission in runs:
        header = await second.get_run(admission.header.run_id)
        assert header is not None
        assert header.attempt_count == 1


async def test_two_instances_racing_appends_at_one_seq_leave_one_batch(
    pair: tuple[SqliteStore, SqliteStore],
) -> None:
    first, second = pair
    run = (await first.create_run(*data.admission())).header
    batches = [
        [data.consumer_record(run, seq, note=f"writer {i}") for seq in (2, 3, 4)] for i in range(6)
    ]
    outcomes = await asyncio.gather(
        *(pair[i % 2].append(run.run_id, 2, batch) for i, batch in enumerate(batches)),
        return_exceptions=True,
    )
    winners = [i for i, outcome in enumerate(outcomes) if outcome is None]
    assert len(winners) == 1, outcomes
    assert all(isinstance(o, SeqConflict) for o in outcomes if o is not None), outcomes
    assert await second.read(run.run_id, after=1) == batches[winners[0]]
    assert await first.head(run.run_id) == 4


async def test_an_instance_reads_what_another_committed(
    pair: tuple[SqliteStore, SqliteStore],
) -> None:
    first, second = pair
    run = (await first.create_run(*data.admission())).header
    for seq in range(2, 12):
        await first.append(run.run_id, seq, data.batch(run, seq, 1))
        assert await second.head(run.run_id) == seq


# --- real processes --------------------------------------------------------------------

_CLAIMER = textwrap.dedent(
    """
    import asyncio, sys, time
    from psych_contract import _data as data
    from psych_runtime.adapters import Fence, RunState
    from psych_runtime.records import WorkerId
    from psych_store_sqlite import SqliteStore

    async def main(url, worker_name, seconds):
        worker = WorkerId(worker_name)
        store = SqliteStore(url)
        await store.connect()
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline:
                header = await store.claim(worker, data.at(1000), 3600)
                if header is None:
                    await asyncio.sleep(0.005)
                    continue
                fence = Fence(worker, header.attempt_count)
                await store.append(header.run_id, 2, data.batch(header, 2, 1), fence=fence)
                await store.release(header.run_id, worker, RunState.SETTLED)
                print("claimed", header.run_id, header.attempt_count, flush=True)
                await asyncio.sleep(0.01)
        finally:
            await store.close()

    asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3])))
    """
)

_MIGRATOR = textwrap.dedent(
    """
    import asyncio, sys
    from psych_store_sqlite import SqliteStore

    async def main(url):
        store = SqliteStore(url)
        await store.connect()
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        try:
            print("applied", ",".join(map(str, await store.migrate())), flush=True)
        finally:
            await store.close()

    asyncio.run(main(sys.argv[1]))
    """
)


async def _run_together(script: str, argument_lists: list[list[str]]) -> list[tuple[str, str]]:
    """Start one process per argument list, release them at once, return (stdout, stderr)."""
    processes = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            script,
            *arguments,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for arguments in argument_lists
    ]
    try:
        for process in processes:
            assert process.stdout is not None
            line = await asyncio.wait_for(process.stdout.readline(), timeout=60)
            assert line == b"ready\n", line
        for process in processes:
            assert process.stdin is not None
            process.stdin.write(b"go\n")
        outputs = await asyncio.wait_for(
            asyncio.gather(*(process.communicate() for process in processes)), timeout=120
        )
    finally:
        for process in processes:
            if process.returncode is None:
                process.kill()
                await process.wait()
    results: list[tuple[str, str]] = []
    for process, (out, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err.decode()
        results.append((out.decode(), err.decode()))
    return results


@pytest.mark.slow
async def test_two_processes_claiming_from_one_file_take_every_run_exactly_once(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path}/shared.db"
    async with closing(SqliteStore(url)) as store:
        await store.migrate()
        runs = [
            (await store.create_run(*data.admission(created_at=data.at(i)))).header.run_id
            for i in range(RUNS)
        ]
    results = await _run_together(_CLAIMER, [[url, "proc-a", "2.5"], [url, "proc-b", "2.5"]])
    claims_per_process: list[list[str]] = []
    for out, err in results:
        assert "locked" not in err, err
        assert "Traceback" not in err, err
        # "ready" was read before the start signal; what is left is one line per claim.
        lines = [line.split() for line in out.splitlines()]
        assert all(parts[0] == "claimed" and parts[2] == "1" for parts in lines), out
        claims_per_process.append([parts[1] for parts in lines])
    claimed = [run_id for part in claims_per_process for run_id in part]
    assert sorted(claimed) == sorted(runs), "a Run was claimed twice, or not at all"
    assert all(part for part in claims_per_process), "one process never won a claim"
    async with closing(SqliteStore(url)) as check:
        for run_id in runs:
            header = await check.get_run(run_id)
            assert header is not None
            assert (header.state.value, header.attempt_count) == ("settled", 1)
            assert await check.head(run_id) == 2


@pytest.mark.slow
async def test_two_processes_migrating_at_once_apply_the_schema_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/fresh.db"
    results = await _run_together(_MIGRATOR, [[url], [url], [url]])
    applied = sorted(out.splitlines()[-1] for out, _ in results)
    everything = ",".join(map(str, range(1, schema.SCHEMA_VERSION + 1)))
    assert applied == ["applied ", "applied ", f"applied {everything}"]
    for _, err in results:
        assert "locked" not in err, err
