"""What an adapter author needs, one module per port.

* ``psych_runtime.adapters.store``: the Store port, its checks, rules and errors;
* ``psych_runtime.adapters.blob``: the BlobStore port;
* ``psych_runtime.adapters.memory``: the MemoryStore port;
* ``psych_runtime.adapters.sandbox``: the Sandbox port;
* ``psych_runtime.adapters.telemetry``: the Telemetry port and its span schema;
* ``psych_runtime.adapters.tools``: tool sources outside the process (MCP, A2A...);
* ``psych_runtime.adapters.plugins``: hooks, backend descriptions, registration.

Import from the module of the port you implement. Every name is also reachable here,
as ``psych_runtime.adapters.<name>``, loaded on first use from its port's module, so
code written against the single namespace keeps working.
"""

import importlib
from typing import TYPE_CHECKING
from typing import Any

if TYPE_CHECKING:
    # Each port module's ``__all__`` is the list of its names; mypy and editors read
    # them from there.
    from psych_runtime.adapters.blob import *  # noqa: F403
    from psych_runtime.adapters.memory import *  # noqa: F403
    from psych_runtime.adapters.plugins import *  # noqa: F403
    from psych_runtime.adapters.sandbox import *  # noqa: F403
    from psych_runtime.adapters.store import *  # noqa: F403
    from psych_runtime.adapters.telemetry import *  # noqa: F403
    from psych_runtime.adapters.tools import *  # noqa: F403

PORTS = ("store", "blob", "memory", "sandbox", "telemetry", "tools", "plugins")
"""The port modules, in the order the docs list them."""

