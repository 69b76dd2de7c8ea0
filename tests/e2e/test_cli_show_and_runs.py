"""``psych show`` and ``psych runs`` read Runs that a real Worker wrote to a real store.

The Worker runs in this process (a ``session()``); the CLI is driven both in-process
(``main([...])``, in a thread because it starts its own event loop) and as the
installed ``psych`` console script in a subprocess.
"""

import asyncio
import contextlib
import os
import sqlite3
import sys
from decimal import Decimal
from pathlib import Path

import pytest

import psych_runtime
from psych_runtime.cli.main import main
from psych_runtime.records import Cost
from psych_runtime.records import Usage
from psych_runtime.testing import FakeModel

from .conftest import DURABLE


async def check_stock(sku: str) -> dict[str, int | str]:
    """Count the units of one product in stock."""
    return {"sku": sku, "units": 42}


async def broken_lookup(sku: str) -> str:
    """Look a product up in a catalogue that is down."""
    raise RuntimeError(f"catalogue unavailable for {sku}")


SPEC = psych_runtime.AgentSpec(
    name="storefront", model="gpt-4o-mini", tools=("check_stock", "broken_lookup")
)


def scripted() -> FakeModel:
    return (
        FakeModel()
        .turn(
            tool_calls=[("broken_lookup", {"sku": "LAMP-7"})],
            usage=Usage(input=100, output=10),
            cost=Cost(amount=Decimal("0.0010")),
        )
        .turn(
            tool_calls=[("check_stock", {"sku": "LAMP-7"})],
            usage=Usage(input=150, output=12),
            cost=Cost(amount=Decimal("0.0020")),
        )
        .turn(
            text="Yes: 42 units of LAMP-7.",
            usage=Usage(input=200, output=9),
            cost=Cost(amount=Decimal("0.0030")),
        )
    )


async def cli(*argv: str) -> int:
    return await asyncio.to_thread(main, list(argv))


async def finished_run(url: str, tenant: str = "default") -> str:
    scope = psych_runtime.Scope(tenant=tenant)
    async with psych_runtime.session(
        scripted(), tools=[check_stock, broken_lookup], store=url, scope=scope
    ) as s:
        reply = await s.ask(SPEC, "Is LAMP-7 in stock?")
        assert reply.finished
        return reply.run_id


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_show_renders_a_finished_run(kind, store_url_for, capsys):
    url = await store_url_for(kind)
    run_id = await finished_run(url)

    assert await cli("show", run_id, "--store", url) == 0

    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == f"Run {run_id}"
    assert "  agent:   storefront (version " in out
    assert "  tenant:  default" in out
    assert any(
        line.endswith('admitted  input {"message": "Is LAMP-7 in stock?"}') for line in lines
    )
    assert (
        sum(
            "turn " in line and line.strip().endswith(("turn 1", "turn 2", "turn 3"))
            for line in lines
        )
        == 3
    )
    assert "model gpt-4o-mini, tokens 100 in / 10 out, cost USD 0.001," in out
    assert "finish tool_calls" in out
    assert 'tool broken_lookup {"sku": "LAMP-7"} started' in out
    assert "tool broken_lookup -> error in " in out
    assert "catalogue unavailable for LAMP-7" in out
    assert "tool check_stock -> ok in " in out
    assert '{"sku": "LAMP-7", "units": 42}' in out
    assert "finish stop: Yes: 42 units of LAMP-7." in out
    assert 'settled completed: {"text": "Yes: 42 units of LAMP-7."}' in out
    assert "Totals: 3 model call(s), 2 tool call(s), tokens 450 in / 31 out, cost USD 0.006" in out
    # The timeline keeps the log's order.
    order = [
        next(i for i, line in enumerate(lines) if marker in line)
        for marker in ("admitted", "broken_lookup -> error", "check_stock -> ok", "settled")
    ]
    assert order == sorted(order)


async def test_show_checks_the_tenant_and_the_run_id(store_url_for, capsys):
    url = await store_url_for("sqlite")
    run_id = await finished_run(url, tenant="shop-a")

    assert await cli("show", run_id, "--store", url, "--tenant", "shop-b") == 1
    assert "another tenant" in capsys.readouterr().err
    assert await cli("show", "run_missing", "--store", url) == 1
    assert "not found" in capsys.readouterr().err
    assert await cli("show", run_id, "--store", url, "--tenant", "shop-a") == 0
    assert "settled completed" in capsys.readouterr().out


async def test_show_latest_is_the_newest_run_of_the_store_or_the_tenant(store_url_for, capsys):
    url = await store_url_for("sqlite")
    assert await cli("show", "latest", "--store", url) == 1
    assert "there is no Run in this store yet" in capsys.readouterr().err
    first = await finished_run(url, tenant="shop-a")
    second = await finished_run(url, tenant="shop-b")

    assert await cli("show", "latest", "--store", url) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"Run {second}"
    assert await cli("show", "latest", "--store", url, "--tenant", "shop-a") == 0
    assert capsys.readouterr().out.splitlines()[0] == f"Run {first}"
    assert await cli("show", "latest", "--store", url, "--tenant", "shop-c") == 1
    assert "no Run of tenant 'shop-c' in this store yet" in capsys.readouterr().err


def _dump(path: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(path)) as database:
        return list(database.iterdump())


async def test_runs_show_and_doctor_change_nothing_in_the_store(tmp_path, capsys):
    path = tmp_path / "runs.db"
    url = f"sqlite:///{path}"
    run_id = await finished_run(url)
    before = _dump(path)

    for argv in (
        ["runs", "--store", url],
        ["show", run_id, "--store", url],
        ["show", "latest", "--store", url, "--tenant", "default"],
        ["doctor", "--store", url],
    ):
        assert await cli(*argv) == 0, argv
    capsys.readouterr()

    assert _dump(path) == before


