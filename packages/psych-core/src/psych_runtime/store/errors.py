"""Errors a Store raises. Adapters raise these and nothing driver-specific."""

from psych_runtime.core.errors import PsychError


class StoreError(PsychError):
    """Base class of the store's deliberate refusals and failures."""


class SeqConflict(StoreError):
    """Another writer appended first: the batch's expected sequence is taken.

    Nothing of the refused batch was written.
    """

    def __init__(self, run_id: str, seq: int) -> None:
        super().__init__(f"run {run_id!r}: sequence {seq} is already written")
        self.run_id = run_id
        self.seq = seq


class LeaseLost(StoreError):
    """The writer's fence no longer matches the Run's lease holder.

    Raised by a fenced append after another Worker took the Run over. Nothing of the
    refused batch was written.
    """

    def __init__(self, run_id: str, worker_id: str, attempt: int) -> None:
        super().__init__(
            f"run {run_id!r}: worker {worker_id!r} (attempt {attempt}) no longer holds the lease"
        )
        self.run_id = run_id
        self.worker_id = worker_id
        self.attempt = attempt


class BatchTooLarge(StoreError, ValueError):
    """The batch does not fit one atomic write of this store; nothing was written.

    A store whose atomic write is bounded (DynamoDB's transaction holds 100 items and
    4 MB) raises this for a larger batch instead of splitting it, since a split write
    would no longer be all or nothing. The agent loop's Journal then appends the same
    records in smaller batches, each a valid prefix of the log, so no turn size can
    fail a Run.
    """


class StoreUnavailable(StoreError):
    """The backing database could not be reached."""


class SchemaTooNew(StoreError):
    """The database was migrated by a newer release than this code knows."""


class SchemaNotMigrated(StoreError):
    """The database has no schema yet, or one older than this release needs.

    Every adapter with a schema raises this on first use instead of guessing: creating
    tables needs rights a Worker's account may (rightly) lack. Run ``await
    store.migrate()`` once per deployment, or open the store with
    ``open_store(url, migrate=True)``. It is not a ``StoreUnavailable``: waiting does
    not fix it, somebody has to migrate.
    """


def schema_too_new(where: str, found: int, *, knows: int, package: str) -> SchemaTooNew:
    """The error for a database that a newer release of ``package`` migrated.

    Args:
        where: the database, as messages name it (no credentials).
        found: the schema version the database is at.
        knows: the newest version this release of ``package`` knows.
        package: the adapter's distribution, which the message says to upgrade.
    """
    return SchemaTooNew(
        f"{where} is at schema version {found}, but this release of {package} knows "
        f"versions up to {knows}; upgrade {package} (an older release must not write to "
        "a newer schema)"
    )


def check_schema_version(where: str, found: int, *, needs: int, package: str) -> None:
    """Refuse a database whose schema is not exactly the one this release needs.

    Every adapter with a schema words the two refusals alike, and says how to migrate.

    Args:
        where: the database, as messages name it (no credentials).
        found: the schema version the database is at; 0 when it has none.
        needs: the version this release of ``package`` reads and writes.
        package: the adapter's distribution.

    Raises:
        SchemaTooNew: ``found`` is above ``needs``.
        SchemaNotMigrated: ``found`` is below ``needs``.
    """
    if found > needs:
        raise schema_too_new(where, found, knows=needs, package=package)
    if found < needs:
        state = "has no Psych schema yet" if found == 0 else f"is at schema version {found}"
        raise SchemaNotMigrated(
            f"{where} {state}; this release of {package} needs version {needs}: call "
            "`await store.migrate()` or open it with open_store(url, migrate=True)"
        )


class InvalidStoreUrl(StoreError, ValueError):
    """A store URL could not be understood."""


class RecordTooLarge(StoreError, ValueError):
    """A record exceeds what this backend can hold in one item."""


__all__ = [
    "BatchTooLarge",
    "InvalidStoreUrl",
    "LeaseLost",
    "RecordTooLarge",
    "SchemaNotMigrated",
    "SchemaTooNew",
    "SeqConflict",
    "StoreError",
    "StoreUnavailable",
    "check_schema_version",
    "schema_too_new",
]
