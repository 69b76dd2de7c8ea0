"""One DynamoDB table seen through the handful of calls the store makes.

Each call turns botocore's errors into the outcomes the store branches on: a failed
condition, a cancelled transaction with its per-item reasons, or ``StoreUnavailable``
for anything that means "cannot reach or use the table right now". Base-table reads
are strongly consistent, so a read always sees the writes that preceded it.
"""

import asyncio
import random
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence

from psych_runtime.adapters.store import SchemaNotMigrated
from psych_store_dynamo import errors
from psych_store_dynamo._connection import DynamoClient
from psych_store_dynamo._connection import Response
from psych_store_dynamo._rows import Attribute
from psych_store_dynamo._rows import Item
from psych_store_dynamo._rows import names_in
from psych_store_dynamo._rows import wire_item
from psych_store_dynamo._rows import wire_items
from psych_store_dynamo.settings import AwsSettings

_SERVICE = "DynamoDB"
_BATCH_GET_MAX = 100
_BATCH_WRITE_MAX = 25


class ConditionFailed(Exception):
    """A conditional write's condition did not hold; nothing was written."""


class TransactionCanceled(Exception):
    """A transaction was refused as a whole; nothing of it was written.

    Attributes:
        reasons: one code per operation, DynamoDB's: ``None`` for an operation that
            was fine, ``ConditionalCheckFailed``, ``TransactionConflict``,
            ``ThrottlingError``...
        items: per operation, the item as it stood when its condition failed, for
            operations sent with ``ReturnValuesOnConditionCheckFailure=ALL_OLD``
            (None otherwise, and when there was no item).
    """

    def __init__(
        self, reasons: tuple[str, ...], items: tuple[Item | None, ...], message: str
    ) -> None:
        super().__init__(message)
        self.reasons = reasons
        self.items = items

    def item(self, position: int) -> Item | None:
        """The item returned for operation ``position``, if any."""
        return self.items[position] if position < len(self.items) else None


class TableMissing(SchemaNotMigrated):
    """The table does not exist (yet): ``migrate`` has not been run against it."""