async def test_show_and_runs_refuse_a_missing_sqlite_file_without_creating_it(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'typo.db'}"

    assert await cli("show", "run_x", "--store", url) == 1
    assert await cli("runs", "--store", url) == 1

    assert "no database file" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", DURABLE)
async def test_runs_lists_newest_first_with_state_cost_and_agent(kind, store_url_for, capsys):
    url = await store_url_for(kind)
    first = await finished_run(url, tenant="shop-a")
    second = await finished_run(url, tenant="shop-b")
    third = await finished_run(url, tenant="shop-a")

    assert await cli("runs", "--store", url) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["RUN", "ID", "STATE", "AGE", "COST", "TENANT", "AGENT@VERSION"]
    assert [line.split()[0] for line in lines[1:]] == [third, second, first]
    cells = lines[1].split()
    assert cells[1:3] == ["settled", "(completed)"]
    assert cells[4:6] == ["USD", "0.006"]
    assert cells[6] == "shop-a"
    assert cells[7].startswith("storefront@")

    assert await cli("runs", "--store", url, "--tenant", "shop-a", "--limit", "1") == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]] == [third]

    assert await cli("runs", "--store", url, "--state", "running", "--state", "suspended") == 0
    assert capsys.readouterr().out.strip() == "No Runs found."


async def test_runs_rejects_a_bad_limit(capsys):
    assert await cli("runs", "--store", "memory://", "--limit", "0") == 1
    assert "--limit" in capsys.readouterr().err


async def test_follow_tails_a_live_run_through_the_console_script(store_url_for):
    """A real ``psych`` process follows a Run whose tool is still running when it starts."""
    url = await store_url_for("sqlite")
    started = asyncio.Event()
    release = asyncio.Event()

    async def slow_search(query: str) -> str:
        """Search the catalogue slowly."""
        started.set()
        await release.wait()
        return f"found {query}"

    spec = psych_runtime.AgentSpec(name="searcher", model="gpt-4o-mini", tools=("slow_search",))
    model = (
        FakeModel()
        .turn(tool_calls=[("slow_search", {"query": "lamps"})], usage=Usage(input=5, output=2))
        .turn(text="Found lamps.", usage=Usage(input=9, output=3))
    )
    script = Path(sys.executable).with_name("psych")
    async with psych_runtime.session(model, tools=[slow_search], store=url) as s:
        run = await s.dispatch(spec, "find lamps")
        await asyncio.wait_for(started.wait(), 60)
        follower = await asyncio.create_subprocess_exec(
            str(script),
            "show",
            run.run_id,
            "--store",
            url,
            "--follow",
            "--poll",
            "0.05",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "NO_COLOR": "1"},
        )
        assert follower.stdout is not None
        seen: list[str] = []
        try:
            while not any("tool slow_search" in line and "started" in line for line in seen):
                raw = await asyncio.wait_for(follower.stdout.readline(), 60)
                assert raw, f"psych show exited early: {seen}"
                seen.append(raw.decode())
            # The Run is still live: its tool has not returned and nothing settled it.
            assert not any("settled" in line for line in seen)
            assert (await s.status(run.run_id)).terminal_state is None
            release.set()
            rest, err = await asyncio.wait_for(follower.communicate(), 60)
        finally:
            if follower.returncode is None:
                follower.kill()
                await follower.wait()
    out = "".join(seen) + rest.decode()
    assert follower.returncode == 0, err.decode()
    assert "tool slow_search -> ok in " in out
    assert '"found lamps"' in out
    assert "settled completed" in out
    assert "Totals: 2 model call(s), 1 tool call(s), tokens 14 in / 5 out" in out
    assert "\x1b[" not in out


async def test_follow_in_process_prints_records_as_they_land(store_url_for, capsys):
    """``main(["show", ..., "--follow"])`` returns only once the live Run settles."""
    url = await store_url_for("postgres")
    release = asyncio.Event()
    started = asyncio.Event()

    async def slow_search(query: str) -> str:
        """Search the catalogue slowly."""
        started.set()
        await release.wait()
        return f"found {query}"

    spec = psych_runtime.AgentSpec(name="searcher", model="gpt-4o-mini", tools=("slow_search",))
    model = (
        FakeModel().turn(tool_calls=[("slow_search", {"query": "desks"})]).turn(text="Found desks.")
    )
    async with psych_runtime.session(model, tools=[slow_search], store=url) as s:
        run = await s.dispatch(spec, "find desks")
        await asyncio.wait_for(started.wait(), 60)
        follow = asyncio.create_task(
            cli("show", run.run_id, "--store", url, "--follow", "--poll", "0.05")
        )
        printed = ""
        while "tool slow_search" not in printed:
            await asyncio.sleep(0.02)
            printed += capsys.readouterr().out
            assert not follow.done(), printed
        assert "settled" not in printed
        # Without --follow the same Run is shown as it stands, and said to be unsettled.
        assert await cli("show", run.run_id, "--store", url) == 0
        snapshot = capsys.readouterr().out
        printed += snapshot.split(f"Run {run.run_id}")[0]  # the follower's lines, if any
        assert "Not settled yet (state running); use --follow" in snapshot
        assert "tool slow_search" in snapshot
        release.set()
        assert await asyncio.wait_for(follow, 60) == 0
    printed += capsys.readouterr().out
    assert "tool slow_search -> ok" in printed
    assert "settled completed: " in printed
