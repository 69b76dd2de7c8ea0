"""The table's shape, and the forward-only migrations that bring a table to it.

DynamoDB has no DDL transaction and no lock, so each migration step is written to be
idempotent (create what is missing, leave what exists), and the applied version is
recorded in the ``meta#schema`` item with a compare-and-set. Two processes migrating
at once therefore both converge on the same table, and only the one whose
compare-and-set lands reports the version as applied by it.
"""

import asyncio
import time
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping

from psych_runtime import StoreError
from psych_runtime import StoreUnavailable
from psych_runtime.adapters.store import SchemaNotMigrated
from psych_runtime.adapters.store import SchemaTooNew
from psych_runtime.adapters.store import check_schema_version
from psych_runtime.adapters.store import schema_too_new
from psych_store_dynamo import _rows as it
from psych_store_dynamo._table import ConditionFailed
from psych_store_dynamo._table import Table
from psych_store_dynamo._table import TableMissing
from psych_store_dynamo._version import __version__

_KEY_SCHEMA: list[dict[str, str]] = [
    {"AttributeName": it.PK, "KeyType": "HASH"},
    {"AttributeName": it.SK, "KeyType": "RANGE"},
]

_ATTRIBUTES: dict[str, str] = {
    it.PK: "S",
    it.SK: "N",
    it.CLAIM_Q: "S",
    it.CLAIM_K: "S",
    it.OPEN_Q: "S",
    it.OPEN_K: "S",
}

INDEXES: dict[str, dict[str, object]] = {
    it.CLAIM_INDEX: {
        "IndexName": it.CLAIM_INDEX,
        "KeySchema": [
            {"AttributeName": it.CLAIM_Q, "KeyType": "HASH"},
            {"AttributeName": it.CLAIM_K, "KeyType": "RANGE"},
        ],
        # The claim orders expired leases by (runnable_at or created_at); both ride
        # along so that needs no extra read. Everything else comes from the update.
        "Projection": {
            "ProjectionType": "INCLUDE",
            "NonKeyAttributes": [it.CREATED_AT, it.RUNNABLE_AT],
        },
    },
    it.OPEN_INDEX: {
        "IndexName": it.OPEN_INDEX,
        "KeySchema": [
            {"AttributeName": it.OPEN_Q, "KeyType": "HASH"},
            {"AttributeName": it.OPEN_K, "KeyType": "RANGE"},
        ],
        "Projection": {"ProjectionType": "KEYS_ONLY"},
    },
}
"""The two sparse global secondary indexes (see ``_rows`` for what they hold)."""


def table_definition() -> dict[str, object]:
    """The ``CreateTable`` arguments (without the name) of a fresh, on-demand table."""
    return {
        "AttributeDefinitions": [
            {"AttributeName": name, "AttributeType": kind} for name, kind in _ATTRIBUTES.items()
        ],
        "KeySchema": _KEY_SCHEMA,
        "GlobalSecondaryIndexes": list(INDEXES.values()),
        "BillingMode": "PAY_PER_REQUEST",
    }


async def _ensure_table(table: Table, wait_seconds: float) -> None:
    """Version 1: the table with its key schema and both indexes, all ACTIVE.

    A table that already exists (created by hand with provisioned capacity, say) is
    kept; its key schema is checked and any missing index is added with the table's
    own capacity settings.
    """
    found = await table.describe()
    if found is None:
        await table.create(table_definition())
    description = await _wait_active(table, wait_seconds)
    _check_keys(table.name, description)
    for name, index in INDEXES.items():
        if name in _index_names(description):
            continue
        request: dict[str, object] = {
            "AttributeDefinitions": [
                {"AttributeName": key["AttributeName"], "AttributeType": "S"}
                for key in _key_list(index["KeySchema"])
            ],
            "GlobalSecondaryIndexUpdates": [{"Create": _with_capacity(index, description)}],
        }
        await table.add_index(request)
        description = await _wait_active(table, wait_seconds)
    await _wait_active(table, wait_seconds)


async def _version_grants(table: Table, wait_seconds: float) -> None:
    """Version 2: Versions are granted to tenants, by ``g#`` items beside them.

    Nothing to create: the grants are new items in the same table, and a Version
    written before them carries no ``granted`` mark, which readers take as shared.
    Recording the version makes older releases refuse the table instead of reading
    every tenant's Versions without looking at the grants.
    """
    del table, wait_seconds


MIGRATIONS: tuple[Callable[[Table, float], Awaitable[None]], ...] = (
    _ensure_table,
    _version_grants,
)
"""``MIGRATIONS[n - 1]`` brings a table to schema version n; each step is idempotent."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this release reads and writes."""

_PACKAGE = "psych-store-dynamo"


async def current_version(table: Table) -> int:
    """The version recorded in the table; 0 when the table or the record is missing."""
    try:
        item = await table.get(it.META_KEY)
    except TableMissing:
        return 0
    if item is None:
        return 0
    return it.number(item, it.SCHEMA_VERSION_ATTRIBUTE)


