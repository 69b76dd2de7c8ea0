"""Make sure the database servers the test suite talks to are running.

Idempotent: a server that is already up is left alone. Starts PostgreSQL and MariaDB
the way this machine's packages install them, waits until each accepts connections,
and creates the test databases. Exits non-zero, naming the server, when one cannot be
brought up, so a missing server fails the run instead of skipping tests.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path


def _listening(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _wait(port: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _listening(port):
            return True
        time.sleep(0.2)
    return False


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, check=False)


def ensure_postgres() -> str | None:
    if not _listening(5432):
        versions = (
            sorted(Path("/etc/postgresql").glob("*")) if Path("/etc/postgresql").exists() else []
        )
        if not versions or shutil.which("pg_ctlcluster") is None:
            return "PostgreSQL is not running and pg_ctlcluster is not installed"
        _run("pg_ctlcluster", "--skip-systemctl-redirect", versions[-1].name, "main", "start")
        if not _wait(5432, 30):
            return "PostgreSQL did not start listening on 127.0.0.1:5432"
    exists = _run(
        "psql",
        "-h",
        "127.0.0.1",
        "-U",
        "postgres",
        "-tAc",
        "SELECT 1 FROM pg_database WHERE datname = 'test'",
    )
    if exists.returncode != 0:
        return f"cannot query PostgreSQL: {exists.stderr.strip()}"
    if exists.stdout.strip() != "1":
        made = _run("psql", "-h", "127.0.0.1", "-U", "postgres", "-c", "CREATE DATABASE test")
        if made.returncode != 0:
            return f"cannot create database test: {made.stderr.strip()}"
    return None


def ensure_mariadb() -> str | None:
    if not _listening(3306):
        daemon = "/usr/sbin/mariadbd"
        if not Path(daemon).exists():
            return "MariaDB is not running and /usr/sbin/mariadbd is not installed"
        _run("start-stop-daemon", "--start", "--oknodo", "--background", "--exec", daemon)
        if not _wait(3306, 60):
            return "MariaDB did not start listening on 127.0.0.1:3306"
    client = shutil.which("mariadb") or shutil.which("mysql")
    if client is None:
        return "no mariadb/mysql client to create the test database with"
    made = _run(client, "-h", "127.0.0.1", "-uroot", "-e", "CREATE DATABASE IF NOT EXISTS test")
    if made.returncode != 0:
        return f"cannot create database test: {made.stderr.strip()}"
    return None


def main() -> int:
    if os.environ.get("PSYCH_SKIP_SERVICES") == "1":
        print("services: PSYCH_SKIP_SERVICES=1, leaving servers alone")
        return 0
    problems = [p for p in (ensure_postgres(), ensure_mariadb()) if p]
    for problem in problems:
        print(f"services: {problem}", file=sys.stderr)
    if not problems:
        print("services: PostgreSQL and MariaDB are up, database 'test' exists on both")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
