"""DynamoDB's item and transaction limits are enforced before any request is sent.

The store under test points at a port nobody listens on, so any request would fail
with StoreUnavailable: getting RecordTooLarge or BatchTooLarge instead proves the
refusal happened before anything went over the wire (and so before anything could be
written).
"""

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from psych_contract import _data as data
from psych_runtime import StoreError
from psych_runtime import StoreUnavailable
from psych_runtime.adapters import RecordTooLarge
from psych_store_dynamo import BatchTooLarge
from psych_store_dynamo import DynamoStore

from ..conftest import free_port
from ..conftest import queued_text

ITEM_LIMIT = 400_000


@pytest_asyncio.fixture
async def unreachable() -> AsyncIterator[DynamoStore]:
    port = free_port()
    store = DynamoStore(
        f"dynamodb://psych-limits?region=us-east-1&endpoint_url=http://127.0.0.1:{port}",
        max_attempts=1,
        connect_timeout=0.5,
        read_timeout=0.5,
    )
    yield store
    await store.close()


async def test_an_oversized_record_is_refused_before_any_request(
    unreachable: DynamoStore,
) -> None:
    run = data.header()
    records = [queued_text(run, 2, 10), queued_text(run, 3, ITEM_LIMIT)]
    with pytest.raises(RecordTooLarge) as caught:
        await unreachable.append(run.run_id, 2, records)
    message = str(caught.value)
    assert run.run_id in message
    assert "seq 3" in message
    assert str(ITEM_LIMIT) in message
    assert "BlobStore" in message


async def test_an_oversized_admission_is_refused_before_any_request(
    unreachable: DynamoStore,
) -> None:
    run, admitted = data.admission(message="y" * ITEM_LIMIT)
    with pytest.raises(RecordTooLarge, match="seq 1"):
        await unreachable.create_run(run, admitted)


async def test_a_record_just_under_the_limit_gets_as_far_as_the_network(
    unreachable: DynamoStore,
) -> None:
    # The check must not be so cautious that it refuses what DynamoDB would take.
    run = data.header()
    with pytest.raises(StoreUnavailable):
        await unreachable.append(run.run_id, 2, [queued_text(run, 2, ITEM_LIMIT - 2048)])


async def test_a_batch_of_more_than_99_records_is_refused(unreachable: DynamoStore) -> None:
    run = data.header()
    with pytest.raises(BatchTooLarge, match="smaller batches"):
        await unreachable.append(run.run_id, 2, data.batch(run, 2, 100))
    with pytest.raises(StoreUnavailable):  # 99 records and the header fit
        await unreachable.append(run.run_id, 2, data.batch(run, 2, 99))


async def test_a_batch_over_four_megabytes_is_refused(unreachable: DynamoStore) -> None:
    run = data.header()
    records = [queued_text(run, seq, 380 * 1024) for seq in range(2, 14)]  # 12 x 380 KB
    with pytest.raises(BatchTooLarge, match="4000000"):
        await unreachable.append(run.run_id, 2, records)


async def test_batch_too_large_is_a_store_error_and_a_value_error() -> None:
    error = BatchTooLarge("too big")
    assert isinstance(error, ValueError)
    assert isinstance(error, StoreError)