class Table:
    """A table name bound to a client, with error translation.

    Args:
        client: an open DynamoDB client.
        name: the table.
        aws: how the client reaches DynamoDB, for error messages.
    """

    def __init__(self, client: DynamoClient, name: str, aws: AwsSettings) -> None:
        self.client = client
        self.name = name
        self.aws = aws

    def _fail(self, exc: Exception, operation: str) -> BaseException:
        """The exception to raise for ``exc``, which ``operation`` raised."""
        failure = errors.failure_of(exc)
        if failure is not None:
            if failure.code == "ConditionalCheckFailedException":
                return ConditionFailed(failure.message)
            if failure.code == "TransactionCanceledException":
                reasons, items = _cancellation(failure.response)
                return TransactionCanceled(reasons, items, failure.message)
            if failure.code == "ResourceNotFoundException":
                return TableMissing(
                    f"DynamoDB table {self.name!r} does not exist at {self.aws.where()}; "
                    "create it with `await store.migrate()` (or open_store(url, migrate=True))"
                )
        replacement = errors.translate(exc, _SERVICE, self.aws)
        if replacement is not None:
            return replacement
        if failure is not None:
            return errors.unexpected(failure, _SERVICE, operation)
        return exc

    async def _send(
        self, operation: str, call: Callable[..., Awaitable[Response]], **request: object
    ) -> Response:
        """Send one request by ``call``; a failure is raised as ``_fail`` words it."""
        try:
            return await call(**request)
        except Exception as exc:
            raise self._fail(exc, operation) from exc

    async def get(self, key: Item, *, projection: Sequence[str] = ()) -> Item | None:
        """The item under ``key`` (strongly consistent), or None."""
        request: dict[str, object] = {
            "TableName": self.name,
            "Key": key,
            "ConsistentRead": True,
        }
        if projection:
            expression = ", ".join("#" + name for name in projection)
            request["ProjectionExpression"] = expression
            request["ExpressionAttributeNames"] = names_in(expression)
        response = await self._send("GetItem", self.client.get_item, **request)
        return wire_item(response.get("Item"))

    async def put(
        self,
        item: Item,
        *,
        condition: str | None = None,
        values: Mapping[str, Attribute] | None = None,
    ) -> None:
        """Write ``item``, if ``condition`` holds.

        Raises:
            ConditionFailed: the condition did not hold.
        """
        request = self._expressions({"TableName": self.name, "Item": item}, condition, values)
        await self._send("PutItem", self.client.put_item, **request)

    async def update(
        self,
        key: Item,
        update: str,
        *,
        condition: str | None = None,
        values: Mapping[str, Attribute] | None = None,
        return_new: bool = False,
    ) -> Item | None:
        """Apply ``update`` to the item under ``key``, if ``condition`` holds.

        Returns:
            The whole item after the update when ``return_new``, else None.

        Raises:
            ConditionFailed: the condition did not hold (a missing item fails any
                condition that reads an attribute).
        """
        request = self._expressions(
            {"TableName": self.name, "Key": key, "UpdateExpression": update},
            condition,
            values,
            update,
        )
        if return_new:
            request["ReturnValues"] = "ALL_NEW"
        response = await self._send("UpdateItem", self.client.update_item, **request)
        return wire_item(response.get("Attributes")) if return_new else None

    async def query(
        self,
        key_condition: str,
        values: Mapping[str, Attribute],
        *,
        index: str | None = None,
        limit: int | None = None,
        start: Item | None = None,
        filter_expression: str | None = None,
        forward: bool = True,
        projection: Sequence[str] = (),
    ) -> tuple[list[Item], Item | None]:
        """One page of a Query: the items and the key to continue from (None at the end).

        Base-table queries are strongly consistent; index queries cannot be. With
        ``forward`` False the page runs from the highest sort key down; with a
        ``projection`` only the attributes named are returned.
        """
        request: dict[str, object] = {
            "TableName": self.name,
            "KeyConditionExpression": key_condition,
            "ExpressionAttributeValues": dict(values),
        }
        projected = ", ".join("#" + name for name in projection) or None
        names = names_in(key_condition, filter_expression, projected)
        if names:
            request["ExpressionAttributeNames"] = names
        if projected is not None:
            request["ProjectionExpression"] = projected
        if not forward:
            request["ScanIndexForward"] = False
        if index is None:
            request["ConsistentRead"] = True
        else:
            request["IndexName"] = index
        if limit is not None:
            request["Limit"] = limit
        if start is not None:
            request["ExclusiveStartKey"] = start
        if filter_expression is not None:
            request["FilterExpression"] = filter_expression
        response = await self._send("Query", self.client.query, **request)
        return wire_items(response.get("Items")), wire_item(response.get("LastEvaluatedKey"))

    async def scan(
        self,
        filter_expression: str,
        values: Mapping[str, Attribute],
        *,
        start: Item | None = None,
    ) -> tuple[list[Item], Item | None]:
        """One strongly consistent page of a Scan of the whole table, filtered.

        Only operators' listings call this; nothing on a Run's path scans.
        """
        request: dict[str, object] = {
            "TableName": self.name,
            "FilterExpression": filter_expression,
            "ExpressionAttributeValues": dict(values),
            "ConsistentRead": True,
        }
        names = names_in(filter_expression)
        if names:
            request["ExpressionAttributeNames"] = names
        if start is not None:
            request["ExclusiveStartKey"] = start
        response = await self._send("Scan", self.client.scan, **request)
        return wire_items(response.get("Items")), wire_item(response.get("LastEvaluatedKey"))

    async def scan_all(self, *, start: Item | None = None) -> tuple[list[Item], Item | None]:
        """One strongly consistent page of every item of the table, unfiltered.

        Only ``raw_storage`` calls this, for tests and audits.
        """
        request: dict[str, object] = {"TableName": self.name, "ConsistentRead": True}
        if start is not None:
            request["ExclusiveStartKey"] = start
        response = await self._send("Scan", self.client.scan, **request)
        return wire_items(response.get("Items")), wire_item(response.get("LastEvaluatedKey"))

    async def batch_get(self, keys: Sequence[Item]) -> list[Item]:
        """The items under ``keys`` that exist (strongly consistent), in no set order."""
        found: list[Item] = []

        async def send(pending: list[Item]) -> list[Item]:
            request = {self.name: {"Keys": pending, "ConsistentRead": True}}
            response = await self._send(
                "BatchGetItem", self.client.batch_get_item, RequestItems=request
            )
            responses = response.get("Responses")
            if isinstance(responses, dict):
                found.extend(wire_items(responses.get(self.name)))
            return _unprocessed(response, self.name)

        await _in_batches(keys, _BATCH_GET_MAX, send)
        return found

    async def batch_delete(self, keys: Sequence[Item]) -> None:
        """Delete the items under ``keys`` (missing ones are no error), 25 per request.

        Deletes DynamoDB leaves unprocessed (under throttling, say) are sent again,
        after a growing pause, until every one of them has been applied.
        """

        async def send(pending: list[Item]) -> list[Item]:
            request = {self.name: [{"DeleteRequest": {"Key": key}} for key in pending]}
            response = await self._send(
                "BatchWriteItem", self.client.batch_write_item, RequestItems=request
            )
            return _unprocessed_deletes(response, self.name)

        await _in_batches(keys, _BATCH_WRITE_MAX, send)

    async def delete_item(
        self,
        key: Item,
        *,
        condition: str | None = None,
        values: Mapping[str, Attribute] | None = None,
    ) -> None:
        """Delete the item under ``key``, if ``condition`` holds.

        Raises:
            ConditionFailed: the condition did not hold; nothing was deleted.
        """
        request = self._expressions({"TableName": self.name, "Key": key}, condition, values)
        await self._send("DeleteItem", self.client.delete_item, **request)

    async def transact(self, operations: Sequence[Mapping[str, object]]) -> None:
        """Run ``operations`` as one all-or-nothing ``TransactWriteItems``.

        Each operation is ``{"Put": {...}}``, ``{"Update": {...}}`` or
        ``{"ConditionCheck": {...}}`` without its ``TableName`` (added here).

        Raises:
            TransactionCanceled: the transaction was refused; nothing was written.
        """
        items: list[dict[str, object]] = []
        for operation in operations:
            ((kind, body),) = operation.items()
            if not isinstance(body, Mapping):
                raise TypeError(f"transaction operation {kind!r} must be a mapping")
            complete = dict(body)
            complete["TableName"] = self.name
            names = names_in(
                _optional_str(complete.get("ConditionExpression")),
                _optional_str(complete.get("UpdateExpression")),
            )
            if names:
                complete["ExpressionAttributeNames"] = names
            items.append({kind: complete})
        await self._send(
            "TransactWriteItems", self.client.transact_write_items, TransactItems=items
        )

    async def describe(self) -> Response | None:
        """The table's description, or None when it does not exist."""
        try:
            response = await self.client.describe_table(TableName=self.name)
        except Exception as exc:
            failure = errors.failure_of(exc)
            if failure is not None and failure.code == "ResourceNotFoundException":
                return None
            raise self._fail(exc, "DescribeTable") from exc
        table = response.get("Table")
        return dict(table) if isinstance(table, dict) else None

    async def create(self, definition: Mapping[str, object]) -> bool:
        """Create the table; False when it already exists (someone else created it)."""
        try:
            await self.client.create_table(TableName=self.name, **definition)
        except Exception as exc:
            failure = errors.failure_of(exc)
            if failure is not None and failure.code == "ResourceInUseException":
                return False
            raise self._fail(exc, "CreateTable") from exc
        return True

    async def add_index(self, request: Mapping[str, object]) -> bool:
        """Start building a global secondary index; False when one is already underway."""
        try:
            await self.client.update_table(TableName=self.name, **request)
        except Exception as exc:
            failure = errors.failure_of(exc)
            if failure is not None and failure.code in (
                "ResourceInUseException",
                "LimitExceededException",
            ):
                return False
            if (
                failure is not None
                and failure.code == "ValidationException"
                and ("already exists" in failure.message)
            ):
                return False
            raise self._fail(exc, "UpdateTable") from exc
        return True

    async def delete(self) -> bool:
        """Delete the table and everything in it; False when it did not exist."""
        try:
            await self.client.delete_table(TableName=self.name)
        except Exception as exc:
            failure = errors.failure_of(exc)
            if failure is not None and failure.code == "ResourceNotFoundException":
                return False
            raise self._fail(exc, "DeleteTable") from exc
        return True

    def _expressions(
        self,
        request: dict[str, object],
        condition: str | None,
        values: Mapping[str, Attribute] | None,
        *other: str,
    ) -> dict[str, object]:
        if condition is not None:
            request["ConditionExpression"] = condition
        names = names_in(condition, *other)
        if names:
            request["ExpressionAttributeNames"] = names
        if values:
            request["ExpressionAttributeValues"] = dict(values)
        return request


