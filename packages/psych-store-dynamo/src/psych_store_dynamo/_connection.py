"""The one place that touches aioboto3 and botocore.

The driver is imported here, on first use, never at module import: psych-runtime loads
every installed plugin when it first looks for backends, and aioboto3 with botocore
costs a noticeable fraction of a second to import.

Neither library ships type information, so clients are seen through small protocols
naming only the calls this package makes; every response is a mapping whose values
the callers check before use. Driver errors are translated by ``errors`` into the few
outcomes the stores care about, so no botocore class leaks out of the package.
"""

import asyncio
import importlib
import io
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import AsyncExitStack
from types import ModuleType
from typing import Protocol
from typing import cast

from psych_runtime import StoreError
from psych_runtime import StoreUnavailable
from psych_store_dynamo.errors import translate
from psych_store_dynamo.settings import AwsSettings

Response = dict[str, object]
"""A decoded response of one API call, checked field by field by its caller."""


class DynamoClient(Protocol):
    """The DynamoDB calls this package makes, with botocore's keyword arguments."""

    async def get_item(self, **request: object) -> Response: ...
    async def put_item(self, **request: object) -> Response: ...
    async def update_item(self, **request: object) -> Response: ...
    async def delete_item(self, **request: object) -> Response: ...
    async def query(self, **request: object) -> Response: ...
    async def scan(self, **request: object) -> Response: ...
    async def batch_get_item(self, **request: object) -> Response: ...
    async def batch_write_item(self, **request: object) -> Response: ...
    async def transact_write_items(self, **request: object) -> Response: ...
    async def create_table(self, **request: object) -> Response: ...
    async def update_table(self, **request: object) -> Response: ...
    async def describe_table(self, **request: object) -> Response: ...
    async def delete_table(self, **request: object) -> Response: ...


class S3Body(Protocol):
    """The streaming body of a GetObject response; leaving it releases the connection."""

    async def read(self) -> bytes: ...
    async def __aenter__(self) -> object: ...
    async def __aexit__(self, *exc_info: object) -> object: ...


class S3Client(Protocol):
    """The S3 calls this package makes, with botocore's keyword arguments."""

    async def put_object(self, **request: object) -> Response: ...
    async def get_object(self, **request: object) -> Response: ...
    async def head_object(self, **request: object) -> Response: ...
    async def delete_object(self, **request: object) -> Response: ...
    async def list_object_versions(self, **request: object) -> Response: ...


def driver_module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise StoreUnavailable(
            f"cannot import {name} ({exc}); reinstall psych-store-dynamo, which depends on aioboto3"
        ) from exc


async def open_client(
    service: str, aws: AwsSettings, stack: AsyncExitStack, *, s3_addressing: str | None = None
) -> object:
    """Create an aioboto3 client whose lifetime ``stack`` owns.

    The caller casts the result to ``DynamoClient`` or ``S3Client``.
    """
    aioboto3 = driver_module("aioboto3")
    config_module = driver_module("botocore.config")
    config_options: dict[str, object] = {
        "connect_timeout": aws.connect_timeout,
        "read_timeout": aws.read_timeout,
        "retries": {"max_attempts": aws.max_attempts, "mode": "standard"},
    }
    if s3_addressing is not None:
        config_options["s3"] = {"addressing_style": s3_addressing}
    config = config_module.Config(**config_options)
    session = aioboto3.Session()
    client_options: dict[str, object] = {"config": config}
    if aws.region is not None:
        client_options["region_name"] = aws.region
    if aws.endpoint_url is not None:
        client_options["endpoint_url"] = aws.endpoint_url
    try:
        context = session.client(service, **client_options)
        client = await stack.enter_async_context(context)
    except Exception as exc:
        replacement = translate(exc, service, aws)
        if replacement is not None:
            raise replacement from exc
        raise
    client.meta.events.register("before-send", _stream_large_body)
    gate = _Gate(client, f"the {service} client for {aws.where()} is closed")
    # Pushed after the client, so it runs first when the stack closes: no request is
    # sent once closing has begun, and those already sent end before the client does.
    stack.push_async_callback(gate.close)
    opened: object = gate
    return opened


