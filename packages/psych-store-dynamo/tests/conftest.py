"""Fixtures shared by this package's tests: a real moto server and throwaway tables.

The tests that need AWS talk to a ``moto_server`` process these fixtures start on
127.0.0.1 (a free port) and stop at the end of the session. The server is required,
never optional: when it cannot start, every test that needs it fails rather than being
skipped, so a broken setup can never pass as green.

Credentials are fake and set for the whole session, and the shared AWS config files
are pointed away, so nothing here can reach (or bill) a real account.
"""

import asyncio
import importlib
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from psych_contract import _data as data
from psych_runtime.adapters import RunHeader
from psych_runtime.records import EntryId
from psych_runtime.records import QueueEnqueued
from psych_runtime.records import QueueKind
from psych_runtime.records import Record
from psych_store_dynamo import DynamoStore
from psych_store_dynamo import S3BlobStore
from psych_store_dynamo._database import DynamoDatabase

REGION = "us-east-1"
START_TIMEOUT = 30.0

FAKE_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_SECURITY_TOKEN": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_EC2_METADATA_DISABLED": "true",
}

StoreFactory = Callable[..., Awaitable[DynamoStore]]
Call = Callable[..., Awaitable[dict[str, object]]]


class ClientSpy:
    """The real DynamoDB client, counting and keeping every request, with stand-ins.

    ``stand_ins`` maps an operation to a function called as ``stand_in(real, **request)``
    instead of the real call.
    """

    def __init__(self, client: object) -> None:
        self.client = client
        self.calls: Counter[str] = Counter()
        self.requests: list[tuple[str, dict[str, object]]] = []
        self.stand_ins: dict[str, Call] = {}

    def __getattr__(self, name: str) -> Call:
        method: Call = getattr(self.client, name)

        async def call(**request: object) -> dict[str, object]:
            self.calls[name] += 1
            self.requests.append((name, request))
            stand_in = self.stand_ins.get(name)
            if stand_in is not None:
                return await stand_in(method, **request)
            return await method(**request)

        return call

    @property
    def indexed_queries(self) -> int:
        """How many of the requests kept are queries of an index."""
        return sum(name == "query" and "IndexName" in req for name, req in self.requests)

    def take(self) -> Counter[str]:
        """The calls counted since the last ``take``; the requests kept are dropped too."""
        calls, self.calls = self.calls, Counter()
        self.requests = []
        return calls


async def spy_on(database: DynamoDatabase) -> ClientSpy:
    """Put a ``ClientSpy`` between ``database`` and DynamoDB, after its schema check."""
    await database.connect()  # the one-time schema check is not part of any count
    table = await database._open()
    spy = ClientSpy(table.client)
    table.client = spy  # type: ignore[assignment]
    return spy


@pytest.fixture(scope="session", autouse=True)
def fake_aws_credentials() -> Iterator[None]:
    """Fake credentials for every test of this package, real ones hidden."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("AWS_PROFILE", raising=False)
        for name, value in FAKE_AWS_ENV.items():
            patch.setenv(name, value)
        yield


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _moto_command(port: int) -> list[str]:
    """moto's server on 127.0.0.1:port, processing one request at a time.

    See ``moto_serial.py`` for why ``moto_server`` itself is not started directly: its
    request threads can both pass one conditional write, which real DynamoDB never
    allows and the contention cases would (rightly) report.
    """
    launcher = Path(__file__).with_name("moto_serial.py")
    return [sys.executable, str(launcher), "-H", "127.0.0.1", "-p", str(port)]


def _answers(endpoint: str) -> bool:
    try:
        with urllib.request.urlopen(f"{endpoint}/moto-api/reset", data=b"", timeout=1) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="session")
def moto_endpoint(fake_aws_credentials: None) -> Iterator[str]:
    """Start ``moto_server`` for the session and return its URL; fail if it cannot start."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        try:
            process = subprocess.Popen(
                _moto_command(port), stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy()
            )
        except OSError as exc:
            pytest.fail(f"moto's server could not be started ({exc}); install moto[server]")
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while not _answers(endpoint):
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    output = log.read().decode(errors="replace")[-2000:]
                    pytest.fail(
                        f"moto's server did not come up on {endpoint} within "
                        f"{START_TIMEOUT:g} s (exit code {process.poll()}); its output:\n{output}"
                    )
                time.sleep(0.1)
            yield endpoint
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def queued_text(run: RunHeader, seq: int, text_bytes: int) -> Record:
    """A queued message carrying ``text_bytes`` of text (its JSON is a little bigger)."""
    return QueueEnqueued(
        run_id=run.run_id,
        seq=seq,
        at=data.at(seq),
        scope=run.scope,
        queue=QueueKind.STEER,
        entry_id=EntryId(f"entry-{seq}"),
        payload={"text": "x" * text_bytes},
    )


def new_table_name() -> str:
    """A table name no other test uses."""
    return f"psych-test-{secrets.token_hex(6)}"


def dynamo_url(endpoint: str, table: str) -> str:
    return f"dynamodb://{table}?region={REGION}&endpoint_url={endpoint}"


@pytest.fixture
def table_url(moto_endpoint: str) -> str:
    """The URL of a fresh table name (the table itself is not created)."""
    return dynamo_url(moto_endpoint, new_table_name())


@pytest_asyncio.fixture
async def make_store(table_url: str) -> AsyncIterator[StoreFactory]:
    """Build stores on the test's table; all are closed and the table dropped afterwards."""
    made: list[DynamoStore] = []

    async def make(*, migrate: bool = True, url: str | None = None) -> DynamoStore:
        store = DynamoStore(url or table_url)
        made.append(store)
        if migrate:
            await store.migrate()
        return store

    yield make
    cleaner = DynamoStore(table_url)
    try:
        await cleaner.drop_table()
    finally:
        await cleaner.close()
        await asyncio.gather(*(store.close() for store in made))


async def make_bucket(endpoint: str, bucket: str) -> None:
    """Create an S3 bucket on the moto server through the driver the package uses."""
    aioboto3 = importlib.import_module("aioboto3")
    session = aioboto3.Session()
    async with session.client("s3", region_name=REGION, endpoint_url=endpoint) as client:
        await client.create_bucket(Bucket=bucket)


@pytest_asyncio.fixture
async def bucket(moto_endpoint: str) -> str:
    """A fresh, empty bucket on the moto server."""
    name = f"psych-test-{secrets.token_hex(6)}"
    await make_bucket(moto_endpoint, name)
    return name


def s3_url(endpoint: str, bucket: str, prefix: str = "psych/blobs") -> str:
    return f"s3://{bucket}/{prefix}?region={REGION}&endpoint_url={endpoint}"


@pytest_asyncio.fixture
async def s3_store(moto_endpoint: str, bucket: str) -> AsyncIterator[S3BlobStore]:
    """An S3 blob store under a prefix of a fresh bucket."""
    store = S3BlobStore(s3_url(moto_endpoint, bucket))
    yield store
    await store.close()
