"""What lands in the tables: lean rows that still read back exactly."""

from collections.abc import Awaitable
from collections.abc import Callable

import asyncpg

from psych_contract import _data as data
from psych_contract.lifecycle import closing
from psych_store_postgres import PostgresStore
from psych_store_postgres._rows import decompress

Factory = Callable[..., Awaitable[PostgresStore]]


async def test_one_append_is_one_compressed_row_without_the_envelope(
    make_store: Factory, server: str, schema: str
) -> None:
    store = await make_store()
    run = (await store.create_run(*data.admission())).header
    written = data.batch(run, 2, 5)
    await store.append(run.run_id, 2, written)
    more = data.batch(run, 7, 1)
    await store.append(run.run_id, 7, more)
    async with closing(await asyncpg.connect(server)) as conn:
        rows = await conn.fetch(
            f'SELECT first_seq, last_seq, body FROM "{schema}".psych_records ORDER BY first_seq'
        )
    assert [(row["first_seq"], row["last_seq"]) for row in rows] == [(1, 1), (2, 6), (7, 7)]
    for row in rows:
        lines = decompress(row["body"]).decode().split("\n")
        assert len(lines) == row["last_seq"] - row["first_seq"] + 1
        for line in lines:
            record_type, _, body = line.partition("\t")
            assert record_type and body.startswith("{")
            assert '"run_id"' not in body and '"seq"' not in body
            assert not body.startswith('{"type"')
    assert await store.read(run.run_id, after=1) == [*written, *more]
    # Windows that start and end inside a batch row are cut exactly.
    assert await store.read(run.run_id, after=3, limit=2) == written[2:4]
    assert await store.read(run.run_id, after=5, limit=10) == [written[4], *more]
    assert await store.head(run.run_id) == 7


async def test_control_characters_and_astral_text_round_trip(make_store: Factory) -> None:
    store = await make_store()
    run = (await store.create_run(*data.admission())).header
    odd = data.consumer_record(run, 2, note='nul \x00 bell \x07 emoji \U0001f600 quote " ü')
    await store.append(run.run_id, 2, [odd])
    assert await store.read(run.run_id, after=1) == [odd]


async def test_naive_datetimes_are_taken_as_utc(make_store: Factory) -> None:
    store = await make_store()
    run, admitted = data.admission(runnable_at=data.at(60))
    await store.create_run(run, admitted)
    naive = data.at(30).replace(tzinfo=None)
    await store.set_runnable_at(run.run_id, naive)
    stored = await store.get_run(run.run_id)
    assert stored is not None
    assert stored.runnable_at == data.at(30)
    assert stored.runnable_at.utcoffset() is not None
