"""Checks on an append's batch, made before anything is sent to DynamoDB.

A refused batch must leave the log untouched, and DynamoDB's own refusals of an
oversized item or transaction arrive only after a round trip (and read poorly), so
both the shape of the batch and its size are checked here first.
"""

from collections.abc import Sequence

from psych_runtime import RunId
from psych_runtime.adapters.store import RecordTooLarge
from psych_store_dynamo import _rows as it
from psych_store_dynamo.errors import BatchTooLarge

TRANSACTION_MARGIN = 4096
"""Bytes of a transaction's 4 MB kept for the header item it updates."""


def check_sizes(run_id: RunId, first_seq: int, bodies: Sequence[bytes]) -> None:
    """Refuse what DynamoDB would refuse: an oversized item or transaction.

    Args:
        run_id: the Run the records belong to.
        first_seq: the seq of ``bodies[0]``.
        bodies: each record's compact JSON.

    Raises:
        RecordTooLarge: one record's item would exceed 400 KB.
        BatchTooLarge: the batch exceeds one transaction's 100 items or 4 MB.
    """
    total = TRANSACTION_MARGIN
    for offset, body in enumerate(bodies):
        size = it.record_item_size(run_id, body)
        if size > it.MAX_ITEM_BYTES:
            raise RecordTooLarge(
                f"run {run_id!r}: the record at seq {first_seq + offset} needs {size} bytes "
                f"as a DynamoDB item, over the {it.MAX_ITEM_BYTES}-byte limit; nothing was "
                "written (keep large tool results in a BlobStore and log only their address)"
            )
        total += size
    if len(bodies) + 1 > it.MAX_TRANSACTION_ITEMS:
        raise BatchTooLarge(
            f"run {run_id!r}: a batch of {len(bodies)} records does not fit one DynamoDB "
            f"transaction (at most {it.MAX_TRANSACTION_ITEMS - 1} records beside the header); "
            "nothing was written: append it in smaller batches"
        )
    if total > it.MAX_TRANSACTION_BYTES:
        raise BatchTooLarge(
            f"run {run_id!r}: a batch of {len(bodies)} records weighs about {total} bytes, over "
            f"the {it.MAX_TRANSACTION_BYTES}-byte limit of one DynamoDB transaction; nothing "
            "was written: append it in smaller batches"
        )


__all__ = ["TRANSACTION_MARGIN", "check_sizes"]
