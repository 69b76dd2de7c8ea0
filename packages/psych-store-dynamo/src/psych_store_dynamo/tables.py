"""Development helpers: create or delete a store's table by URL.

In production, run ``await store.migrate()`` from a deploy step (or pre-create the
table to your own capacity settings and let ``migrate`` add what is missing).
"""

from psych_store_dynamo.store import DynamoStore


async def create_table(url: str, **options: object) -> list[int]:
    """Create (or upgrade) the table a ``dynamodb://`` URL names and wait until ACTIVE.

    The same as opening the store and calling ``migrate``: idempotent, and returns the
    schema versions this call applied (empty when the table was already current).

    Args:
        url: ``dynamodb://TABLE?region=...&endpoint_url=...``.
        **options: the options ``DynamoStore`` accepts.

    Raises:
        InvalidStoreUrl: the URL is malformed.
        StoreUnavailable: DynamoDB cannot be reached, or the table did not become
            ACTIVE in time.
        SchemaTooNew: a newer release migrated the table.
    """
    store = DynamoStore(url, **options)
    try:
        return await store.migrate()
    finally:
        await store.close()


async def drop_table(url: str, **options: object) -> bool:
    """Delete the table a ``dynamodb://`` URL names; False when it did not exist.

    For development and tests: every Run, record and Version in it is gone for good.
    """
    store = DynamoStore(url, **options)
    try:
        return await store.drop_table()
    finally:
        await store.close()


__all__ = ["create_table", "drop_table"]