class ClientSlot[T]:
    """One client, opened on first use under a lock, refused once the slot is closed.

    A store keeps one: ``get`` opens the client the first time (two callers at once
    open one), and after ``close`` every ``get`` raises ``StoreError``.

    Args:
        open: opens the client, entering whatever must be closed with it into the
            stack it is given.
        closed_message: what the ``StoreError`` of a call after ``close`` says.
    """

    def __init__(self, open: Callable[[AsyncExitStack], Awaitable[T]], closed_message: str) -> None:
        self._open = open
        self._closed_message = closed_message
        self._lock = asyncio.Lock()
        self._stack: AsyncExitStack | None = None
        self.opened: T | None = None
        """The client while it is open, else None: a lock-free look for a fast path."""
        self.closed = False

    async def get(self) -> T:
        """The client, opened now when it is not yet.

        Raises:
            StoreError: the slot is closed.
        """
        async with self._lock:
            if self.closed:
                raise StoreError(self._closed_message)
            if self.opened is None:
                stack = AsyncExitStack()
                try:
                    client = await self._open(stack)
                except BaseException:
                    await stack.aclose()
                    raise
                self._stack, self.opened = stack, client
            return self.opened

    async def close(self) -> None:
        """Close the client; idempotent. Requests already sent are waited for."""
        async with self._lock:
            self.closed = True
            stack, self._stack, self.opened = self._stack, None, None
        if stack is not None:
            await stack.aclose()


class _Gate:
    """The client's calls, refused once it is closing and waited for when it closes.

    aiobotocore opens its HTTP session on a client's first request, lazily. A request
    that got that far after the client had been closed would open a session that
    nothing ever closes (Python reports it when the garbage collector finds it). So
    every call passes through here: closing refuses new calls with ``StoreError`` and
    waits for the ones in flight before the client itself is closed.
    """

    def __init__(self, client: object, closed_message: str) -> None:
        self._client = client
        self._closed_message = closed_message
        self._closing = False
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    def __getattr__(self, name: str) -> Callable[..., Awaitable[object]]:
        method: Callable[..., Awaitable[object]] = getattr(self._client, name)

        async def call(**request: object) -> object:
            if self._closing:
                raise StoreError(self._closed_message)
            self._in_flight += 1
            self._idle.clear()
            try:
                return await method(**request)
            finally:
                self._in_flight -= 1
                if not self._in_flight:
                    self._idle.set()

        return call

    async def close(self) -> None:
        """Refuse new calls, then wait until none is in flight."""
        self._closing = True
        await self._idle.wait()


_LARGE_BODY = 1 << 20
"""Request bodies above this size are streamed rather than handed over as bytes."""


class _PreparedRequest(Protocol):
    """The part of botocore's AWSPreparedRequest the body hook touches."""

    body: object


def _stream_large_body(request: _PreparedRequest, **_: object) -> None:
    """Hand a large request body to aiohttp as a stream.

    aiohttp warns (ResourceWarning) that a multi-megabyte ``bytes`` body may hold up
    the event loop, and a process running with warnings as errors (most test suites)
    would see a 2 MB append fail. The request is already signed, so only the body's
    container changes, not its bytes.
    """
    body = request.body
    if isinstance(body, bytes | bytearray) and len(body) > _LARGE_BODY:
        request.body = io.BytesIO(body)


def dynamo(client: object) -> DynamoClient:
    """View a client made by ``open_client("dynamodb", ...)`` through its protocol."""
    return cast(DynamoClient, client)


def s3(client: object) -> S3Client:
    """View a client made by ``open_client("s3", ...)`` through its protocol."""
    return cast(S3Client, client)


def s3_body(body: object) -> S3Body:
    """View the ``Body`` of a GetObject response (an aiobotocore StreamingBody)."""
    return cast(S3Body, body)


__all__ = [
    "ClientSlot",
    "DynamoClient",
    "Response",
    "S3Body",
    "S3Client",
    "driver_module",
    "dynamo",
    "open_client",
    "s3",
    "s3_body",
]