_HOME: dict[str, str] = {
    "AUTOLOAD_ENV": "plugins",
    "Admission": "store",
    "AnyPolicy": "tools",
    "Artifact": "sandbox",
    "AttributeRule": "telemetry",
    "BatchTooLarge": "store",
    "Binding": "sandbox",
    "BindingRefused": "sandbox",
    "BlobInfo": "blob",
    "BlobKey": "blob",
    "BlobNotFound": "blob",
    "BlobStore": "blob",
    "BlobStoreBackend": "plugins",
    "Catalogue": "tools",
    "CheckedMemoryStore": "memory",
    "ClosedOnExit": "tools",
    "ConnectionPool": "tools",
    "DoctorCheck": "plugins",
    "DoctorResult": "plugins",
    "EgressTransport": "tools",
    "Endpoint": "tools",
    "ErrorRule": "telemetry",
    "Execution": "sandbox",
    "ExecutionStatus": "sandbox",
    "FAILURE_KINDS": "tools",
    "Fence": "store",
    "FileBlobStore": "blob",
    "FinishedSpan": "telemetry",
    "GatedTransport": "tools",
    "Guarantee": "sandbox",
    "HEADER_COLUMNS": "store",
    "HostBinding": "sandbox",
    "InMemoryBlobStore": "blob",
    "InMemoryMemoryStore": "memory",
    "InMemoryStore": "store",
    "IncompatiblePlugin": "plugins",
    "InvalidBlobKey": "blob",
    "InvalidSandboxValue": "sandbox",
    "InvalidStoreUrl": "store",
    "LeaseLost": "store",
    "LocalNotifier": "store",
    "MAX_JSON_DEPTH": "store",
    "MAX_MEMORY_CHARS": "memory",
    "MAX_RECORD_DEPTH": "store",
    "Memory": "memory",
    "MemoryKey": "memory",
    "MemoryStore": "memory",
    "MemoryStoreBackend": "plugins",
    "MetricRule": "telemetry",
    "Migratable": "store",
    "NO_TELEMETRY": "telemetry",
    "NoTelemetry": "telemetry",
    "Notifier": "store",
    "OTHER_PROVIDER": "telemetry",
    "PLUGIN_API_VERSION": "plugins",
    "PSYCH_SCHEMA": "telemetry",
    "PermitAll": "tools",
    "PluginError": "plugins",
    "Poolable": "tools",
    "Program": "sandbox",
    "RawItem": "store",
    "RawStorage": "store",
    "RecordTooLarge": "store",
    "RedirectRefusal": "tools",
    "RedirectRefused": "tools",
    "RemoteError": "tools",
    "RemoteFailure": "tools",
    "RemotePool": "tools",
    "RemoteTools": "tools",
    "ResolvedLimits": "sandbox",
    "RunBlobDeletion": "blob",
    "RunDeletion": "store",
    "RunHeader": "store",
    "RunListing": "store",
    "RunState": "store",
    "Sandbox": "sandbox",
    "SandboxBackend": "plugins",
    "SandboxCapabilities": "sandbox",
    "SandboxFailure": "sandbox",
    "SandboxLimit": "sandbox",
    "SandboxLimits": "sandbox",
    "SandboxResult": "sandbox",
    "SchemaInspection": "store",
    "SchemaNotMigrated": "store",
    "SchemaTooNew": "store",
    "SeqConflict": "store",
    "SourceCallFailed": "tools",
    "SourceTool": "tools",
    "SourceTools": "tools",
    "SpanKind": "telemetry",
    "SpanProblem": "telemetry",
    "SpanRule": "telemetry",
    "Store": "store",
    "StoreBackend": "plugins",
    "StoreError": "store",
    "StoreUnavailable": "store",
    "Telemetry": "telemetry",
    "TelemetryBackend": "plugins",
    "TelemetrySchema": "telemetry",
    "TelemetrySpan": "telemetry",
    "TenantAccess": "tools",
    "ToolContext": "tools",
    "ToolSource": "tools",
    "ToolSourceFactory": "plugins",
    "ToolSourceUnavailable": "tools",
    "TransportNotes": "tools",
    "UnknownBlobStoreScheme": "plugins",
    "UnknownMemoryStoreScheme": "plugins",
    "UnknownStoreScheme": "plugins",
    "UnstorableValue": "store",
    "UrlSettings": "store",
    "WORK": "store",
    "admitted": "tools",
    "blob_store_backends": "plugins",
    "check_admission": "store",
    "check_append_batch": "store",
    "check_content_type": "blob",
    "check_listing_limit": "store",
    "check_memory_content": "memory",
    "check_memory_key": "memory",
    "check_read_window": "store",
    "check_schema_version": "store",
    "check_recall_limit": "memory",
    "check_spans": "telemetry",
    "check_window": "blob",
    "claim_order": "store",
    "claimable": "store",
    "coerce_bytes": "blob",
    "credential_digest": "tools",
    "egress_allows": "tools",
    "egress_client": "tools",
    "failure_of": "tools",
    "failure_of_error": "tools",
    "failure_of_status": "tools",
    "header_from_row": "store",
    "header_row": "store",
    "holds_lease": "store",
    "hookimpl": "plugins",
    "import_check": "plugins",
    "installed_telemetry": "plugins",
    "is_runtime_span": "telemetry",
    "lazy_exports": "plugins",
    "leased": "store",
    "leaves": "tools",
    "memory_store_backends": "plugins",
    "mentions": "store",
    "merge_url_options": "store",
    "mint_memory": "memory",
    "newest_facts": "memory",
    "newest_runs": "store",
    "no_memory_can_match": "memory",
    "no_run_can_match": "store",
    "offer_blob_stores": "plugins",
    "offer_doctor_checks": "plugins",
    "offer_memory_stores": "plugins",
    "offer_sandboxes": "plugins",
    "offer_store_and_memory": "plugins",
    "offer_stores": "plugins",
    "offer_telemetry": "plugins",
    "offer_tool_sources": "plugins",
    "offerable": "tools",
    "oldest_settled_runs": "store",
    "parked": "store",
    "permitted_for": "tools",
    "pool_or_own": "tools",
    "provider_for_url": "telemetry",
    "qualified": "tools",
    "redirect_message": "tools",
    "register_plugin": "plugins",
    "released": "store",
    "schema_too_new": "store",
    "reset_plugin_manager": "plugins",
    "sandbox_backends": "plugins",
    "settings_from": "store",
    "signal_run": "store",
    "store_backends": "plugins",
    "sweep_expired_leases": "store",
    "sweep_overdue_deadlines": "store",
    "telemetry_backends": "plugins",
    "unencodable": "store",
    "unstorable": "store",
}
"""Which port module each name is loaded from."""


def __getattr__(name: str) -> Any:
    if name in PORTS:
        return importlib.import_module(f"psych_runtime.adapters.{name}")
    port = _HOME.get(name)
    if port is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}", name=name)
    value = getattr(importlib.import_module(f"psych_runtime.adapters.{port}"), name)
    globals()[name] = value
    return value


def home_of(name: str) -> str:
    """The port module (``store``, ``plugins``...) ``name`` belongs to.

    Raises:
        KeyError: ``name`` is no adapter name.
    """
    return _HOME[name]


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME, *PORTS})


__all__ = sorted(_HOME)
