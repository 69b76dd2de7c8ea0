"""The Store port, for whoever writes a store adapter.

The protocol and its optional capabilities, the errors a store raises, the checks every
store makes before it touches its backend, the rules that decide claims and sweeps, the
notifier, the header columns, URL settings, the values every store must refuse, the
raw-storage hook the contract reads, and the in-memory store to compare against.
"""

from psych_runtime.core.errors import (
    UnstorableValue as UnstorableValue,
)
from psych_runtime.core.raw import (
    RawItem as RawItem,
    RawStorage as RawStorage,
    mentions as mentions,
)
from psych_runtime.core.storable import (
    MAX_JSON_DEPTH as MAX_JSON_DEPTH,
    MAX_RECORD_DEPTH as MAX_RECORD_DEPTH,
    unstorable as unstorable,
)
from psych_runtime.store.checks import (
    check_admission as check_admission,
    check_append_batch as check_append_batch,
    check_read_window as check_read_window,
    no_run_can_match as no_run_can_match,
    unencodable as unencodable,
)
from psych_runtime.store.errors import (
    BatchTooLarge as BatchTooLarge,
    InvalidStoreUrl as InvalidStoreUrl,
    LeaseLost as LeaseLost,
    RecordTooLarge as RecordTooLarge,
    SchemaNotMigrated as SchemaNotMigrated,
    SchemaTooNew as SchemaTooNew,
    SeqConflict as SeqConflict,
    StoreError as StoreError,
    StoreUnavailable as StoreUnavailable,
    check_schema_version as check_schema_version,
    schema_too_new as schema_too_new,
)
from psych_runtime.store.header_columns import (
    HEADER_COLUMNS as HEADER_COLUMNS,
    header_from_row as header_from_row,
    header_row as header_row,
)
from psych_runtime.store.memory import (
    InMemoryStore as InMemoryStore,
)
from psych_runtime.store.notify import (
    WORK as WORK,
    LocalNotifier as LocalNotifier,
    Notifier as Notifier,
    signal_run as signal_run,
)
from psych_runtime.store.port import (
    Admission as Admission,
    Fence as Fence,
    Migratable as Migratable,
    RunDeletion as RunDeletion,
    RunHeader as RunHeader,
    RunListing as RunListing,
    RunState as RunState,
    SchemaInspection as SchemaInspection,
    Store as Store,
)
from psych_runtime.store.rules import (
    check_listing_limit as check_listing_limit,
    claim_order as claim_order,
    claimable as claimable,
    holds_lease as holds_lease,
    leased as leased,
    newest_runs as newest_runs,
    oldest_settled_runs as oldest_settled_runs,
    parked as parked,
    released as released,
    sweep_expired_leases as sweep_expired_leases,
    sweep_overdue_deadlines as sweep_overdue_deadlines,
)
from psych_runtime.store.settings import (
    UrlSettings as UrlSettings,
    merge_url_options as merge_url_options,
    settings_from as settings_from,
)

__all__ = [
    "HEADER_COLUMNS",
    "MAX_JSON_DEPTH",
    "MAX_RECORD_DEPTH",
    "WORK",
    "Admission",
    "BatchTooLarge",
    "Fence",
    "InMemoryStore",
    "InvalidStoreUrl",
    "LeaseLost",
    "LocalNotifier",
    "Migratable",
    "Notifier",
    "RawItem",
    "RawStorage",
    "RecordTooLarge",
    "RunDeletion",
    "RunHeader",
    "RunListing",
    "RunState",
    "SchemaInspection",
    "SchemaNotMigrated",
    "SchemaTooNew",
    "SeqConflict",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "UnstorableValue",
    "UrlSettings",
    "check_admission",
    "check_append_batch",
    "check_listing_limit",
    "check_read_window",
    "check_schema_version",
    "claim_order",
    "claimable",
    "header_from_row",
    "header_row",
    "holds_lease",
    "leased",
    "mentions",
    "merge_url_options",
    "newest_runs",
    "no_run_can_match",
    "oldest_settled_runs",
    "parked",
    "released",
    "schema_too_new",
    "settings_from",
    "signal_run",
    "sweep_expired_leases",
    "sweep_overdue_deadlines",
    "unencodable",
    "unstorable",
]
