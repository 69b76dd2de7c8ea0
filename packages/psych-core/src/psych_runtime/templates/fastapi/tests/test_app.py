"""The routes, driven through httpx's ASGI transport, with a Worker in or out of process."""

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import httpx
import psych_runtime

from agent import build_model
from app import create_app
from worker import build_worker

PROJECT = Path(__file__).resolve().parents[1]
ANSWER = "It is sunny in Lisbon today, with a high of 24 C."


def parse_events(body: str) -> list[dict[str, str]]:
    """Split a text/event-stream body into its events' fields."""
    events = []
    for block in body.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append(fields)
    return events


async def ask_over_http(store: psych_runtime.Store) -> tuple[str, list[dict[str, str]]]:
    transport = httpx.ASGITransport(app=create_app(store))
    async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
        started = await client.post("/runs", json={"message": "Weather in Lisbon?"})
        assert started.status_code == 202
        run_id = started.json()["run_id"]
        streamed = await client.get(f"/runs/{run_id}/events", timeout=60)
        assert streamed.headers["content-type"].startswith("text/event-stream")
        status = (await client.get(f"/runs/{run_id}")).json()
        assert status["terminal_state"] == "completed"
        missing = await client.get("/runs/run_missing")
        assert missing.status_code == 404
    return run_id, parse_events(streamed.text)


def check_events(events: list[dict[str, str]]) -> None:
    kinds = [event["event"] for event in events]
    assert kinds[0] == "run_admitted"
    assert kinds[-1] == "run_settled"
    assert [int(event["id"]) for event in events] == list(range(1, len(events) + 1))
    finished = [json.loads(e["data"]) for e in events if e["event"] == "model_call_finished"]
    assert finished[-1]["text"] == ANSWER
    tools = [json.loads(e["data"]) for e in events if e["event"] == "tool_call_finished"]
    assert [tool["outcome"] for tool in tools] == ["ok"]


async def test_dispatch_and_stream_with_an_in_process_worker() -> None:
    store = psych_runtime.InMemoryStore()
    worker = build_worker(store, build_model(conversations=1))
    working = asyncio.create_task(worker.run())
    try:
        _, events = await ask_over_http(store)
    finally:
        worker.request_stop()
        await working
    check_events(events)


async def test_dispatch_and_stream_with_a_separate_worker_process(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    env = {**os.environ, "PSYCH_STORE_URL": url}
    store = await psych_runtime.open_store(url, migrate=True)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "worker.py",
        cwd=PROJECT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        ready = await asyncio.wait_for(process.stdout.readline(), 60)
        assert ready.decode().strip() == "worker ready"
        _, events = await ask_over_http(store)
        check_events(events)
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(process.communicate(), 60)
        await store.close()
    assert process.returncode == 0, err.decode()
