"""How Runs, records, Versions and keys are laid out as DynamoDB items.

One table holds everything (single-table design). Every item has a string partition
key ``pk`` and a numeric sort key ``sk``:

===========================  ======  ===================================================
pk                           sk      what
===========================  ======  ===================================================
``r#<run id>``               0       the Run's header (state, lease, head_seq, ...)
``r#<run id>``               seq     one record, as compact JSON in ``rec``
``k#<tenant>#<key>``         0       an idempotency key, naming the Run it admitted
``v#<version hash>``         0       a published Version (its canonical export)
``g#<version hash>#<tenant>``  0     a tenant's grant of a Version (its publication time)
``g#<version hash>``         0       the grant sharing a Version with every tenant
``meta#schema``              0       the schema version ``migrate`` applied
``m#<n>#<tenant><end user>``  time   one fact about an end user (``memory_pk``)
===========================  ======  ===================================================

A Run's header and its records share a partition, so a range read is one Query on
``sk``. The header also carries the keys of two sparse global secondary indexes,
present only while they apply, so the claim and the sweeps never scan:

* ``claimable`` (``claim_q``, ``claim_k``): partition ``ready`` holds runnable Runs
  without a parking time, sorted by ``created_at``; ``parked`` holds runnable Runs
  with a ``runnable_at``, sorted by it; ``leased`` holds running Runs, sorted by lease
  expiry. Suspended, nested and settled Runs are absent.
* ``unsettled`` (``open_q``, ``open_k``): every Run not yet settled, sorted by deadline.

A fact's sort key is its ``created_at`` in whole microseconds, so a Query of one end
user's partition returns the facts in the order they are recalled, in either
direction. Two facts of one end user never share a microsecond (the write is
conditional, see ``DynamoMemoryStore.remember``), so the sort key alone orders them.

Instants are stored as whole microseconds since the Unix epoch (type N), so
conditions compare them exactly; inside index sort keys they are zero-padded decimal
microseconds since year 1, so that string order is time order.
"""

import hashlib
import re
from collections.abc import Mapping
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from urllib.parse import quote

from psych_runtime import RunId
from psych_runtime import Scope
from psych_runtime import VersionHash
from psych_runtime.adapters.memory import Memory
from psych_runtime.adapters.memory import MemoryKey
from psych_runtime.adapters.store import RunHeader
from psych_runtime.adapters.store import RunState
from psych_runtime.records import WorkerId

Attribute = dict[str, str]
"""One attribute value in DynamoDB's wire form: ``{"S": "text"}`` or ``{"N": "12"}``."""

Item = dict[str, Attribute]
"""A whole item (or a key) in wire form."""

PK = "pk"
SK = "sk"
RECORD = "rec"

STATE = "state"
SCOPE = "scope"
VERSION_HASH = "version_hash"
CREATED_AT = "created_at"
DEADLINE_AT = "deadline_at"
LEASE_HOLDER = "lease_holder"
LEASE_EXPIRES_AT = "lease_expires_at"
IDEMPOTENCY_KEY = "idempotency_key"
ATTEMPT_COUNT = "attempt_count"
RUNNABLE_AT = "runnable_at"
PARENT_RUN_ID = "parent_run_id"
DELEGATION_DEPTH = "delegation_depth"
CONTINUES_RUN_ID = "continues_run_id"
HEAD_SEQ = "head_seq"
KEY_RUN_ID = "run_id"
VERSION_DOCUMENT = "doc"
VERSION_GRANTED = "granted"
"""Set on Versions stored with grants; one without it predates them and is shared."""
PUBLISHED_AT = "published_at"
MEMORY_ID = "memory_id"
MEMORY_CONTENT = "content"
SCHEMA_VERSION_ATTRIBUTE = "version"

CLAIM_Q = "claim_q"
CLAIM_K = "claim_k"
OPEN_Q = "open_q"
OPEN_K = "open_k"

CLAIM_INDEX = "claimable"
OPEN_INDEX = "unsettled"

READY = "ready"
PARKED = "parked"
LEASED = "leased"
OPEN = "open"

META_PK = "meta#schema"

MAX_PARTITION_KEY_BYTES = 2048
"""DynamoDB's limit on a partition key value, in UTF-8 bytes."""

MAX_ITEM_BYTES = 400_000
"""DynamoDB's limit on one item (names plus values), "400 KB" read as decimal.

The service itself accepts a little more (400 KiB), emulators somewhat less; the
decimal reading stays under every implementation we know of.
"""

MAX_TRANSACTION_ITEMS = 100
MAX_TRANSACTION_BYTES = 4_000_000
"""The limit on one transaction's items, "4 MB" read as decimal for the same reason."""

