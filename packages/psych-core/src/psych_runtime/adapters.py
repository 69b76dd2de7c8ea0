"""What an adapter author needs: the ports, their argument checks, errors and plugin hooks."""

from typing import TYPE_CHECKING

from psych_runtime.blob.checks import (
    check_content_type,
    check_window,
    coerce_bytes,
)
from psych_runtime.blob.filesystem import (
    FileBlobStore,
)
from psych_runtime.blob.memory import (
    InMemoryBlobStore,
)
from psych_runtime.blob.port import (
    BlobInfo,
    BlobKey,
    BlobNotFound,
    BlobStore,
    InvalidBlobKey,
)
from psych_runtime.core.errors import (
    UnstorableValue,
)
from psych_runtime.core.storable import (
    MAX_JSON_DEPTH,
    MAX_RECORD_DEPTH,
    unstorable,
)
from psych_runtime.egress.gated import (
    GatedTransport,
    RedirectRefusal,
    egress_allows,
    redirect_message,
)
from psych_runtime.memory.checks import (
    check_memory_content,
    check_memory_key,
    check_recall_limit,
    mint_memory,
    newest_facts,
)
from psych_runtime.memory.local import (
    InMemoryMemoryStore,
)
from psych_runtime.memory.port import (
    MAX_MEMORY_CHARS,
    Memory,
    MemoryKey,
    MemoryStore,
)
from psych_runtime.plugins import (
    PLUGIN_API_VERSION,
    BlobStoreBackend,
    DoctorCheck,
    DoctorResult,
    IncompatiblePlugin,
    PluginError,
    StoreBackend,
    UnknownStoreScheme,
    hookimpl,
    register_plugin,
)
from psych_runtime.plugins.backends import (
    MemoryStoreBackend,
    SandboxBackend,
    TelemetryBackend,
    ToolSourceFactory,
    import_check,
)
from psych_runtime.plugins.errors import (
    UnknownBlobStoreScheme,
    UnknownMemoryStoreScheme,
)
from psych_runtime.plugins.manager import (
    AUTOLOAD_ENV,
    reset_plugin_manager,
)
from psych_runtime.plugins.offer import (
    lazy_exports,
    lazy_exports as _lazy_exports,
    offer_blob_stores,
    offer_doctor_checks,
    offer_memory_stores,
    offer_sandboxes,
    offer_stores,
    offer_telemetry,
    offer_tool_sources,
)
from psych_runtime.plugins.urls import (
    blob_store_backends,
    installed_telemetry,
    memory_store_backends,
    sandbox_backends,
    store_backends,
    telemetry_backends,
)
from psych_runtime.sandbox.port import (
    Artifact,
    Binding,
    BindingRefused,
    Execution,
    ExecutionStatus,
    Guarantee,
    Program,
    ResolvedLimits,
    Sandbox,
    SandboxCapabilities,
)
from psych_runtime.store.checks import (
    check_admission,
    check_append_batch,
    check_read_window,
    no_run_can_match,
)
from psych_runtime.store.errors import (
    InvalidStoreUrl,
    LeaseLost,
    RecordTooLarge,
    SchemaNotMigrated,
    SchemaTooNew,
    SeqConflict,
    StoreError,
    StoreUnavailable,
)
from psych_runtime.store.header_columns import (
    HEADER_COLUMNS,
    header_from_row,
    header_row,
)
from psych_runtime.store.memory import (
    InMemoryStore,
)
from psych_runtime.store.notify import (
    WORK,
    LocalNotifier,
    Notifier,
)
from psych_runtime.store.port import (
    Admission,
    Fence,
    Migratable,
    RunHeader,
    RunListing,
    RunState,
    SchemaInspection,
    Store,
)
from psych_runtime.store.rules import (
    check_listing_limit,
    claim_order,
    claimable,
    holds_lease,
    leased,
    newest_runs,
    parked,
    released,
    sweep_expired_leases,
    sweep_overdue_deadlines,
)
from psych_runtime.store.settings import (
    UrlSettings,
    settings_from,
)
from psych_runtime.telemetry import (
    NO_TELEMETRY,
    PSYCH_SCHEMA,
    AttributeRule,
    ErrorRule,
    FinishedSpan,
    MetricRule,
    NoTelemetry,
    SpanProblem,
    SpanRule,
    Telemetry,
    TelemetrySchema,
    TelemetrySpan,
    check_spans,
)
from psych_runtime.tools.access import (
    PermitAll,
    TenantAccess,
    permitted_for,
)
from psych_runtime.tools.context import (
    ToolContext,
)
from psych_runtime.tools.pool import ConnectionPool, Poolable
from psych_runtime.tools.remote import (
    FAILURE_KINDS,
    AnyPolicy,
    Catalogue,
    Endpoint,
    RemoteError,
    RemoteFailure,
    RemotePool,
    RemoteTools,
    TransportNotes,
    admitted,
    credential_digest,
    failure_of,
    failure_of_error,
    failure_of_status,
    leaves,
    offerable,
    pool_or_own,
    qualified,
)
from psych_runtime.tools.sources import (
    SourceCallFailed,
    SourceTool,
    SourceTools,
    ToolSource,
    ToolSourceUnavailable,
)

