"""What every store kept in one DynamoDB table shares: settings, the client, the schema.

``DynamoStore`` (the Runs) and ``DynamoMemoryStore`` (the facts about end users) keep
their items in the same table. Both derive from ``DynamoDatabase``, so opening the
client, checking the table's schema version once, migrating and closing are written
once, and either of them migrating prepares the table for both.
"""

from collections.abc import Mapping
from contextlib import AsyncExitStack

from psych_runtime.adapters.store import RawItem
from psych_runtime.adapters.store import settings_from
from psych_store_dynamo import _connection
from psych_store_dynamo import schema
from psych_store_dynamo._table import Table
from psych_store_dynamo.settings import DynamoSettings


class DynamoDatabase:
    """The lifecycle of one table: its client, its schema check, closing it.

    Construction does no IO: the client is created on first use, and the first
    operation checks once that the table exists at this release's schema version.

    Args:
        url: ``dynamodb://TABLE?region=...&endpoint_url=...``, or ``DynamoSettings``
            already resolved.
        **options: ``region``, ``endpoint_url``, ``connect_timeout``, ``read_timeout``,
            ``max_attempts``, ``wait_seconds``; they override the URL's query.

    Raises:
        InvalidStoreUrl: the URL is malformed.
        TypeError: an option has the wrong type.
        ValueError: an option value is out of range.
    """

    _kind = "store"
    """What the store is called in the message a closed one raises."""

    def __init__(self, url: str | DynamoSettings, /, **options: object) -> None:
        self._settings = settings_from(url, DynamoSettings, options)
        self._table = _connection.ClientSlot(
            self._open_table, f"the DynamoDB {self._kind} for {self.table_name!r} is closed"
        )
        self._verified = False

    @property
    def settings(self) -> DynamoSettings:
        """The resolved settings this store runs with."""
        return self._settings

    @property
    def table_name(self) -> str:
        """The DynamoDB table."""
        return self._settings.table

    async def _open_table(self, stack: AsyncExitStack) -> Table:
        client = await _connection.open_client("dynamodb", self._settings.aws, stack)
        return Table(_connection.dynamo(client), self.table_name, self._settings.aws)

    async def _open(self) -> Table:
        return await self._table.get()

    async def _ready(self) -> Table:
        """The table, after checking its schema once per store instance."""
        table = self._table.opened
        if self._verified and table is not None:
            return table
        table = await self._open()
        if not self._verified:
            await schema.verify(table)
            self._verified = True
        return table

    async def connect(self) -> None:
        """Check now that the table is reachable and at this release's schema.

        Raises:
            StoreUnavailable: DynamoDB cannot be reached.
            SchemaNotMigrated: the table is missing or not migrated.
            SchemaTooNew: a newer release migrated the table.
        """
        await self._ready()

    async def migrate(self) -> list[int]:
        """Create or upgrade the table and its indexes; returns the versions applied.

        Waits until the table and both indexes are ACTIVE. Running it again applies
        nothing, and two processes running it at once converge on the same table.

        Raises:
            SchemaTooNew: a newer release migrated the table.
            StoreUnavailable: DynamoDB cannot be reached, or the table did not become
                ACTIVE in time.
            StoreError: the table exists with a key schema this store cannot use.
        """
        table = await self._open()
        applied = await schema.migrate(table, self._settings.wait_seconds)
        self._verified = True
        return applied

    @property
    def expected_schema_version(self) -> int:
        """The schema version this release writes and needs."""
        return schema.SCHEMA_VERSION

    async def schema_version(self) -> int:
        """The schema version recorded in the table (0 when missing or never migrated)."""
        return await schema.current_version(await self._open())

    async def raw_storage(self) -> list[RawItem]:
        """See ``RawStorage.raw_storage``: every item of the table, every attribute's bytes.

        A strongly consistent Scan of the whole table; string attributes as UTF-8,
        binary ones as stored. DynamoDB offers nothing below its items: a deleted
        item is gone from every read the service allows.
        """
        table = await self._open()
        items: list[RawItem] = []
        start = None
        while True:
            page, start = await table.scan_all(start=start)
            items.extend(RawItem(f"item {_key_of(item)}", _item_bytes(item)) for item in page)
            if start is None:
                return items

    async def close(self) -> None:
        """Close the client; idempotent. The store is unusable afterwards.

        Requests already sent are waited for; any made from now on raise ``StoreError``.
        """
        await self._table.close()


def _key_of(item: Mapping[str, object]) -> str:
    return " ".join(
        str(_item_bytes({name: item[name]}), "utf-8", "replace")
        for name in ("pk", "sk")
        if name in item
    )


def _item_bytes(value: object) -> bytes:
    """Every leaf of a wire-format item or attribute, strings as UTF-8, in one blob."""
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, Mapping):
        return b"\n".join(_item_bytes(part) for part in value.values())
    if isinstance(value, list | tuple | set | frozenset):
        return b"\n".join(_item_bytes(part) for part in value)
    return str(value).encode()


__all__ = ["DynamoDatabase"]