_NUMBER_BYTES = 21
"""The most a DynamoDB number can weigh; used so size estimates never fall short."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ORIGIN = datetime(1, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_NO_TIME = "0" * 18


# --- values --------------------------------------------------------------------------


def s(value: str) -> Attribute:
    """A string attribute."""
    return {"S": value}


def n(value: int) -> Attribute:
    """A number attribute."""
    return {"N": str(value)}


def _aware(when: datetime) -> datetime:
    """Treat a naive datetime as UTC, the only zone the store ever writes."""
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def micros(when: datetime) -> int:
    """Microseconds since the Unix epoch, exactly."""
    return (_aware(when) - _EPOCH) // _MICROSECOND


def instant(value: int) -> datetime:
    """The aware UTC datetime ``micros`` encoded."""
    return _EPOCH + timedelta(microseconds=value)


def sortable(when: datetime | None) -> str:
    """A fixed-width string whose order is the instants' order (None sorts first)."""
    if when is None:
        return _NO_TIME
    return f"{(_aware(when) - _ORIGIN) // _MICROSECOND:018d}"


def time_value(when: datetime) -> Attribute:
    """An instant as a number attribute."""
    return n(micros(when))


# --- keys ----------------------------------------------------------------------------


def run_pk(run_id: str) -> str:
    """The partition of a Run's header and records."""
    return "r#" + run_id


def run_key(run_id: str) -> Item:
    """The key of a Run's header item."""
    return {PK: s(run_pk(run_id)), SK: n(0)}


def run_id_of_pk(pk: str) -> RunId:
    """Undo ``run_pk``."""
    if not pk.startswith("r#"):
        raise ValueError(f"not a run partition key: {pk!r}")
    return RunId(pk[2:])


def idempotency_key(tenant: str, key: str) -> Item:
    """The key of the item that makes admission exactly-once per (tenant, key).

    The tenant is percent-encoded so a ``#`` inside it cannot make two different
    (tenant, key) pairs share an item.
    """
    return {PK: s(f"k#{quote(tenant, safe='')}#{key}"), SK: n(0)}


def version_key(version_hash: str) -> Item:
    """The key of a Version's item."""
    return {PK: s("v#" + version_hash), SK: n(0)}


def grant_key(version_hash: str, tenant: str | None) -> Item:
    """The key of a tenant's grant of a Version, or (None) of the grant sharing it.

    A hash has a fixed form without ``#`` and the tenant is percent-encoded, so no
    tenant's key can equal another's or the shared one.
    """
    suffix = "" if tenant is None else "#" + quote(tenant, safe="")
    return {PK: s(f"g#{version_hash}{suffix}"), SK: n(0)}


META_KEY: Item = {PK: s(META_PK), SK: n(0)}


def memory_pk(key: MemoryKey) -> str:
    """The partition holding every fact of one end user of one tenant.

    ``m#<length of the tenant>#<tenant><end user id>``: the length says where the
    tenant stops, so no two (tenant, end user) pairs share a partition whatever
    characters they hold (``#`` included), and neither part is escaped. Both parts at
    their longest in four-byte characters would not fit DynamoDB's 2048-byte key;
    such a key (and only such a key) is addressed by the SHA-256 of that same text
    instead, under ``m#~``, which no length-prefixed key begins with.
    """
    plain = f"m#{len(key.tenant)}#{key.tenant}{key.end_user_id}"
    if len(plain.encode()) <= MAX_PARTITION_KEY_BYTES:
        return plain
    return "m#~" + hashlib.sha256(plain.encode()).hexdigest()


def memory_item(fact: Memory) -> Item:
    """The item holding one fact: keyed by its end user and its ``created_at``."""
    return {
        PK: s(memory_pk(fact.key)),
        SK: time_value(fact.created_at),
        MEMORY_ID: s(fact.id),
        MEMORY_CONTENT: s(fact.content),
    }


def memory_of(item: Mapping[str, Attribute], key: MemoryKey) -> Memory:
    """Rebuild a fact of ``key`` from its item.

    Raises:
        ValueError: the item is not a complete fact (a corrupt or foreign item).
    """
    return Memory(
        id=text(item, MEMORY_ID),
        key=key,
        content=text(item, MEMORY_CONTENT),
        created_at=instant(number(item, SK)),
    )


# --- index keys ----------------------------------------------------------------------


def claim_entry(
    state: RunState,
    run_id: str,
    created_at: datetime | None,
    runnable_at: datetime | None,
    lease_expires_at: datetime | None,
) -> tuple[str, str] | None:
    """The ``claimable`` index entry (partition, sort key) a header belongs under.

    None when the Run is in a state that can never be claimed. ``created_at`` is
    needed only for a runnable Run.

    Raises:
        ValueError: a runnable Run without its ``created_at``.
    """
    if state is RunState.RUNNABLE:
        if created_at is None:
            raise ValueError("a runnable Run's index entry needs its created_at")
        if runnable_at is None:
            return READY, f"{sortable(created_at)}|{run_id}"
        return PARKED, f"{sortable(runnable_at)}|{sortable(created_at)}|{run_id}"
    if state is RunState.RUNNING:
        return LEASED, f"{sortable(lease_expires_at)}|{run_id}"
    return None


