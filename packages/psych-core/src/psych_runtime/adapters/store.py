"""The Store port, for whoever writes a store adapter.

The protocol and its optional capabilities, the errors a store raises, the checks every
store makes before it touches its backend, the rules that decide claims and sweeps, the
notifier, the header columns, URL settings, the values every store must refuse, the
raw-storage hook the contract reads, and the in-memory store to compare against.
"""

from psych_runtime.core.errors import UnstorableValue as UnstorableValue
from psych_runtime.core.raw import RawItem as RawItem
from psych_runtime.core.raw import RawStorage as RawStorage
from psych_runtime.core.raw import mentions as mentions
from psych_runtime.core.storable import MAX_JSON_DEPTH as MAX_JSON_DEPTH
from psych_runtime.core.storable import MAX_RECORD_DEPTH as MAX_RECORD_DEPTH
from psych_runtime.core.storable import unstorable as unstorable
from psych_runtime.store.checks import check_admission as check_admission
from psych_runtime.store.checks import check_append_batch as check_append_batch
from psych_runtime.store.checks import check_read_window as check_read_window
from psych_runtime.store.checks import no_run_can_match as no_run_can_match
from psych_runtime.store.checks import unencodable as unencodable
from psych_runtime.store.errors import BatchTooLarge as BatchTooLarge
from psych_runtime.store.errors import InvalidStoreUrl as InvalidStoreUrl
from psych_runtime.store.errors import LeaseLost as LeaseLost
from psych_runtime.store.errors import RecordTooLarge as RecordTooLarge
from psych_runtime.store.errors import SchemaNotMigrated as SchemaNotMigrated
from psych_runtime.store.errors import SchemaTooNew as SchemaTooNew
from psych_runtime.store.errors import SeqConflict as SeqConflict
from psych_runtime.store.errors import StoreError as StoreError
from psych_runtime.store.errors import StoreUnavailable as StoreUnavailable
from psych_runtime.store.errors import check_schema_version as check_schema_version
from psych_runtime.store.errors import schema_too_new as schema_too_new
from psych_runtime.store.header_columns import HEADER_COLUMNS as HEADER_COLUMNS
from psych_runtime.store.header_columns import header_from_row as header_from_row
from psych_runtime.store.header_columns import header_row as header_row
from psych_runtime.store.memory import InMemoryStore as InMemoryStore
from psych_runtime.store.notify import WORK as WORK
from psych_runtime.store.notify import LocalNotifier as LocalNotifier
from psych_runtime.store.notify import Notifier as Notifier
from psych_runtime.store.notify import signal_run as signal_run
from psych_runtime.store.port import Admission as Admission
from psych_runtime.store.port import Fence as Fence
from psych_runtime.store.port import Migratable as Migratable
from psych_runtime.store.port import RunDeletion as RunDeletion
from psych_runtime.store.port import RunHeader as RunHeader
from psych_runtime.store.port import RunListing as RunListing
from psych_runtime.store.port import RunState as RunState
from psych_runtime.store.port import SchemaInspection as SchemaInspection
from psych_runtime.store.port import Store as Store
from psych_runtime.store.rules import check_listing_limit as check_listing_limit
from psych_runtime.store.rules import claim_order as claim_order
from psych_runtime.store.rules import claimable as claimable
from psych_runtime.store.rules import holds_lease as holds_lease
from psych_runtime.store.rules import leased as leased
from psych_runtime.store.rules import newest_runs as newest_runs
from psych_runtime.store.rules import oldest_settled_runs as oldest_settled_runs
from psych_runtime.store.rules import parked as parked
from psych_runtime.store.rules import released as released
from psych_runtime.store.rules import sweep_expired_leases as sweep_expired_leases
from psych_runtime.store.rules import sweep_overdue_deadlines as sweep_overdue_deadlines
from psych_runtime.store.settings import UrlSettings as UrlSettings
from psych_runtime.store.settings import merge_url_options as merge_url_options
from psych_runtime.store.settings import settings_from as settings_from

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
