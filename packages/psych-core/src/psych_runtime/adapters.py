"""What an adapter author needs: the ports, their argument checks, errors and plugin hooks."""

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
    offer_blob_stores,
    offer_doctor_checks,
    offer_memory_stores,
    offer_sandboxes,
    offer_stores,
    offer_tool_sources,
)
from psych_runtime.plugins.urls import (
    blob_store_backends,
    memory_store_backends,
    sandbox_backends,
    store_backends,
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
    RunState,
    Store,
)
from psych_runtime.store.rules import (
    claim_order,
    claimable,
    holds_lease,
    leased,
    parked,
    released,
    sweep_expired_leases,
    sweep_overdue_deadlines,
)
from psych_runtime.store.settings import (
    UrlSettings,
    settings_from,
)
from psych_runtime.tools.context import (
    ToolContext,
)
from psych_runtime.tools.sources import (
    SourceCallFailed,
    SourceTool,
    SourceTools,
    ToolSource,
    ToolSourceUnavailable,
)

__all__ = [
    "AUTOLOAD_ENV",
    "HEADER_COLUMNS",
    "MAX_JSON_DEPTH",
    "MAX_MEMORY_CHARS",
    "MAX_RECORD_DEPTH",
    "PLUGIN_API_VERSION",
    "WORK",
    "Admission",
    "Artifact",
    "Binding",
    "BindingRefused",
    "BlobInfo",
    "BlobKey",
    "BlobNotFound",
    "BlobStore",
    "BlobStoreBackend",
    "DoctorCheck",
    "DoctorResult",
    "Execution",
    "ExecutionStatus",
    "Fence",
    "FileBlobStore",
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
    "Migratable",
    "Notifier",
    "PluginError",
    "Program",
    "RecordTooLarge",
    "ResolvedLimits",
    "RunHeader",
    "RunState",
    "Sandbox",
    "SandboxBackend",
    "SandboxCapabilities",
    "SchemaNotMigrated",
    "SchemaTooNew",
    "SeqConflict",
    "SourceCallFailed",
    "SourceTool",
    "SourceTools",
    "Store",
    "StoreBackend",
    "StoreError",
    "StoreUnavailable",
    "ToolContext",
    "ToolSource",
    "ToolSourceFactory",
    "ToolSourceUnavailable",
    "UnknownBlobStoreScheme",
    "UnknownMemoryStoreScheme",
    "UnknownStoreScheme",
    "UnstorableValue",
    "UrlSettings",
    "blob_store_backends",
    "check_admission",
    "check_append_batch",
    "check_content_type",
    "check_memory_content",
    "check_memory_key",
    "check_read_window",
    "check_recall_limit",
    "check_window",
    "claim_order",
    "claimable",
    "coerce_bytes",
    "header_from_row",
    "header_row",
    "holds_lease",
    "hookimpl",
    "import_check",
    "lazy_exports",
    "leased",
    "memory_store_backends",
    "mint_memory",
    "newest_facts",
    "no_run_can_match",
    "offer_blob_stores",
    "offer_doctor_checks",
    "offer_memory_stores",
    "offer_sandboxes",
    "offer_stores",
    "offer_tool_sources",
    "parked",
    "register_plugin",
    "released",
    "reset_plugin_manager",
    "sandbox_backends",
    "settings_from",
    "store_backends",
    "sweep_expired_leases",
    "sweep_overdue_deadlines",
    "unstorable",
]