def open_entry(state: RunState, run_id: str, deadline_at: datetime) -> tuple[str, str] | None:
    """The ``unsettled`` index entry of a header; None once the Run is settled."""
    if state is RunState.SETTLED:
        return None
    return OPEN, f"{sortable(deadline_at)}|{run_id}"


def before(when: datetime) -> str:
    """An exclusive upper bound selecting index entries at or before ``when``."""
    return sortable(_aware(when) + _MICROSECOND)


# --- headers -------------------------------------------------------------------------


def header_item(header: RunHeader, head_seq: int) -> Item:
    """The item holding ``header``, with both index entries filled in."""
    item: Item = {
        **run_key(header.run_id),
        STATE: s(header.state.value),
        SCOPE: s(header.scope.model_dump_json(exclude_defaults=True)),
        VERSION_HASH: s(header.version_hash),
        CREATED_AT: time_value(header.created_at),
        DEADLINE_AT: time_value(header.deadline_at),
        ATTEMPT_COUNT: n(header.attempt_count),
        DELEGATION_DEPTH: n(header.delegation_depth),
        HEAD_SEQ: n(head_seq),
    }
    optional: dict[str, Attribute | None] = {
        LEASE_HOLDER: None if header.lease_holder is None else s(header.lease_holder),
        LEASE_EXPIRES_AT: _maybe_time(header.lease_expires_at),
        IDEMPOTENCY_KEY: None if header.idempotency_key is None else s(header.idempotency_key),
        RUNNABLE_AT: _maybe_time(header.runnable_at),
        PARENT_RUN_ID: None if header.parent_run_id is None else s(header.parent_run_id),
        CONTINUES_RUN_ID: None if header.continues_run_id is None else s(header.continues_run_id),
    }
    item.update({name: value for name, value in optional.items() if value is not None})
    claim = claim_entry(
        header.state,
        header.run_id,
        header.created_at,
        header.runnable_at,
        header.lease_expires_at,
    )
    if claim is not None:
        item[CLAIM_Q], item[CLAIM_K] = s(claim[0]), s(claim[1])
    opened = open_entry(header.state, header.run_id, header.deadline_at)
    if opened is not None:
        item[OPEN_Q], item[OPEN_K] = s(opened[0]), s(opened[1])
    return item


def _maybe_time(when: datetime | None) -> Attribute | None:
    return None if when is None else time_value(when)


def header_scope(item: Mapping[str, Attribute]) -> Scope:
    """The Scope stored in a header item (or a projection of one)."""
    return Scope.model_validate_json(text(item, SCOPE))


def header_of(item: Mapping[str, Attribute]) -> RunHeader:
    """Rebuild a header from its item.

    Raises:
        ValueError: the item is not a complete header (a corrupt or foreign item).
    """
    return RunHeader(
        run_id=run_id_of_pk(text(item, PK)),
        scope=header_scope(item),
        version_hash=VersionHash(text(item, VERSION_HASH)),
        state=RunState(text(item, STATE)),
        created_at=instant(number(item, CREATED_AT)),
        deadline_at=instant(number(item, DEADLINE_AT)),
        lease_holder=_worker(optional_text(item, LEASE_HOLDER)),
        lease_expires_at=optional_time(item, LEASE_EXPIRES_AT),
        idempotency_key=optional_text(item, IDEMPOTENCY_KEY),
        attempt_count=number(item, ATTEMPT_COUNT),
        runnable_at=optional_time(item, RUNNABLE_AT),
        parent_run_id=_run(optional_text(item, PARENT_RUN_ID)),
        delegation_depth=number(item, DELEGATION_DEPTH),
        continues_run_id=_run(optional_text(item, CONTINUES_RUN_ID)),
    )


def _worker(value: str | None) -> WorkerId | None:
    return None if value is None else WorkerId(value)


def _run(value: str | None) -> RunId | None:
    return None if value is None else RunId(value)


def optional_text(item: Mapping[str, Attribute], name: str) -> str | None:
    """A string attribute that may be absent."""
    value = item.get(name)
    if value is None:
        return None
    found = value.get("S")
    if found is None:
        raise ValueError(f"attribute {name!r} is not a string")
    return found


def text(item: Mapping[str, Attribute], name: str) -> str:
    """A required string attribute."""
    value = item.get(name, {}).get("S")
    if value is None:
        raise ValueError(f"item lacks the string attribute {name!r}")
    return value


