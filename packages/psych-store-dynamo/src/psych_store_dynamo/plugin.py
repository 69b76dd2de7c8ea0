"""The entry point psych-runtime loads: registers ``dynamodb://`` and ``s3://``.

``dynamodb://`` opens two backends: ``open_store`` gets a ``DynamoStore`` and
``open_memory_store`` a ``DynamoMemoryStore`` for the same URL, so the Runs and the
facts of a deployment share one table.

Loading this module must stay cheap, since psych-runtime imports every installed
plugin when it first looks for backends. Nothing here imports aioboto3, botocore or
the store modules; the factories import them when a store is actually opened.
"""

from typing import TYPE_CHECKING

from psych_runtime.adapters.plugins import BlobStoreBackend
from psych_runtime.adapters.plugins import DoctorCheck
from psych_runtime.adapters.plugins import DoctorResult
from psych_runtime.adapters.plugins import StoreBackend
from psych_runtime.adapters.plugins import offer_blob_stores
from psych_runtime.adapters.plugins import offer_doctor_checks
from psych_runtime.adapters.plugins import offer_store_and_memory

if TYPE_CHECKING:
    from psych_runtime import Store
    from psych_store_dynamo.blob import S3BlobStore
    from psych_store_dynamo.memory import DynamoMemoryStore

PSYCH_PLUGIN_API = 1

_PACKAGE = "psych-store-dynamo"


async def open_dynamo_store(url: str, **options: object) -> "Store":
    """Open a ``dynamodb://`` store, as ``psych_runtime.open_store`` does for this scheme.

    No request is sent here: the table is checked on first use. It is created only when
    asked: ``open_store(url, migrate=True)`` (handy in development and tests, where it
    creates the table and waits until it is ACTIVE), or ``await store.migrate()`` once
    from a deploy step.

    Args:
        url: ``dynamodb://TABLE?region=...&endpoint_url=...``.
        **options: ``region``, ``endpoint_url``, ``connect_timeout``, ``read_timeout``,
            ``max_attempts``, ``wait_seconds`` (see ``DynamoStore``); they override the
            same names in the URL's query.

    Raises:
        InvalidStoreUrl: the URL is malformed.
        TypeError: an unknown option, or a value of the wrong type.
    """
    from psych_store_dynamo.store import DynamoStore  # deferred: keep loading cheap

    return DynamoStore(url, **options)


async def open_dynamo_memory_store(url: str, **options: object) -> "DynamoMemoryStore":
    """Open the facts kept in a ``dynamodb://`` table, as ``open_memory_store`` does.

    Like ``open_dynamo_store``, no request is sent here, and the table is created only
    when asked (``open_memory_store(url, migrate=True)`` or ``await memory.migrate()``;
    either store's migration prepares the table for both).

    Args:
        url: ``dynamodb://TABLE?region=...&endpoint_url=...``.
        **options: the options ``open_dynamo_store`` takes.

    Raises:
        InvalidStoreUrl: the URL is malformed.
        TypeError: an unknown option, or a value of the wrong type.
    """
    from psych_store_dynamo.memory import DynamoMemoryStore  # deferred: keep loading cheap

    return DynamoMemoryStore(url, **options)


async def open_s3_blob_store(url: str, **options: object) -> "S3BlobStore":
    """Open an ``s3://bucket/prefix`` blob store (the bucket must exist).

    Args:
        url: ``s3://BUCKET/optional/prefix?region=...&endpoint_url=...``.
        **options: ``region``, ``endpoint_url``, ``connect_timeout``, ``read_timeout``,
            ``max_attempts``, ``addressing_style``; they override the URL's query.

    Raises:
        InvalidStoreUrl: the URL is malformed.
        TypeError: an unknown option, or a value of the wrong type.
    """
    from psych_store_dynamo.blob import S3BlobStore  # deferred: keep loading cheap

    return S3BlobStore(url, **options)


def _driver_importable() -> DoctorResult:
    """Check that aioboto3 is installed, without opening any connection."""
    import importlib.util

    if importlib.util.find_spec("aioboto3") is None:
        return DoctorResult(False, "aioboto3 is not installed; reinstall psych-store-dynamo")
    return DoctorResult(True, "aioboto3 is installed (dynamodb:// and s3:// available)")


psych_register_stores, psych_register_memory_stores = offer_store_and_memory(
    StoreBackend(
        name="dynamodb",
        schemes=("dynamodb",),
        open=open_dynamo_store,
        package=_PACKAGE,
        description="Durable store in one DynamoDB table (transactions, sparse indexes).",
    ),
    memory=open_dynamo_memory_store,
    memory_description="Facts about end users in the store's DynamoDB table.",
)

psych_register_blob_stores = offer_blob_stores(
    BlobStoreBackend(
        name="s3",
        schemes=("s3",),
        open=open_s3_blob_store,
        package=_PACKAGE,
        description="Blobs as S3 objects under a bucket prefix.",
    )
)

psych_doctor_checks = offer_doctor_checks(DoctorCheck("dynamodb store", _driver_importable))
