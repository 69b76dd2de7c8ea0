"""Turn ``dynamodb://`` and ``s3://`` URLs plus keyword options into checked settings.

Both URL kinds carry the same AWS connection options in their query string, so one
parser serves both::

    dynamodb://psych-runs?region=eu-west-1
    dynamodb://psych-runs?region=us-east-1&endpoint_url=http://127.0.0.1:8000
    s3://my-bucket/psych/blobs?region=eu-west-1

A keyword option passed to ``open_store``/``open_blob_store`` (or to the store's
constructor) wins over the same name in the query. Credentials never appear in a URL:
they come from the usual AWS chain (environment, shared config, instance role).
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import SplitResult
from urllib.parse import parse_qsl
from urllib.parse import unquote
from urllib.parse import urlsplit

from psych_runtime.adapters.store import InvalidStoreUrl
from psych_runtime.adapters.store import merge_url_options

DYNAMO_SCHEME = "dynamodb"
S3_SCHEME = "s3"

DEFAULT_CONNECT_TIMEOUT = 5.0
DEFAULT_READ_TIMEOUT = 10.0
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_WAIT_SECONDS = 300.0

ADDRESSING_STYLES = ("auto", "path", "virtual")

AWS_OPTIONS = ("region", "endpoint_url", "connect_timeout", "read_timeout", "max_attempts")
"""Options both URL kinds accept."""

DYNAMO_OPTIONS = (*AWS_OPTIONS, "wait_seconds")
S3_OPTIONS = (*AWS_OPTIONS, "addressing_style")

_TABLE = re.compile(r"[A-Za-z0-9_.\-]{3,255}")
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]")
_REGION = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")

_DYNAMO_EXAMPLE = "dynamodb://TABLE?region=us-east-1[&endpoint_url=http://127.0.0.1:8000]"
_S3_EXAMPLE = "s3://BUCKET/optional/prefix?region=us-east-1[&endpoint_url=http://127.0.0.1:9000]"


@dataclass(frozen=True, slots=True)
class AwsSettings:
    """How to reach an AWS service (or an emulator of one).

    Attributes:
        region: the AWS region; None defers to the environment and shared config.
        endpoint_url: a non-AWS endpoint such as DynamoDB Local, LocalStack or moto;
            None talks to AWS itself.
        connect_timeout: seconds to wait for a connection.
        read_timeout: seconds to wait for a response.
        max_attempts: tries per request, including the first, for transient failures
            (botocore's "standard" retry mode).
    """

    region: str | None = None
    endpoint_url: str | None = None
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    max_attempts: int = DEFAULT_MAX_ATTEMPTS

    def where(self) -> str:
        """A description of the endpoint for error messages, without any credentials."""
        region = self.region or "the default region"
        if self.endpoint_url is None:
            return f"AWS ({region})"
        return f"{redact(self.endpoint_url)} ({region})"


@dataclass(frozen=True, slots=True)
class DynamoSettings:
    """Everything a ``DynamoStore`` needs.

    Attributes:
        table: the DynamoDB table that holds every Run, record and Version.
        aws: how to reach DynamoDB.
        wait_seconds: how long ``migrate`` waits for the table and its indexes to
            become ACTIVE.
    """

    table: str
    aws: AwsSettings = AwsSettings()
    wait_seconds: float = DEFAULT_WAIT_SECONDS

    @classmethod
    def from_url(cls, url: str, /, **options: object) -> "DynamoSettings":
        """Settings for ``dynamodb://TABLE?region=...&endpoint_url=...``.

        ``region``, ``endpoint_url``, ``connect_timeout``, ``read_timeout``,
        ``max_attempts`` and ``wait_seconds`` may come from the query or as keywords;
        a keyword wins. A bad keyword is a ``TypeError`` or ``ValueError``, a bad URL
        an ``InvalidStoreUrl``.
        """
        return _dynamo_settings(url, options)


@dataclass(frozen=True, slots=True)
class S3Settings:
    """Everything an ``S3BlobStore`` needs.

    Attributes:
        bucket: the bucket (which must already exist).
        prefix: the folder inside the bucket, without leading or trailing slashes;
            empty for the bucket's root.
        aws: how to reach S3.
        addressing_style: botocore's bucket addressing; ``path`` is what emulators on
            an IP address need, so it is the default whenever ``endpoint_url`` is set.
    """

    bucket: str
    prefix: str = ""
    aws: AwsSettings = AwsSettings()
    addressing_style: str = "auto"

    @classmethod
    def from_url(cls, url: str, /, **options: object) -> "S3Settings":
        """Settings for ``s3://BUCKET/optional/prefix``.

        The AWS options of ``DynamoSettings.from_url`` apply, plus
        ``addressing_style`` (``path`` by default when ``endpoint_url`` is set).
        """
        return _s3_settings(url, options)


def redact(url: str) -> str:
    """``url`` without a ``user:password@`` part, safe to put in a message."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable endpoint>"
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return parts._replace(netloc=host).geturl()


_USERINFO = re.compile(r"(//)[^/?#@&\s]*@")


def _shown(url: str) -> str:
    """``url`` with every ``user:password@`` replaced by ``***@``, for messages."""
    return _USERINFO.sub(r"\1***@", url)


def _dynamo_settings(url: str, options: Mapping[str, object]) -> DynamoSettings:
    """Check a ``dynamodb://TABLE?...`` URL and combine it with keyword options.

    Raises:
        InvalidStoreUrl: the URL, or an option in its query, is malformed.
        TypeError: a keyword option is unknown or of the wrong type.
        ValueError: a keyword option has an unusable value.
    """
    parts = _split(url, DYNAMO_SCHEME, _DYNAMO_EXAMPLE)
    if parts.path not in ("", "/"):
        raise InvalidStoreUrl(
            f"{_shown(url)!r}: a DynamoDB URL names only a table, not a path; "
            f"write {_DYNAMO_EXAMPLE}"
        )
    table = unquote(parts.netloc)
    if not _TABLE.fullmatch(table):
        raise InvalidStoreUrl(
            f"{_shown(url)!r}: {table!r} is not a DynamoDB table name (3 to 255 letters, digits, "
            f"'_', '-' or '.'); write {_DYNAMO_EXAMPLE}"
        )
    chosen = _options(url, parts, options, DYNAMO_OPTIONS, "DynamoDB store")
    return DynamoSettings(
        table=table,
        aws=_aws(chosen),
        wait_seconds=_positive_float("wait_seconds", chosen.get("wait_seconds"))
        or DEFAULT_WAIT_SECONDS,
    )


def _s3_settings(url: str, options: Mapping[str, object]) -> S3Settings:
    """Check an ``s3://BUCKET/prefix?...`` URL and combine it with keyword options.

    Raises:
        InvalidStoreUrl: the URL, or an option in its query, is malformed.
        TypeError: a keyword option is unknown or of the wrong type.
        ValueError: a keyword option has an unusable value.
    """
    parts = _split(url, S3_SCHEME, _S3_EXAMPLE)
    bucket = parts.netloc
    if not _BUCKET.fullmatch(bucket) or ".." in bucket:
        raise InvalidStoreUrl(
            f"{_shown(url)!r}: {bucket!r} is not an S3 bucket name (3 to 63 lower-case letters, "
            f"digits, '.' or '-'); write {_S3_EXAMPLE}"
        )
    prefix = unquote(parts.path).strip("/")
    if "//" in prefix:
        raise InvalidStoreUrl(f"{_shown(url)!r}: the prefix {prefix!r} has an empty folder ('//')")
    chosen = _options(url, parts, options, S3_OPTIONS, "S3 blob store")
    aws = _aws(chosen)
    style = chosen.get("addressing_style")
    if style is None:
        style = "path" if aws.endpoint_url is not None else "auto"
    return S3Settings(bucket=bucket, prefix=prefix, aws=aws, addressing_style=_style(style))


def _split(url: str, scheme: str, example: str) -> SplitResult:
    if not isinstance(url, str):
        raise InvalidStoreUrl(f"a store URL must be a string, got {type(url).__name__}")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise InvalidStoreUrl(f"{_shown(url)!r} is not a URL: {exc}; write {example}") from exc
    if parts.scheme.lower() != scheme:
        raise InvalidStoreUrl(f"{_shown(url)!r} is not a {scheme}:// URL; write {example}")
    if not url[len(parts.scheme) + 1 :].startswith("//"):
        raise InvalidStoreUrl(f"{_shown(url)!r} lacks the '//' after '{scheme}:'; write {example}")
    if parts.fragment:
        raise InvalidStoreUrl(f"{_shown(url)!r} has a '#fragment', which a {scheme} URL cannot use")
    if "@" in parts.netloc or ":" in parts.netloc:
        raise InvalidStoreUrl(
            f"{_shown(url)!r}: credentials and ports do not belong in a {scheme} URL (use the AWS "
            "credential chain, and endpoint_url=... for a local server)"
        )
    if not parts.netloc:
        raise InvalidStoreUrl(f"{_shown(url)!r} names no {'table' if scheme != 's3' else 'bucket'}")
    return parts


def _options(
    url: str,
    parts: SplitResult,
    keywords: Mapping[str, object],
    known: tuple[str, ...],
    what: str,
) -> dict[str, object]:
    """Merge the query's options (checked here) with keyword options (checked later)."""
    try:
        pairs = (
            parse_qsl(parts.query, keep_blank_values=True, strict_parsing=True)
            if parts.query
            else []
        )
    except ValueError as exc:
        raise InvalidStoreUrl(f"{_shown(url)!r} has a malformed query string: {exc}") from exc
    return merge_url_options(
        _shown(url), pairs, keywords, known, what=what, read=_from_text, check=_check_query
    )


def _check_query(chosen: Mapping[str, object]) -> None:
    """Check the query's options together, once each has been read."""
    _aws(chosen)
    if "wait_seconds" in chosen:
        _positive_float("wait_seconds", chosen["wait_seconds"])
    if "addressing_style" in chosen:
        _style(chosen["addressing_style"])


def _from_text(name: str, text: str) -> object:
    """Read one query-string value; numbers arrive as text and are converted here."""
    if name == "max_attempts":
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"option {name!r} must be a whole number, got {text!r}") from None
    if name in ("connect_timeout", "read_timeout", "wait_seconds"):
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"option {name!r} must be a number, got {text!r}") from None
    return text


