"""The one place that touches aioboto3 and botocore.

The driver is imported here, on first use, never at module import: psych-runtime loads
every installed plugin when it first looks for backends, and aioboto3 with botocore
costs a noticeable fraction of a second to import.

Neither library ships type information, so clients are seen through small protocols
naming only the calls this package makes; every response is a mapping whose values
the callers check before use. Driver errors are translated here into the few outcomes
the stores care about, so no botocore class leaks past this module.
"""

import importlib
import io
from contextlib import AsyncExitStack
from dataclasses import dataclass
from types import ModuleType
from typing import Protocol, cast

from psych_runtime import StoreError, StoreUnavailable
from psych_store_dynamo.settings import AwsSettings

Response = dict[str, object]
"""A decoded response of one API call, checked field by field by its caller."""


class DynamoClient(Protocol):
    """The DynamoDB calls this package makes, with botocore's keyword arguments."""

    async def get_item(self, **request: object) -> Response: ...
    async def put_item(self, **request: object) -> Response: ...
    async def update_item(self, **request: object) -> Response: ...
    async def query(self, **request: object) -> Response: ...
    async def batch_get_item(self, **request: object) -> Response: ...
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


@dataclass(frozen=True, slots=True)
class ClientFailure:
    """A service's refusal, reduced to what callers branch on.

    Attributes:
        code: the service's error code (``ConditionalCheckFailedException``,
            ``NoSuchKey``, ``404`` for a HEAD...).
        message: the service's message.
        status: the HTTP status, 0 when unknown.
        response: the whole decoded error response, for fields such as
            ``CancellationReasons``.
    """

    code: str
    message: str
    status: int
    response: Response


_UNAVAILABLE_CODES = frozenset(
    {
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "ExpiredToken",
        "ExpiredTokenException",
        "AccessDenied",
        "AccessDeniedException",
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
        "SlowDown",
    }
)
"""Codes meaning "the service cannot serve us right now", not "your request is wrong"."""


def _module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise StoreUnavailable(
            f"cannot import {name} ({exc}); reinstall psych-store-dynamo, which depends on aioboto3"
        ) from exc


def failure_of(exc: BaseException) -> ClientFailure | None:
    """The service's refusal carried by ``exc``, or None for any other exception."""
    exceptions = _module("botocore.exceptions")
    if not isinstance(exc, exceptions.ClientError):
        return None
    raw = getattr(exc, "response", None)
    response: Response = dict(raw) if isinstance(raw, dict) else {}
    error = response.get("Error")
    code = message = ""
    if isinstance(error, dict):
        code = str(error.get("Code", ""))
        message = str(error.get("Message", ""))
    status = 0
    metadata = response.get("ResponseMetadata")
    if isinstance(metadata, dict):
        found = metadata.get("HTTPStatusCode")
        status = found if isinstance(found, int) else 0
    return ClientFailure(code=code, message=message, status=status, response=response)


def translate(exc: BaseException, service: str, aws: AwsSettings) -> BaseException | None:
    """The store error to raise instead of ``exc``, or None to let the caller decide.

    Connection problems, missing credentials, throttling that outlasted the retries and
    refused credentials all become ``StoreUnavailable`` naming the endpoint (never a
    secret). A service's refusal of the request itself is left to the caller (None).
    """
    exceptions = _module("botocore.exceptions")
    where = aws.where()
    if isinstance(exc, exceptions.NoRegionError):
        return StoreUnavailable(
            f"{service}: no AWS region configured; add ?region=... to the URL or set "
            "AWS_DEFAULT_REGION"
        )
    if isinstance(exc, (exceptions.NoCredentialsError, exceptions.PartialCredentialsError)):
        return StoreUnavailable(
            f"{service} at {where}: no AWS credentials found (set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, a profile, or an instance role)"
        )
    if isinstance(exc, (exceptions.BotoCoreError, OSError, TimeoutError)):
        return StoreUnavailable(
            f"cannot reach {service} at {where}: {type(exc).__name__}: {_first_line(exc)}"
        )
    failure = failure_of(exc)
    if failure is not None and failure.code in _UNAVAILABLE_CODES:
        return StoreUnavailable(
            f"{service} at {where} refused the request: {failure.code}: {failure.message}"
        )
    return None


def unexpected(failure: ClientFailure, service: str, operation: str) -> StoreError:
    """A refusal the store has no meaning for: a bug here or a misconfigured resource."""
    return StoreError(f"{service} {operation} failed: {failure.code}: {failure.message}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no detail)"


async def open_client(
    service: str, aws: AwsSettings, stack: AsyncExitStack, *, s3_addressing: str | None = None
) -> object:
    """Create an aioboto3 client whose lifetime ``stack`` owns.

    The caller casts the result to ``DynamoClient`` or ``S3Client``.
    """
    aioboto3 = _module("aioboto3")
    config_module = _module("botocore.config")
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
    opened: object = client
    return opened


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
    "ClientFailure",
    "DynamoClient",
    "Response",
    "S3Body",
    "S3Client",
    "dynamo",
    "failure_of",
    "open_client",
    "s3",
    "s3_body",
    "translate",
    "unexpected",
]
