"""Against the server: refused batches leave nothing behind; the largest allowed fit."""

import pytest

from psych_contract import _data as data
from psych_runtime.adapters import RecordTooLarge
from psych_store_dynamo import BatchTooLarge

from ..conftest import StoreFactory
from ..conftest import queued_text

ITEM_LIMIT = 400_000


async def test_an_oversized_record_writes_nothing_of_its_batch(make_store: StoreFactory) -> None:
    store = await make_store()
    run, admitted = data.admission()
    await store.create_run(run, admitted)
    with pytest.raises(RecordTooLarge, match="seq 3"):
        await store.append(
            run.run_id, 2, [queued_text(run, 2, 10), queued_text(run, 3, ITEM_LIMIT)]
        )
    assert await store.head(run.run_id) == 1
    assert await store.read(run.run_id) == [admitted]
    assert await store.get_run(run.run_id) == run


async def test_a_record_just_under_the_item_limit_is_stored_and_read_back(
    make_store: StoreFactory,
) -> None:
    store = await make_store()
    run, admitted = data.admission()
    await store.create_run(run, admitted)
    big = queued_text(run, 2, ITEM_LIMIT - 2048)
    await store.append(run.run_id, 2, [big])
    assert await store.read(run.run_id, after=1) == [big]


async def test_the_largest_batch_fits_one_transaction(make_store: StoreFactory) -> None:
    store = await make_store()
    run, admitted = data.admission()
    await store.create_run(run, admitted)
    with pytest.raises(BatchTooLarge):
        await store.append(run.run_id, 2, data.batch(run, 2, 100))
    assert await store.head(run.run_id) == 1
    await store.append(run.run_id, 2, data.batch(run, 2, 99))
    assert await store.head(run.run_id) == 100
    assert [record.seq for record in await store.read(run.run_id)] == list(range(1, 101))


async def test_a_log_larger_than_one_query_page_reads_whole(make_store: StoreFactory) -> None:
    # DynamoDB returns at most 1 MB per Query page; 3 MB of records needs several.
    store = await make_store()
    run, admitted = data.admission()
    await store.create_run(run, admitted)
    records = [queued_text(run, seq, 300_000) for seq in range(2, 12)]
    await store.append(run.run_id, 2, records[:5])
    await store.append(run.run_id, 7, records[5:])
    assert await store.read(run.run_id) == [admitted, *records]
    window = await store.read(run.run_id, after=3, limit=6)
    assert [record.seq for record in window] == [4, 5, 6, 7, 8, 9]