def _optional_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _cancellation(response: Response) -> tuple[tuple[str, ...], tuple[Item | None, ...]]:
    """The per-operation codes and returned items of a cancelled transaction."""
    raw = response.get("CancellationReasons")
    if not isinstance(raw, list):
        return (), ()
    codes: list[str] = []
    items: list[Item | None] = []
    for reason in raw:
        entry = reason if isinstance(reason, dict) else {}
        code = entry.get("Code")
        codes.append(code if isinstance(code, str) else "None")
        items.append(wire_item(entry.get("Item")))
    return tuple(codes), tuple(items)


async def _in_batches(
    items: Sequence[Item], size: int, send: Callable[[list[Item]], Awaitable[list[Item]]]
) -> None:
    """Hand ``items`` to ``send`` ``size`` at a time, resending what it returns.

    ``send`` makes one batch request and returns the items DynamoDB left unprocessed;
    those go again after a pause that doubles each time (up to a second).
    """
    for first in range(0, len(items), size):
        pending = list(items[first : first + size])
        delay = 0.01
        while pending:
            pending = await send(pending)
            if pending:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)


def _unprocessed_deletes(response: Response, table: str) -> list[Item]:
    """The keys of the delete requests a BatchWriteItem left unprocessed."""
    raw = response.get("UnprocessedItems")
    entries = raw.get(table) if isinstance(raw, dict) else None
    if not isinstance(entries, list):
        return []
    requests = [entry.get("DeleteRequest") for entry in entries if isinstance(entry, dict)]
    keys = [wire_item(request.get("Key")) for request in requests if isinstance(request, dict)]
    return [key for key in keys if key is not None]


def _unprocessed(response: Response, table: str) -> list[Item]:
    raw = response.get("UnprocessedKeys")
    if not isinstance(raw, dict):
        return []
    entry = raw.get(table)
    if not isinstance(entry, dict):
        return []
    return wire_items(entry.get("Keys"))


async def back_off(attempt: int) -> None:
    """Sleep a little before retrying, longer each try, jittered so racers spread out."""
    await asyncio.sleep(random.uniform(0, 0.005 * 2**attempt))


__all__ = ["ConditionFailed", "Table", "TableMissing", "TransactionCanceled", "back_off"]
