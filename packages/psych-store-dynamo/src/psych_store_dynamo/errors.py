"""Refusals particular to DynamoDB's limits."""

from psych_runtime import StoreError


class BatchTooLarge(StoreError, ValueError):
    """An append does not fit in one DynamoDB transaction.

    ``TransactWriteItems`` takes at most 100 items and 4 MB, and an append must be one
    transaction to stay all-or-nothing, so a larger batch is refused before anything is
    written rather than split. The agent loop's batches are a handful of records, so
    this only fires for a caller appending in bulk: append in smaller batches.
    """


__all__ = ["BatchTooLarge"]
