"""Argument checks that every Store makes before it goes near its backend.

The conformance suite expects each store to refuse the same malformed calls with the
same ``ValueError``. Keeping the checks here, public, means the in-memory store, the
first-party adapters and any third-party adapter refuse them word for word alike, and
a change to a rule is made once.

Each check is pure and cheap, so a store can run it before taking a lock, borrowing a
connection or hopping to another thread.
"""

from collections.abc import Sequence

from psych_runtime.core.errors import RunNotFound
from psych_runtime.core.errors import UnstorableValue
from psych_runtime.core.ids import RunId
from psych_runtime.core.records import Record
from psych_runtime.core.records import RunAdmitted
from psych_runtime.core.storable import MAX_RECORD_DEPTH
from psych_runtime.core.storable import key_problem
from psych_runtime.core.storable import unstorable
from psych_runtime.store.port import RunHeader


def storable_key(key: str) -> bool:
    """Whether every store can hold ``key``; a run id failing this names no Run.

    Stores answer a lookup by such an id as they answer one by an id they never saw
    (``get_run`` returns ``None``), instead of passing it to a driver that would raise.
    """
    return key_problem(key) is None


def no_run_can_match(run_id: str, tenant: str | None = None) -> bool:
    """Whether a lookup by ``run_id`` (and ``tenant``) can be answered without the backend.

    A Run's keys passed ``check_admission``, so a run id or tenant that no store can
    hold names no Run. Stores call this first in ``get_run``, ``read`` and ``head`` and
    answer as for a Run they never saw, so such an id never reaches a driver that
    would raise on it.

    Args:
        run_id: the run id looked up.
        tenant: the tenant the lookup is restricted to, if any.

    Returns:
        True when no Run can match.
    """
    if key_problem(run_id) is not None:
        return True
    return tenant is not None and key_problem(tenant) is not None


def unencodable(text: str) -> bool:
    """Whether ``text`` has no UTF-8 encoding (it holds a lone surrogate).

    No store can keep such text, so no stored key, hash or id equals it. A store whose
    backend holds the NUL character (unlike PostgreSQL's text) looks up anything else,
    and asks only this before a lookup by ``text``; ``no_run_can_match`` is the stricter
    question every store may ask.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def check_key(key: str | None, what: str) -> None:
    """Refuse a key no store can hold.

    Args:
        key: the key, or ``None`` (nothing to check).
        what: what the key is, for the message (``"tenant"``, ``"idempotency_key"``).

    Raises:
        UnstorableValue: the key holds NUL or a lone surrogate.
    """
    if key is None:
        return
    problem = key_problem(key)
    if problem is not None:
        raise UnstorableValue(f"{what} {key!r} cannot be stored: {problem}", reason=problem)


def _check_record(offset: int, record: Record) -> None:
    """Refuse a record that not every store could write and read back unchanged."""
    problem = unstorable(record, max_depth=MAX_RECORD_DEPTH)
    if problem is not None:
        raise UnstorableValue(
            f"record {offset} of the batch ({record.type}) cannot be stored: {problem}",
            reason=problem,
        )


def check_append_batch(run_id: RunId, expected_seq: int, records: Sequence[Record]) -> None:
    """Refuse a malformed ``Store.append`` batch.

    Call it first in ``append``: a malformed batch is the caller's bug, and it should be
    reported as such even when the Run is missing or the fence would refuse it.

    Args:
        run_id: the Run the batch is appended to.
        expected_seq: the seq the first record must carry.
        records: the batch, in order.

    Raises:
        ValueError: ``expected_seq`` is below 1, the batch is empty, or a record belongs
            to another Run or does not carry the seq that follows its predecessor.
        RunNotFound: ``run_id`` holds a character no store can keep, so no such Run
            exists (the same answer a store gives for any unknown Run).
        UnstorableValue: a record holds a value not every store can keep (a lone
            surrogate, a non-finite number, or nesting deeper than the stores read
            back); nothing of the batch may be written.
    """
    if expected_seq < 1:
        raise ValueError("expected_seq starts at 1")
    if not records:
        raise ValueError("an append needs at least one record")
    for offset, record in enumerate(records):
        if record.run_id != run_id:
            raise ValueError(f"record {offset} of the batch belongs to run {record.run_id!r}")
        if record.seq != expected_seq + offset:
            raise ValueError(
                f"record {offset} of the batch carries seq {record.seq}, "
                f"expected {expected_seq + offset}"
            )
    if no_run_can_match(run_id):
        raise RunNotFound(run_id)
    for offset, record in enumerate(records):
        _check_record(offset, record)


def check_admission(header: RunHeader, admitted: RunAdmitted) -> None:
    """Refuse a ``Store.create_run`` whose ``run_admitted`` record does not fit the header.

    Args:
        header: the header about to be stored.
        admitted: the record that becomes entry 1 of the Run's log.

    Raises:
        ValueError: the record names another Run, or is not at seq 1.
        UnstorableValue: a key of the header (run id, tenant, principal, idempotency
            key, linked run ids) holds NUL or a lone surrogate, or the record holds a
            value not every store can keep.
    """
    if admitted.run_id != header.run_id:
        raise ValueError("the run_admitted record belongs to another Run")
    if admitted.seq != 1:
        raise ValueError("run_admitted must be written at seq 1")
    check_key(header.run_id, "run_id")
    check_key(header.scope.tenant, "tenant")
    check_key(header.scope.principal, "principal")
    check_key(header.idempotency_key, "idempotency_key")
    check_key(header.version_hash, "version_hash")
    check_key(header.parent_run_id, "parent_run_id")
    check_key(header.continues_run_id, "continues_run_id")
    _check_record(0, admitted)


def check_read_window(after: int, limit: int | None) -> None:
    """Refuse a ``Store.read`` window that starts or extends below zero.

    Args:
        after: how many leading records to skip.
        limit: how many records to return at most, or None for all of them.

    Raises:
        ValueError: ``after`` or ``limit`` is negative.
    """
    if after < 0:
        raise ValueError("after must not be negative")
    if limit is not None and limit < 0:
        raise ValueError("limit must not be negative")


__all__ = [
    "check_admission",
    "check_append_batch",
    "check_key",
    "check_read_window",
    "key_problem",
    "no_run_can_match",
    "storable_key",
    "unencodable",
]