def _aws(chosen: Mapping[str, object]) -> AwsSettings:
    region = chosen.get("region")
    if region is not None and (not isinstance(region, str) or not _REGION.fullmatch(region)):
        raise ValueError(f"option 'region' must look like 'us-east-1', got {region!r}")
    endpoint = chosen.get("endpoint_url")
    if endpoint is not None:
        endpoint = _endpoint(endpoint)
    attempts = chosen.get("max_attempts", DEFAULT_MAX_ATTEMPTS)
    if isinstance(attempts, bool) or not isinstance(attempts, int):
        raise TypeError(f"option 'max_attempts' must be an int, got {type(attempts).__name__}")
    if attempts < 1:
        raise ValueError(f"option 'max_attempts' must be at least 1, got {attempts}")
    return AwsSettings(
        region=region,
        endpoint_url=endpoint,
        connect_timeout=_positive_float("connect_timeout", chosen.get("connect_timeout"))
        or DEFAULT_CONNECT_TIMEOUT,
        read_timeout=_positive_float("read_timeout", chosen.get("read_timeout"))
        or DEFAULT_READ_TIMEOUT,
        max_attempts=attempts,
    )


def _endpoint(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"option 'endpoint_url' must be a string, got {type(value).__name__}")
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - parsing the port is what validates it
    except ValueError as exc:
        raise ValueError(f"option 'endpoint_url' is not a URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            "option 'endpoint_url' must be an http:// or https:// URL with a host, got "
            f"{redact(value)!r}"
        )
    return value


def _style(value: object) -> str:
    if not isinstance(value, str) or value not in ADDRESSING_STYLES:
        raise ValueError(
            f"option 'addressing_style' must be one of {', '.join(ADDRESSING_STYLES)}, "
            f"got {value!r}"
        )
    return value


def _positive_float(name: str, value: object) -> float | None:
    """A positive number of seconds, or None when the option was not given."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"option {name!r} must be a number, got {type(value).__name__}")
    if not value > 0 or value == float("inf"):
        raise ValueError(f"option {name!r} must be a positive, finite number, got {value}")
    return float(value)


__all__ = [
    "ADDRESSING_STYLES",
    "AWS_OPTIONS",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_WAIT_SECONDS",
    "DYNAMO_OPTIONS",
    "DYNAMO_SCHEME",
    "S3_OPTIONS",
    "S3_SCHEME",
    "AwsSettings",
    "DynamoSettings",
    "S3Settings",
    "redact",
]
