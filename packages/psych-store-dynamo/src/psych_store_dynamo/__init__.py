"""A DynamoDB Store and an S3 BlobStore for Psych Runtime, on aioboto3.

Example::

    import asyncio
    import os

    import psych_runtime


    async def main() -> None:
        # For example dynamodb://psych?region=us-east-1&endpoint_url=http://127.0.0.1:8000
        url = os.environ.get("PSYCH_DYNAMO_URL", "dynamodb://psych?region=us-east-1")
        store = await psych_runtime.open_store(url, migrate=True)
        try:
            assert await store.head(psych_runtime.RunId("no-such-run")) == 0
        finally:
            await store.close()


    asyncio.run(main())

Installing the package registers the ``dynamodb`` scheme with psych-runtime (so
``open_store`` and ``open_memory_store`` find it) and the ``s3`` scheme for blob
stores. ``DynamoStore``, ``DynamoMemoryStore``, ``S3BlobStore`` and ``create_table``
can also be used directly; they are loaded on first access, so importing this package
(or its plugin module) never imports aioboto3.
"""

from typing import TYPE_CHECKING

from psych_runtime.adapters.plugins import lazy_exports
from psych_store_dynamo._version import __version__

if TYPE_CHECKING:
    from psych_store_dynamo.blob import S3BlobStore as S3BlobStore
    from psych_store_dynamo.errors import BatchTooLarge as BatchTooLarge
    from psych_store_dynamo.memory import DynamoMemoryStore as DynamoMemoryStore
    from psych_store_dynamo.settings import DynamoSettings as DynamoSettings
    from psych_store_dynamo.settings import S3Settings as S3Settings
    from psych_store_dynamo.store import DynamoStore as DynamoStore
    from psych_store_dynamo.tables import create_table as create_table
    from psych_store_dynamo.tables import drop_table as drop_table

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "DynamoStore": "psych_store_dynamo.store",
        "DynamoMemoryStore": "psych_store_dynamo.memory",
        "DynamoSettings": "psych_store_dynamo.settings",
        "S3BlobStore": "psych_store_dynamo.blob",
        "S3Settings": "psych_store_dynamo.settings",
        "BatchTooLarge": "psych_store_dynamo.errors",
        "create_table": "psych_store_dynamo.tables",
        "drop_table": "psych_store_dynamo.tables",
    },
)

__all__ = [
    "BatchTooLarge",
    "DynamoMemoryStore",
    "DynamoSettings",
    "DynamoStore",
    "S3BlobStore",
    "S3Settings",
    "__version__",
    "create_table",
    "drop_table",
]