async def verify(table: Table) -> None:
    """Refuse a table whose schema is not the one this release knows.

    Raises:
        SchemaTooNew: a newer release migrated the table.
        SchemaNotMigrated: the table is missing, never migrated, or at an older version.
        StoreUnavailable: DynamoDB cannot be reached.
    """
    try:
        item = await table.get(it.META_KEY)
    except (StoreUnavailable, SchemaNotMigrated):
        raise
    except StoreError:
        # Most likely a table of someone else's with other keys: say so plainly.
        description = await table.describe()
        if description is not None:
            _check_keys(table.name, description)
        raise
    version = 0 if item is None else it.number(item, it.SCHEMA_VERSION_ATTRIBUTE)
    check_schema_version(_where(table), version, needs=SCHEMA_VERSION, package=_PACKAGE)


async def migrate(table: Table, wait_seconds: float) -> list[int]:
    """Bring the table to ``SCHEMA_VERSION``; returns the versions this call recorded.

    Raises:
        SchemaTooNew: a newer release migrated the table; nothing is changed.
        StoreUnavailable: DynamoDB cannot be reached, or the table did not become
            ACTIVE within ``wait_seconds``.
        StoreError: the table exists with a key schema this store cannot use.
    """
    description = await table.describe()
    if description is not None:
        _check_keys(table.name, description)
    start = 0 if description is None else await current_version(table)
    if start > SCHEMA_VERSION:
        raise _too_new(table, start)
    applied: list[int] = []
    for version in range(start + 1, SCHEMA_VERSION + 1):
        await MIGRATIONS[version - 1](table, wait_seconds)
        if await _record(table, version):
            applied.append(version)
    if not applied:
        # Another process may have finished first; make sure the table is usable.
        await verify(table)
    return applied


async def _record(table: Table, version: int) -> bool:
    """Compare-and-set the recorded version; False when someone else got there first."""
    item: it.Item = {
        **it.META_KEY,
        it.SCHEMA_VERSION_ATTRIBUTE: it.n(version),
        "written_by": it.s(f"psych-store-dynamo {__version__}"),
    }
    try:
        await table.put(
            item,
            condition="attribute_not_exists(#version) OR #version < :version",
            values={":version": it.n(version)},
        )
    except ConditionFailed:
        found = await current_version(table)
        if found > SCHEMA_VERSION:
            raise _too_new(table, found) from None
        return False
    return True


async def _wait_active(table: Table, wait_seconds: float) -> dict[str, object]:
    """Poll until the table and every index are ACTIVE; returns the last description."""
    deadline = time.monotonic() + wait_seconds
    delay = 0.05
    while True:
        description = await table.describe()
        if description is not None and _all_active(description):
            return description
        if time.monotonic() >= deadline:
            raise StoreUnavailable(
                f"DynamoDB table {table.name!r} at {table.aws.where()} did not become "
                f"ACTIVE within {wait_seconds:g} s; run migrate again once it has"
            )
        await asyncio.sleep(delay)
        delay = min(delay * 2, 2.0)


def _all_active(description: Mapping[str, object]) -> bool:
    if description.get("TableStatus") != "ACTIVE":
        return False
    indexes = description.get("GlobalSecondaryIndexes")
    if not isinstance(indexes, list):
        return True
    return all(isinstance(i, dict) and i.get("IndexStatus") == "ACTIVE" for i in indexes)


def _index_names(description: Mapping[str, object]) -> set[str]:
    indexes = description.get("GlobalSecondaryIndexes")
    if not isinstance(indexes, list):
        return set()
    return {str(i.get("IndexName")) for i in indexes if isinstance(i, dict)}


def _key_list(raw: object) -> list[dict[str, str]]:
    if not isinstance(raw, list):
        return []
    return [{str(k): str(v) for k, v in entry.items()} for entry in raw if isinstance(entry, dict)]


def _check_keys(name: str, description: Mapping[str, object]) -> None:
    if _key_list(description.get("KeySchema")) != _KEY_SCHEMA:
        raise StoreError(
            f"DynamoDB table {name!r} exists with a key schema this store cannot use; it "
            f"needs a string partition key {it.PK!r} and a number sort key {it.SK!r} "
            "(pick another table name, or let migrate create the table)"
        )
    kinds = description.get("AttributeDefinitions")
    if isinstance(kinds, list):
        for entry in kinds:
            if (
                isinstance(entry, dict)
                and entry.get("AttributeName") == it.SK
                and entry.get("AttributeType") != "N"
            ):
                raise StoreError(
                    f"DynamoDB table {name!r}: its sort key {it.SK!r} must be a number"
                )


def _with_capacity(
    index: Mapping[str, object], description: Mapping[str, object]
) -> dict[str, object]:
    """The index definition, with throughput copied from a provisioned table."""
    created = dict(index)
    billing = description.get("BillingModeSummary")
    mode = billing.get("BillingMode") if isinstance(billing, dict) else None
    throughput = description.get("ProvisionedThroughput")
    if mode != "PAY_PER_REQUEST" and isinstance(throughput, dict):
        reads = throughput.get("ReadCapacityUnits")
        writes = throughput.get("WriteCapacityUnits")
        if isinstance(reads, int) and isinstance(writes, int) and reads > 0 and writes > 0:
            created["ProvisionedThroughput"] = {
                "ReadCapacityUnits": reads,
                "WriteCapacityUnits": writes,
            }
    return created


def _too_new(table: Table, version: int) -> SchemaTooNew:
    return schema_too_new(_where(table), version, knows=SCHEMA_VERSION, package=_PACKAGE)


def _where(table: Table) -> str:
    return f"DynamoDB table {table.name!r} at {table.aws.where()}"


__all__ = [
    "INDEXES",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "current_version",
    "migrate",
    "table_definition",
    "verify",
]
