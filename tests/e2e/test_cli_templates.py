"""Every ``psych new`` template writes a project whose own tests pass and that runs.

Each project is generated into a temporary directory and its tests are run by pytest in
a subprocess with this interpreter, exactly as a developer would after ``psych new``.
"""

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from psych_runtime.cli.main import main
from psych_runtime.cli.new import available_templates


def clean_env(**extra: str) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.endswith("API_KEY") and not name.startswith("PSYCH_")
    }
    env.pop("PYTEST_ADDOPTS", None)
    return {**env, **extra}


def generate(tmp_path: Path, template: str) -> Path:
    target = tmp_path / f"{template}-project"
    assert main(["new", str(target), "--template", template]) == 0
    return target


def test_the_templates_on_offer():
    assert available_templates() == ["fastapi", "minimal", "tour"]


@pytest.mark.parametrize("template", ["minimal", "tour", "fastapi"])
def test_the_generated_project_passes_its_own_tests(template, tmp_path, capsys):
    project = generate(tmp_path, template)
    capsys.readouterr()

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=project,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout
    assert " failed" not in done.stdout
    # pytest-asyncio is installed here, as in the development environment: a project
    # that leaves its settings unset gets a deprecation warning on every run.
    assert "warning" not in (done.stdout + done.stderr).lower(), done.stdout + done.stderr


def test_the_tour_runs_and_keeps_its_runs_for_psych_show(tmp_path, capsys):
    project = generate(tmp_path, "tour")
    capsys.readouterr()

    done = subprocess.run(
        [sys.executable, "main.py"],
        cwd=project,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "answer: PS207 at 17:40 is the cheapest flight, at 99 EUR."
    assert "waiting for approval: book_flight" in lines[1]
    assert lines[2] == "answer: Booked: PS207, booking BK-5521."
    [show] = [line.split() for line in lines if line.strip().startswith("psych show")]
    url = f"sqlite:///{project / 'tour.db'}"
    assert main(["show", show[2], "--store", url]) == 0
    out = capsys.readouterr().out
    assert "suspended, waiting on approval for tool book_flight" in out
    assert "resumed approved by supervisor@example.com" in out
    assert "settled completed" in out


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_the_fastapi_project_serves_with_uvicorn_and_a_worker_process(tmp_path, capsys):
    project = generate(tmp_path, "fastapi")
    capsys.readouterr()
    url = f"sqlite:///{tmp_path / 'service.db'}"
    env = clean_env(PSYCH_STORE_URL=url)
    port = free_port()
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "uvicorn",
        "app:app",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        cwd=project,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    worker = await asyncio.create_subprocess_exec(
        sys.executable,
        "worker.py",
        cwd=project,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert worker.stdout is not None
        assert (await asyncio.wait_for(worker.stdout.readline(), 60)).strip() == b"worker ready"
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            for _ in range(600):
                try:
                    started = await client.post("/runs", json={"message": "Weather?"})
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.1)
            else:
                pytest.fail("uvicorn did not start")
            assert started.status_code == 202
            run_id = started.json()["run_id"]
            kinds = []
            async with client.stream("GET", f"/runs/{run_id}/events") as events:
                async for line in events.aiter_lines():
                    if line.startswith("event: "):
                        kinds.append(line.removeprefix("event: "))
            status = (await client.get(f"/runs/{run_id}")).json()
    finally:
        for process in (server, worker):
            if process.returncode is None:
                process.terminate()
            await asyncio.wait_for(process.communicate(), 60)
    assert kinds[0] == "run_admitted"
    assert "tool_call_finished" in kinds
    assert kinds[-1] == "run_settled"
    assert status["terminal_state"] == "completed"
    assert worker.returncode == 0
