"""The package's errors: DynamoDB's limits, and botocore's errors in the port's terms.

Callers of a Store handle ``psych_runtime`` errors only. botocore's exception classes
are looked up when an error is being examined, so importing this module never imports
the driver.
"""

from dataclasses import dataclass
from types import ModuleType

from psych_runtime import StoreError
from psych_runtime import StoreUnavailable
from psych_runtime.adapters.store import BatchTooLarge as PortBatchTooLarge
from psych_store_dynamo.settings import AwsSettings


class BatchTooLarge(PortBatchTooLarge):
    """An append does not fit in one DynamoDB transaction.

    ``TransactWriteItems`` takes at most 100 items and 4 MB, and an append must be one
    transaction to stay all-or-nothing, so a larger batch is refused before anything is
    written rather than split. It is the port's ``BatchTooLarge``: the agent loop then
    appends the same records in smaller batches (a turn of a hundred tool calls needs
    that); any other caller appending in bulk does the same.
    """


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
    response: dict[str, object]


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


def failure_of(exc: BaseException) -> ClientFailure | None:
    """The service's refusal carried by ``exc``, or None for any other exception."""
    exceptions = _botocore_exceptions()
    if not isinstance(exc, exceptions.ClientError):
        return None
    raw = getattr(exc, "response", None)
    response: dict[str, object] = dict(raw) if isinstance(raw, dict) else {}
    error = response.get("Error")
    code = message = ""
    if isinstance(error, dict):
        code = str(error.get("Code", ""))
        message = str(error.get("Message", ""))
    status = 0
    metadata = response.get("dict[str, object]Metadata")
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
    exceptions = _botocore_exceptions()
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


def _botocore_exceptions() -> ModuleType:
    from psych_store_dynamo._connection import driver_module  # the one importer of botocore

    return driver_module("botocore.exceptions")


__all__ = ["BatchTooLarge", "ClientFailure", "failure_of", "translate", "unexpected"]