def number(item: Mapping[str, Attribute], name: str) -> int:
    """A required whole-number attribute."""
    value = item.get(name, {}).get("N")
    if value is None:
        raise ValueError(f"item lacks the number attribute {name!r}")
    return int(value)


def optional_time(item: Mapping[str, Attribute], name: str) -> datetime | None:
    """An instant attribute that may be absent."""
    value = item.get(name, {}).get("N")
    return None if value is None else instant(int(value))


# --- records -------------------------------------------------------------------------


def record_item(run_id: str, seq: int, body: bytes) -> Item:
    """The item of one record; ``body`` is its compact JSON."""
    return {PK: s(run_pk(run_id)), SK: n(seq), RECORD: s(body.decode())}


def record_item_size(run_id: str, body: bytes) -> int:
    """An upper bound on the stored size of a record's item, by DynamoDB's rules.

    Names and values both count; a number is counted at its largest possible size.
    """
    return (
        len(PK) + len(run_pk(run_id).encode()) + len(SK) + _NUMBER_BYTES + len(RECORD) + len(body)
    )


def item_size(item: Mapping[str, Attribute]) -> int:
    """An upper bound on an item's stored size (numbers counted at their largest)."""
    total = 0
    for name, value in item.items():
        total += len(name.encode())
        if "N" in value:
            total += _NUMBER_BYTES
        else:
            total += sum(len(part.encode()) for part in value.values())
    return total


# --- decoding wire items -------------------------------------------------------------

_NAME = re.compile(r"#([A-Za-z_][A-Za-z0-9_]*)")


def names_in(*expressions: str | None) -> dict[str, str]:
    """``ExpressionAttributeNames`` for every ``#name`` placeholder used.

    Every attribute is referred to by placeholder, so no name can clash with one of
    DynamoDB's many reserved words (``state`` is one of them).
    """
    found: dict[str, str] = {}
    for expression in expressions:
        if expression:
            for name in _NAME.findall(expression):
                found["#" + name] = name
    return found


def wire_item(raw: object) -> Item | None:
    """Check that a decoded response value is an item of string and number attributes.

    Attribute types this package never writes are dropped rather than trusted.
    """
    if not isinstance(raw, dict):
        return None
    item: Item = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not isinstance(value, dict):
            continue
        for kind in ("S", "N"):
            found = value.get(kind)
            if isinstance(found, str):
                item[name] = {kind: found}
                break
    return item


def wire_items(raw: object) -> list[Item]:
    """A list of items from a response field (``Items``, ``Responses[table]``)."""
    if not isinstance(raw, list):
        return []
    return [item for item in map(wire_item, raw) if item is not None]


def run_ids(items: Sequence[Item]) -> list[RunId]:
    """The run ids of header items (or index entries projected from them)."""
    return [run_id_of_pk(text(item, PK)) for item in items]


__all__ = [
    "ATTEMPT_COUNT",
    "CLAIM_INDEX",
    "CLAIM_K",
    "CLAIM_Q",
    "CONTINUES_RUN_ID",
    "CREATED_AT",
    "DEADLINE_AT",
    "DELEGATION_DEPTH",
    "HEAD_SEQ",
    "IDEMPOTENCY_KEY",
    "KEY_RUN_ID",
    "LEASED",
    "LEASE_EXPIRES_AT",
    "LEASE_HOLDER",
    "MAX_ITEM_BYTES",
    "MAX_PARTITION_KEY_BYTES",
    "MAX_TRANSACTION_BYTES",
    "MAX_TRANSACTION_ITEMS",
    "MEMORY_CONTENT",
    "MEMORY_ID",
    "META_KEY",
    "META_PK",
    "OPEN",
    "OPEN_INDEX",
    "OPEN_K",
    "OPEN_Q",
    "PARENT_RUN_ID",
    "PARKED",
    "PK",
    "PUBLISHED_AT",
    "READY",
    "RECORD",
    "RUNNABLE_AT",
    "SCHEMA_VERSION_ATTRIBUTE",
    "SCOPE",
    "SK",
    "STATE",
    "VERSION_DOCUMENT",
    "VERSION_GRANTED",
    "VERSION_HASH",
    "Attribute",
    "Item",
    "before",
    "claim_entry",
    "grant_key",
    "header_item",
    "header_of",
    "header_scope",
    "idempotency_key",
    "instant",
    "item_size",
    "memory_item",
    "memory_of",
    "memory_pk",
    "micros",
    "n",
    "names_in",
    "number",
    "open_entry",
    "optional_text",
    "optional_time",
    "record_item",
    "record_item_size",
    "run_id_of_pk",
    "run_ids",
    "run_key",
    "run_pk",
    "s",
    "sortable",
    "text",
    "time_value",
    "version_key",
    "wire_item",
    "wire_items",
]
