"""What lands in the tables: lean rows that still read back exactly."""

from collections.abc import Awaitable, Callable

import asyncpg

from psych_contract import _data as data
from psych_store_postgres import PostgresStore

Factory = Callable[..., Awaitable[PostgresStore]]


async def test_record_rows_hold_the_envelope_in_columns_not_in_the_body(
    make_store: Factory, server: str, schema: str
) -> None:
    store = await make_store()
    run = (await store.create_run(*data.admission())).header
    written = data.batch(run, 2, 5)
    await store.append(run.run_id, 2, written)
    conn = await asyncpg.connect(server)
    try:
        rows = await conn.fetch(
            f'SELECT seq, type, body::text AS body FROM "{schema}".psych_records ORDER BY seq'
        )
    finally:
        await conn.close()
    assert [row["seq"] for row in rows] == [1, 2, 3, 4, 5, 6]
    assert [row["type"] for row in rows[1:]] == [record.type for record in written]
    for row in rows:
        assert '"run_id"' not in row["body"]
        assert '"seq"' not in row["body"]
        assert not row["body"].startswith('{"type"')
    assert await store.read(run.run_id, after=1) == written


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
