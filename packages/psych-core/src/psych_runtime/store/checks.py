"""Argument checks that every Store makes before it goes near its backend.

The conformance suite expects each store to refuse the same malformed calls with the
same ``ValueError``. Keeping the checks here, public, means the in-memory store, the
first-party adapters and any third-party adapter refuse them word for word alike, and
a change to a rule is made once.

Each check is pure and cheap, so a store can run it before taking a lock, borrowing a
connection or hopping to another thread.
"""

from collections.abc import Sequence

from psych_runtime.core.ids import RunId
from psych_runtime.core.records import Record, RunAdmitted
from psych_runtime.store.port import RunHeader


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


def check_admission(header: RunHeader, admitted: RunAdmitted) -> None:
    """Refuse a ``Store.create_run`` whose ``run_admitted`` record does not fit the header.

    Args:
        header: the header about to be stored.
        admitted: the record that becomes entry 1 of the Run's log.

    Raises:
        ValueError: the record names another Run, or is not at seq 1.
    """
    if admitted.run_id != header.run_id:
        raise ValueError("the run_admitted record belongs to another Run")
    if admitted.seq != 1:
        raise ValueError("run_admitted must be written at seq 1")


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


__all__ = ["check_admission", "check_append_batch", "check_read_window"]