if TYPE_CHECKING:
    from psych_runtime.egress.sdk_client import (
        EgressTransport as EgressTransport,
        RedirectRefused as RedirectRefused,
        egress_client as egress_client,
    )

# What imports httpx (an SDK's own HTTP client with the egress check inside) loads on
# first use, so loading a plugin stays cheap.
__getattr__, __dir__ = _lazy_exports(
    __name__,
    {
        "EgressTransport": "psych_runtime.egress.sdk_client",
        "RedirectRefused": "psych_runtime.egress.sdk_client",
        "egress_client": "psych_runtime.egress.sdk_client",
    },
)

__all__ = [
    "AUTOLOAD_ENV",
    "FAILURE_KINDS",
    "HEADER_COLUMNS",
    "MAX_JSON_DEPTH",
    "MAX_MEMORY_CHARS",
    "MAX_RECORD_DEPTH",
    "NO_TELEMETRY",
    "PLUGIN_API_VERSION",
    "PSYCH_SCHEMA",
    "WORK",
    "Admission",
    "AnyPolicy",
    "Artifact",
    "AttributeRule",
    "Binding",
    "BindingRefused",
    "BlobInfo",
    "BlobKey",
    "BlobNotFound",
    "BlobStore",
    "BlobStoreBackend",
    "Catalogue",
    "ConnectionPool",
    "DoctorCheck",
    "DoctorResult",
    "EgressTransport",
    "Endpoint",
    "ErrorRule",
    "Execution",
    "ExecutionStatus",
    "Fence",
    "FileBlobStore",
    "FinishedSpan",
    "GatedTransport",
    "Guarantee",
    "InMemoryBlobStore",
    "InMemoryMemoryStore",
    "InMemoryStore",
    "IncompatiblePlugin",
    "InvalidBlobKey",
    "InvalidStoreUrl",
    "LeaseLost",
    "LocalNotifier",
    "Memory",
    "MemoryKey",
    "MemoryStore",
    "MemoryStoreBackend",
    "MetricRule",
    "Migratable",
    "NoTelemetry",
    "Notifier",
    "PermitAll",
    "PluginError",
    "Poolable",
    "Program",
    "RecordTooLarge",
    "RedirectRefusal",
    "RedirectRefused",
    "RemoteError",
    "RemoteFailure",
    "RemotePool",
    "RemoteTools",
    "ResolvedLimits",
    "RunHeader",
    "RunListing",
    "RunState",
    "Sandbox",
    "SandboxBackend",
    "SandboxCapabilities",
    "SchemaInspection",
    "SchemaNotMigrated",
    "SchemaTooNew",
    "SeqConflict",
    "SourceCallFailed",
    "SourceTool",
    "SourceTools",
    "SpanProblem",
    "SpanRule",
    "Store",
    "StoreBackend",
    "StoreError",
    "StoreUnavailable",
    "Telemetry",
    "TelemetryBackend",
    "TelemetrySchema",
    "TelemetrySpan",
    "TenantAccess",
    "ToolContext",
    "ToolSource",
    "ToolSourceFactory",
    "ToolSourceUnavailable",
    "TransportNotes",
    "UnknownBlobStoreScheme",
    "UnknownMemoryStoreScheme",
    "UnknownStoreScheme",
    "UnstorableValue",
    "UrlSettings",
    "admitted",
    "blob_store_backends",
    "check_admission",
    "check_append_batch",
    "check_content_type",
    "check_listing_limit",
    "check_memory_content",
    "check_memory_key",
    "check_read_window",
    "check_recall_limit",
    "check_spans",
    "check_window",
    "claim_order",
    "claimable",
    "coerce_bytes",
    "credential_digest",
    "egress_allows",
    "egress_client",
    "failure_of",
    "failure_of_error",
    "failure_of_status",
    "header_from_row",
    "header_row",
    "holds_lease",
    "hookimpl",
    "import_check",
    "installed_telemetry",
    "lazy_exports",
    "leased",
    "leaves",
    "memory_store_backends",
    "mint_memory",
    "newest_facts",
    "newest_runs",
    "no_run_can_match",
    "offer_blob_stores",
    "offer_doctor_checks",
    "offer_memory_stores",
    "offer_sandboxes",
    "offer_stores",
    "offer_telemetry",
    "offer_tool_sources",
    "offerable",
    "parked",
    "permitted_for",
    "pool_or_own",
    "qualified",
    "redirect_message",
    "register_plugin",
    "released",
    "reset_plugin_manager",
    "sandbox_backends",
    "settings_from",
    "store_backends",
    "sweep_expired_leases",
    "sweep_overdue_deadlines",
    "telemetry_backends",
    "unstorable",
]
