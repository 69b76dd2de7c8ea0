"""URL parsing for dynamodb:// and s3://, and keyword options that override the query."""

import pytest

from psych_runtime.adapters import InvalidStoreUrl
from psych_store_dynamo.settings import DEFAULT_CONNECT_TIMEOUT
from psych_store_dynamo.settings import DEFAULT_MAX_ATTEMPTS
from psych_store_dynamo.settings import DEFAULT_WAIT_SECONDS
from psych_store_dynamo.settings import DynamoSettings
from psych_store_dynamo.settings import S3Settings
from psych_store_dynamo.settings import redact


def test_a_table_url_with_region_and_endpoint() -> None:
    settings = DynamoSettings.from_url(
        "dynamodb://psych-runs?region=eu-west-1&endpoint_url=http://127.0.0.1:8000"
    )
    assert settings.table == "psych-runs"
    assert settings.aws.region == "eu-west-1"
    assert settings.aws.endpoint_url == "http://127.0.0.1:8000"
    assert settings.aws.connect_timeout == DEFAULT_CONNECT_TIMEOUT
    assert settings.aws.max_attempts == DEFAULT_MAX_ATTEMPTS
    assert settings.wait_seconds == DEFAULT_WAIT_SECONDS


def test_a_bare_table_url_defers_region_and_endpoint_to_aws_defaults() -> None:
    settings = DynamoSettings.from_url("dynamodb://Psych_Table.v2")
    assert settings.table == "Psych_Table.v2"  # case is kept: table names are case-sensitive
    assert settings.aws.region is None
    assert settings.aws.endpoint_url is None
    assert DynamoSettings.from_url("dynamodb://psych/").table == "psych"


def test_query_numbers_are_converted_and_keywords_win() -> None:
    settings = DynamoSettings.from_url(
        "dynamodb://psych?max_attempts=5&connect_timeout=1.5&read_timeout=2&wait_seconds=9"
        "&region=us-east-1",
        **{"region": "ap-south-1", "max_attempts": 1},
    )
    assert settings.aws.region == "ap-south-1"
    assert settings.aws.max_attempts == 1
    assert settings.aws.connect_timeout == 1.5
    assert settings.aws.read_timeout == 2.0
    assert settings.wait_seconds == 9.0


@pytest.mark.parametrize(
    ("settings", "url", "fragment"),
    [
        (DynamoSettings, "psych", "not a dynamodb:// URL"),
        (DynamoSettings, "postgresql://psych", "not a dynamodb:// URL"),
        (DynamoSettings, "dynamodb:psych", "lacks the '//'"),
        (DynamoSettings, "dynamodb://", "names no table"),
        (DynamoSettings, "dynamodb://ab", "not a DynamoDB table name"),
        (DynamoSettings, "dynamodb://bad name", "not a DynamoDB table name"),
        (DynamoSettings, "dynamodb://psych/extra", "not a path"),
        (DynamoSettings, "dynamodb://user:secret@psych", "credentials and ports"),
        (DynamoSettings, "dynamodb://psych:8000", "credentials and ports"),
        (DynamoSettings, "dynamodb://psych#frag", "fragment"),
        (DynamoSettings, "dynamodb://psych?colour=blue", "unknown option 'colour'"),
        (DynamoSettings, "dynamodb://psych?region=a&region=b", "given twice"),
        (DynamoSettings, "dynamodb://psych?region=Not_A_Region", "region"),
        (DynamoSettings, "dynamodb://psych?max_attempts=many", "whole number"),
        (DynamoSettings, "dynamodb://psych?max_attempts=0", "at least 1"),
        (DynamoSettings, "dynamodb://psych?connect_timeout=-1", "positive"),
        (DynamoSettings, "dynamodb://psych?wait_seconds=nan", "positive"),
        (DynamoSettings, "dynamodb://psych?endpoint_url=ftp://host", "http:// or https://"),
        (DynamoSettings, "dynamodb://psych?endpoint_url=http://", "http:// or https://"),
        (DynamoSettings, "dynamodb://psych?endpoint_url=http://h:99999", "not a URL"),
        (DynamoSettings, "dynamodb://psych?region", "malformed query"),
        (S3Settings, "s3://", "names no bucket"),
        (S3Settings, "s3://My_Bucket", "not an S3 bucket name"),
        (S3Settings, "s3://a..b", "not an S3 bucket name"),
        (S3Settings, "s3://bucket/a//b", "empty folder"),
        (S3Settings, "s3://bucket?addressing_style=sideways", "addressing_style"),
        (S3Settings, "s3://bucket?wait_seconds=3", "unknown option 'wait_seconds'"),
        (S3Settings, "dynamodb://bucket", "not a s3:// URL"),
    ],
)
def test_a_malformed_url_is_refused_clearly(
    settings: type[DynamoSettings] | type[S3Settings], url: str, fragment: str
) -> None:
    with pytest.raises(InvalidStoreUrl, match=fragment):
        settings.from_url(url)


def test_bad_keyword_options_raise_type_and_value_errors() -> None:
    with pytest.raises(TypeError, match="no option 'pool_size'"):
        DynamoSettings.from_url("dynamodb://psych", **{"pool_size": 3})
    with pytest.raises(TypeError, match="max_attempts"):
        DynamoSettings.from_url("dynamodb://psych", **{"max_attempts": "3"})
    with pytest.raises(TypeError, match="max_attempts"):
        DynamoSettings.from_url("dynamodb://psych", **{"max_attempts": True})
    with pytest.raises(ValueError, match="read_timeout"):
        DynamoSettings.from_url("dynamodb://psych", **{"read_timeout": 0})
    with pytest.raises(TypeError, match="endpoint_url"):
        DynamoSettings.from_url("dynamodb://psych", **{"endpoint_url": 8000})


def test_an_s3_url_names_bucket_and_prefix() -> None:
    settings = S3Settings.from_url("s3://my-bucket/psych/blobs/?region=eu-west-1")
    assert settings.bucket == "my-bucket"
    assert settings.prefix == "psych/blobs"
    assert settings.aws.region == "eu-west-1"
    assert settings.addressing_style == "auto"
    assert S3Settings.from_url("s3://my-bucket").prefix == ""


def test_s3_defaults_to_path_addressing_for_a_local_endpoint() -> None:
    local = S3Settings.from_url("s3://my-bucket?endpoint_url=http://127.0.0.1:9000")
    assert local.addressing_style == "path"
    chosen = S3Settings.from_url(
        "s3://my-bucket?endpoint_url=http://127.0.0.1:9000&addressing_style=virtual"
    )
    assert chosen.addressing_style == "virtual"


def test_redact_hides_credentials_in_an_endpoint() -> None:
    assert redact("http://user:secret@host:9000/x") == "http://host:9000/x"
    assert redact("http://host:9000") == "http://host:9000"


def test_messages_never_repeat_a_password() -> None:
    with pytest.raises(InvalidStoreUrl) as caught:
        DynamoSettings.from_url("dynamodb://psych?endpoint_url=ftp://user:hunter2@host")
    assert "hunter2" not in str(caught.value)


def test_credentials_in_the_store_url_are_not_echoed() -> None:
    with pytest.raises(InvalidStoreUrl) as caught:
        DynamoSettings.from_url("dynamodb://admin:sw0rdfish@psych")
    assert "sw0rdfish" not in str(caught.value)
