"""Converting between the port's models and this store's rows.

One append is one row. Its body holds the batch's records, one per line, each as its
``type``, a tab, and the compact JSON ``record_to_json`` produces minus the three
envelope fields that open it (``type``, ``run_id``, ``seq``): the row already knows the
run, and the seq follows from the row's ``first_seq`` and the line's position. The
lines are zlib-compressed together against a preset dictionary (``_dictionary``): the
records of one batch repeat the same keys, ids and scope, and every batch repeats the
field names and record types the dictionary already holds. If a record's JSON ever
does not start with the expected prefix, its line carries the JSON whole, and reading
tells the two apart by whether it opens with ``{"type":``.
"""

import json
import zlib
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from typing import TYPE_CHECKING

from psych_runtime import Scope
from psych_runtime.adapters.memory import Memory
from psych_runtime.adapters.memory import MemoryKey
from psych_runtime.adapters.store import RunHeader
from psych_runtime.adapters.store import SchemaTooNew
from psych_runtime.adapters.store import header_from_row as decode_header
from psych_runtime.records import Record
from psych_runtime.records import record_from_json
from psych_runtime.records import record_to_json
from psych_store_postgres import _dictionary

if TYPE_CHECKING:
    import asyncpg

_WHOLE = '{"type":'


def aware(moment: datetime) -> datetime:
    """Treat a naive datetime as UTC so the driver never applies the local zone."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def maybe_aware(moment: datetime | None) -> datetime | None:
    """``aware`` for optional columns."""
    return None if moment is None else aware(moment)


def _envelope(record_type: str, run_id_json: str, seq: int) -> str:
    return f'{{"type":{json.dumps(record_type)},"run_id":{run_id_json},"seq":{seq},'


def encode_record(record: Record, run_id_json: str) -> str:
    """The JSON body stored for ``record``; ``run_id_json`` is ``json.dumps(run_id)``."""
    whole = record_to_json(record).decode()
    prefix = _envelope(record.type, run_id_json, record.seq)
    if whole.startswith(prefix):
        return "{" + whole[len(prefix) :]
    return whole


def decode_record(seq: int, record_type: str, body: str, run_id_json: str) -> Record:
    """Rebuild a record from its row (see ``encode_record``)."""
    if body.startswith(_WHOLE):
        return record_from_json(body)
    return record_from_json(_envelope(record_type, run_id_json, seq) + body[1:])


_LEVEL = 6


_FDICT = 0x20
"""The flag in a zlib stream's second byte saying a preset dictionary follows (RFC 1950)."""


def compress(data: bytes) -> bytes:
    """A zlib stream of ``data`` primed with the current preset dictionary."""
    compressor = zlib.compressobj(_LEVEL, zdict=_dictionary.CURRENT)
    return compressor.compress(data) + compressor.flush()


def decompress(body: bytes) -> bytes:
    """The bytes of a stored zlib stream, with whichever dictionary its header names.

    Batches written before dictionaries existed carry no dictionary flag and
    decompress plainly.

    Raises:
        SchemaTooNew: the batch was compressed with a dictionary only a newer release
            of this package has.
    """
    if len(body) < 6 or not body[1] & _FDICT:
        return zlib.decompress(body)
    dictionary = _dictionary.BY_ID.get(int.from_bytes(body[2:6], "big"))
    if dictionary is None:
        raise SchemaTooNew(
            "a stored batch was compressed with a dictionary this release of "
            "psych-store-postgres does not have; upgrade it to read this database"
        )
    decompressor = zlib.decompressobj(zdict=dictionary)
    data = decompressor.decompress(body) + decompressor.flush()
    if not decompressor.eof:
        raise zlib.error("a stored batch ends before its compressed stream does")
    return data


def encode_batch(records: Sequence[Record], run_id_json: str) -> bytes:
    """The stored body of one append (``records`` are consecutive and non-empty)."""
    lines = "\n".join(f"{record.type}\t{encode_record(record, run_id_json)}" for record in records)
    return compress(lines.encode())


def decode_batch(first_seq: int, body: bytes, run_id_json: str) -> list[Record]:
    """Every record of one stored append, in order."""
    out: list[Record] = []
    for offset, line in enumerate(decompress(body).decode().split("\n")):
        record_type, _, data = line.partition("\t")
        out.append(decode_record(first_seq + offset, record_type, data, run_id_json))
    return out


def run_id_json(run_id: str) -> str:
    """The run id as a JSON string, computed once per call rather than once per record."""
    return json.dumps(run_id, ensure_ascii=False)


def scope_json(scope: Scope) -> str:
    """The header's scope as compact JSON (defaults left out)."""
    return scope.model_dump_json(exclude_defaults=True)


def header_from_row(row: "asyncpg.Record") -> RunHeader:
    """A ``RunHeader`` from a row holding ``_queries.HEADER_COLUMNS``.

    Each column is checked, so a value the database should never have produced (an
    unknown state, say) fails here rather than deep in a Worker.
    """
    return decode_header(tuple(row.values()), source="psych-store-postgres")


def memory_from_row(key: MemoryKey, row: "asyncpg.Record") -> Memory:
    """A fact of ``key`` from its ``(id, content, created_at)`` row.

    ``timestamptz`` keeps microseconds and asyncpg returns it in UTC, so the fact
    equals the one ``remember`` returned.
    """
    fact_id, content, created_at = row.values()
    return Memory(id=fact_id, key=key, content=content, created_at=created_at)


__all__ = [
    "aware",
    "compress",
    "decode_batch",
    "decode_record",
    "decompress",
    "encode_batch",
    "encode_record",
    "header_from_row",
    "maybe_aware",
    "memory_from_row",
    "run_id_json",
    "scope_json",
]
