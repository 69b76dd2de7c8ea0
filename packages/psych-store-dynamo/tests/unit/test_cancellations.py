"""How a cancelled append is explained: retried, SeqConflict, LeaseLost or RunNotFound.

DynamoDB cancels a transaction that overlaps another in-flight transaction
(``TransactionConflict``), which moto never does, so these cases drive the store with
a stand-in client that answers exactly as DynamoDB documents. Everything else about
appends runs against the real server in the contract suite.
"""

import importlib
from collections.abc import Iterator

import pytest

from psych_contract import _data as data
from psych_runtime import RunNotFound
from psych_runtime import StoreError
from psych_runtime.adapters import Fence
from psych_runtime.adapters import LeaseLost
from psych_runtime.adapters import SeqConflict
from psych_runtime.records import WorkerId
from psych_store_dynamo import DynamoStore
from psych_store_dynamo import _rows as it
from psych_store_dynamo._table import Table

Response = dict[str, object]


def _cancelled(*codes: str, item: it.Item | None = None) -> Exception:
    exceptions = importlib.import_module("botocore.exceptions")
    reasons: list[dict[str, object]] = [{"Code": code} for code in codes]
    if item is not None:
        reasons[0]["Item"] = item
    error: Exception = exceptions.ClientError(
        {
            "Error": {"Code": "TransactionCanceledException", "Message": "cancelled"},
            "CancellationReasons": reasons,
        },
        "TransactWriteItems",
    )
    return error


class ScriptedClient:
    """Answers TransactWriteItems from a script and GetItem with a fixed header."""

    def __init__(self, outcomes: list[Exception | None], header: it.Item | None) -> None:
        self.outcomes: Iterator[Exception | None] = iter(outcomes)
        self.header = header
        self.transactions = 0
        self.reads = 0

    async def transact_write_items(self, **request: object) -> Response:
        self.transactions += 1
        outcome = next(self.outcomes)
        if outcome is not None:
            raise outcome
        return {}

    async def get_item(self, **request: object) -> Response:
        self.reads += 1
        return {} if self.header is None else {"Item": self.header}


def _store(client: ScriptedClient) -> DynamoStore:
    store = DynamoStore("dynamodb://psych-scripted?region=us-east-1")
    # Stand in for the client the store would open, and skip the schema check.
    store._table.opened = Table(client, store.table_name, store.settings.aws)  # type: ignore[arg-type]
    store._verified = True
    return store


def _header_item(head: int, holder: str | None = None, attempt: int = 0) -> it.Item:
    run = data.header()
    if holder is not None:
        run = run.model_copy(update={"lease_holder": WorkerId(holder), "attempt_count": attempt})
    return it.header_item(run, head)


async def test_a_conflict_with_an_unmoved_head_is_retried_until_it_lands() -> None:
    run = data.header()
    conflict = _cancelled("TransactionConflict", "None")
    client = ScriptedClient([conflict, conflict, None], _header_item(head=1))
    store = _store(client)
    await store.append(run.run_id, 2, data.batch(run, 2, 1))
    assert client.transactions == 3
    seen = store.notifier.generation(run.run_id)
    assert seen == 1  # signalled once, after the append that landed


async def test_a_conflict_after_which_the_head_moved_is_a_seq_conflict() -> None:
    run = data.header()
    client = ScriptedClient([_cancelled("TransactionConflict", "None")], _header_item(head=2))
    with pytest.raises(SeqConflict):
        await _store(client).append(run.run_id, 2, data.batch(run, 2, 1))
    assert client.transactions == 1


async def test_a_failed_header_condition_uses_the_returned_item_without_a_read() -> None:
    run = data.header()
    stale = _header_item(head=1, holder="w2", attempt=2)
    client = ScriptedClient([_cancelled("ConditionalCheckFailed", "None", item=stale)], None)
    with pytest.raises(LeaseLost):
        await _store(client).append(
            run.run_id, 2, data.batch(run, 2, 1), fence=Fence(WorkerId("w1"), 1)
        )
    assert client.reads == 0


@pytest.mark.parametrize(
    ("header_reason", "record_reason", "error", "reads"),
    [
        # Without the item the condition failed on, the header is read back to tell why.
        pytest.param("ConditionalCheckFailed", "None", RunNotFound, 1, id="header-without-item"),
        pytest.param("None", "ConditionalCheckFailed", SeqConflict, 0, id="record-key-taken"),
    ],
)
async def test_a_failed_condition_names_its_cause(
    header_reason: str, record_reason: str, error: type[Exception], reads: int
) -> None:
    run = data.header()
    client = ScriptedClient([_cancelled(header_reason, record_reason)], None)
    with pytest.raises(error):
        await _store(client).append(run.run_id, 2, data.batch(run, 2, 1))
    assert client.reads == reads


async def test_an_unknown_cancellation_reason_is_reported_not_retried() -> None:
    run = data.header()
    client = ScriptedClient([_cancelled("ValidationError", "None")], None)
    with pytest.raises(StoreError, match="ValidationError"):
        await _store(client).append(run.run_id, 2, data.batch(run, 2, 1))
    assert client.transactions == 1


async def test_endless_conflicts_give_up_as_unavailable() -> None:
    from psych_runtime import StoreUnavailable

    run = data.header()
    conflicts: list[Exception | None] = [_cancelled("TransactionConflict", "None")] * 8
    client = ScriptedClient(conflicts, _header_item(head=1))
    with pytest.raises(StoreUnavailable, match="concurrent transactions"):
        await _store(client).append(run.run_id, 2, data.batch(run, 2, 1))
    assert client.transactions == 8
