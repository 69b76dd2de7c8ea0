import json

from psych_contract import _data as data
from psych_runtime import RunId
from psych_runtime.records import record_to_json
from psych_store_postgres._rows import (
    decode_batch,
    decode_record,
    encode_batch,
    encode_record,
    run_id_json,
)


def test_the_envelope_is_left_out_of_the_stored_body_and_restored_on_read() -> None:
    run = data.header(data.new_run_id())
    quoted = run_id_json(run.run_id)
    for record in data.batch(run, 2, 20):
        body = encode_record(record, quoted)
        stored = json.loads(body)
        assert {"type", "run_id", "seq"}.isdisjoint(stored)
        assert len(body) < len(record_to_json(record))
        assert decode_record(record.seq, record.type, body, quoted) == record


def test_awkward_run_ids_round_trip() -> None:
    for odd in ('run "quoted" \\ slash', "run-ünïcødé-✓", "run\nnewline\ttab"):
        run = data.header(RunId(odd))
        quoted = run_id_json(run.run_id)
        for record in data.batch(run, 2, 3):
            body = encode_record(record, quoted)
            assert decode_record(record.seq, record.type, body, quoted) == record


def test_a_body_stored_whole_is_read_back_as_it_is() -> None:
    # A body that did not start with the expected prefix is stored whole; reading must
    # not splice a second envelope into it.
    run = data.header(data.new_run_id())
    record = data.batch(run, 2, 1)[0]
    whole = record_to_json(record).decode()
    assert decode_record(record.seq, record.type, whole, run_id_json(run.run_id)) == record


def test_a_batch_round_trips_and_compresses() -> None:
    run = data.admission()[0]
    records = data.batch(run, 2, 6)
    quoted = run_id_json(run.run_id)
    body = encode_batch(records, quoted)
    assert decode_batch(2, body, quoted) == records
    plain = sum(len(r.model_dump_json()) for r in records)
    assert len(body) < plain / 2
