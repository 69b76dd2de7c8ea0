import json
import zlib

import pytest

from psych_contract import _data as data
from psych_runtime import RunId
from psych_runtime.adapters import SchemaTooNew
from psych_runtime.records import record_to_json
from psych_store_postgres import _dictionary
from psych_store_postgres._rows import decode_batch
from psych_store_postgres._rows import decode_record
from psych_store_postgres._rows import decompress
from psych_store_postgres._rows import encode_batch
from psych_store_postgres._rows import encode_record
from psych_store_postgres._rows import run_id_json


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


def test_batches_are_compressed_against_the_pinned_dictionary() -> None:
    # Rows written with a dictionary can only be read with the very same bytes: the
    # checksum zlib stores for it must never change.
    assert zlib.adler32(_dictionary.RECORDS_V1) == 2955549408
    assert _dictionary.BY_ID[2955549408] is _dictionary.RECORDS_V1
    run = data.header(data.new_run_id())
    quoted = run_id_json(run.run_id)
    records = data.batch(run, 2, 3)
    body = encode_batch(records, quoted)
    assert body[1] & 0x20, "the stream names a preset dictionary"
    assert int.from_bytes(body[2:6], "big") == 2955549408
    assert decode_batch(2, body, quoted) == records
    plain = zlib.compress(zlib.decompressobj(zdict=_dictionary.RECORDS_V1).decompress(body))
    assert len(body) < len(plain)


def test_batches_written_before_the_dictionary_still_read() -> None:
    run = data.header(data.new_run_id())
    quoted = run_id_json(run.run_id)
    records = data.batch(run, 2, 4)
    lines = "\n".join(f"{r.type}\t{encode_record(r, quoted)}" for r in records)
    assert decode_batch(2, zlib.compress(lines.encode(), 6), quoted) == records


def test_a_batch_naming_an_unknown_dictionary_is_refused_as_too_new() -> None:
    compressor = zlib.compressobj(6, zdict=b"a dictionary from a later release")
    body = compressor.compress(b'turn_started\t{"turn":1}') + compressor.flush()
    with pytest.raises(SchemaTooNew, match="upgrade"):
        decompress(body)


def test_a_cut_batch_is_an_error_not_a_shorter_log() -> None:
    run = data.header(data.new_run_id())
    body = encode_batch(data.batch(run, 2, 3), run_id_json(run.run_id))
    with pytest.raises(zlib.error):
        decompress(body[:-8])
