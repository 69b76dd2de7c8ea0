"""``DynamoMemoryStore``: facts about end users, kept in the store's DynamoDB table.

The facts are items of the same table a ``DynamoStore`` uses (see ``_rows`` for the
layout): one partition per (tenant, end user), sorted by ``created_at``. Nothing has
to be created for them, so the table's schema version is the store's and either store
migrating prepares the table for both.

Requests per call:

* ``remember``: one conditional PutItem.
* ``recall``: one consistent Query per page (a page holds about 1 MB); with ``limit``
  the partition is read from its newest end and only ``limit`` items are asked for.
* ``forget``: a consistent Query over the end user's partition to find the id, then
  one DeleteItem on the condition that the item still holds that id. The partition
  holds one person's facts, so that read is as large as a ``recall`` without limit.
* ``erase``: a Query for the keys, page by page, each page deleted with
  BatchWriteItem (25 per request, unprocessed deletes sent again).
"""

from psych_runtime import StoreUnavailable
from psych_runtime.adapters.memory import CheckedMemoryStore
from psych_runtime.adapters.memory import Memory
from psych_runtime.adapters.memory import MemoryKey
from psych_runtime.adapters.memory import mint_memory
from psych_store_dynamo import _rows as it
from psych_store_dynamo._database import DynamoDatabase
from psych_store_dynamo._table import ConditionFailed
from psych_store_dynamo._table import Table

_REMEMBER_TRIES = 8
"""Tries of ``remember`` when another process keeps a fact of the same end user in the
same microsecond (each try mints the fact anew, one microsecond or more later)."""

_PARTITION = "#pk = :pk"


class DynamoMemoryStore(CheckedMemoryStore, DynamoDatabase):
    """A MemoryStore kept in one DynamoDB table, beside the Runs.

    Construction does no IO: the client is created on first use, and the first call
    checks once that the table exists at this release's schema version (raising
    ``SchemaNotMigrated`` when it does not). Create the table with
    ``await memory.migrate()``, or by migrating a ``DynamoStore`` on the same table.

    Every read is strongly consistent, so a fact is recalled (or forgotten) by any
    instance as soon as ``remember`` returns. ``erase`` deletes the items for good.

    Args:
        url: ``dynamodb://TABLE?region=...&endpoint_url=...``, the same URL the
            table's ``DynamoStore`` uses; or ``DynamoSettings``.
        **options: ``region``, ``endpoint_url``, ``connect_timeout``, ``read_timeout``,
            ``max_attempts``, ``wait_seconds``, as for ``DynamoStore``.

    Raises:
        InvalidStoreUrl: the URL is malformed.
        TypeError: an option has the wrong type.
        ValueError: an option value is out of range.
    """

    _kind = "memory store"

    async def _keep(self, fact: Memory) -> Memory:
        """For ``remember``: a PutItem that never replaces another fact.

        The item's sort key is the fact's ``created_at``. Facts minted in one process
        never share a microsecond; should another process have kept a fact of the same
        end user in that very microsecond, the fact is minted again and written anew.

        Raises:
            SchemaNotMigrated: the table is missing or not migrated.
            StoreUnavailable: DynamoDB cannot be reached.
        """
        table = await self._ready()
        for _ in range(_REMEMBER_TRIES):
            try:
                await table.put(it.memory_item(fact), condition="attribute_not_exists(#pk)")
            except ConditionFailed:
                fact = mint_memory(fact.key, fact.content)
                continue
            return fact
        raise StoreUnavailable(
            f"DynamoDB table {self.table_name!r}: every one of {_REMEMBER_TRIES} tries to "
            "remember a fact met another fact of the same end user; try again"
        )

    async def _forget(self, key: MemoryKey, memory_id: str) -> bool:
        """For ``forget``: only an item of the key's own partition is deleted."""
        table = await self._ready()
        found = await _find(table, key, memory_id)
        if found is None:
            return False
        try:
            await table.delete_item(
                found,
                condition="#memory_id = :id",
                values={":id": it.s(memory_id)},
            )
        except ConditionFailed:
            return False  # forgotten or erased by someone else in between
        return True

    async def _recall(self, key: MemoryKey, limit: int | None) -> tuple[Memory, ...]:
        """For ``recall``: consistent Queries of the key's partition.

        Without ``limit`` the partition is read oldest first to its end. With it, the
        Query runs newest first and stops once ``limit`` facts are in hand; they are
        then put back in oldest-first order.
        """
        table = await self._ready()
        values = {":pk": it.s(it.memory_pk(key))}
        items: list[it.Item] = []
        start: it.Item | None = None
        while limit is None or len(items) < limit:
            page, start = await table.query(
                _PARTITION,
                values,
                limit=None if limit is None else limit - len(items),
                start=start,
                forward=limit is None,
            )
            items.extend(page)
            if start is None:
                break
        if limit is not None:
            items.reverse()
        return tuple(it.memory_of(item, key) for item in items)

    async def _erase(self, key: MemoryKey) -> int:
        """For ``erase``: every item of the partition, deleted page by page.

        Returns the number of facts found and deleted.
        """
        table = await self._ready()
        values = {":pk": it.s(it.memory_pk(key))}
        erased = 0
        start: it.Item | None = None
        while True:
            page, start = await table.query(
                _PARTITION, values, start=start, projection=(it.PK, it.SK)
            )
            await table.batch_delete(page)
            erased += len(page)
            if start is None:
                return erased


async def _find(table: Table, key: MemoryKey, memory_id: str) -> it.Item | None:
    """The key (pk and sk) of the item of ``key``'s partition holding ``memory_id``."""
    values = {":pk": it.s(it.memory_pk(key)), ":id": it.s(memory_id)}
    start: it.Item | None = None
    while True:
        page, start = await table.query(
            _PARTITION,
            values,
            start=start,
            filter_expression="#memory_id = :id",
            projection=(it.PK, it.SK),
        )
        if page:
            return page[0]
        if start is None:
            return None


__all__ = ["DynamoMemoryStore"]
