"""The public surface: each namespace exports exactly the names pinned here.

Adding, removing or moving a public name is a promise to users, so it shows up as a
change to this file in review.
"""

import importlib
import inspect
import re
import subprocess
import sys
import typing
from pathlib import Path
from types import ModuleType

import pytest

import psych_runtime

REPOSITORY = Path(__file__).resolve().parents[4]
# The front page and the page that lists the public names.
DOCUMENTS = (REPOSITORY / "README.md", REPOSITORY / "docs" / "public-api.md")
NAMESPACES = ("spec", "records", "models", "adapters", "testing")

PINNED: dict[str, tuple[str, ...]] = {
    "psych_runtime": (
        "A2APeer",
        "AccessDenied",
        "AgentBuilder",
        "AgentSpec",
        "AllowAll",
        "AnswerView",
        "AnthropicClient",
        "ApprovalRules",
        "AttemptRunner",
        "BlobKey",
        "BlobStore",
        "CodeTool",
        "CorruptLog",
        "Cost",
        "CostPolicy",
        "DEFAULT_PRICES",
        "Decision",
        "DeletedRuns",
        "DeletionUnsupported",
        "Dispatched",
        "EgressDecision",
        "EgressDenied",
        "EgressPolicy",
        "EgressRule",
        "EndUserRequired",
        "EnvSecretResolver",
        "HostBinding",
        "HttpTool",
        "HttpTransport",
        "InMemoryBlobStore",
        "InMemoryMemoryStore",
        "InMemoryStore",
        "InvalidApprovalRule",
        "InvalidArgument",
        "InvalidDispatch",
        "InvalidResume",
        "LatencyReport",
        "Limits",
        "McpEnv",
        "McpServer",
        "Memory",
        "MemoryKey",
        "MemoryPort",
        "MemoryStore",
        "ModelClient",
        "ModelPrice",
        "ModelRef",
        "ModelRequest",
        "ModelTimings",
        "OpenAICompatibleClient",
        "PermitAll",
        "Policy",
        "PriceResolver",
        "PsychError",
        "QueueKind",
        "ResolvedCredential",
        "RunAborted",
        "RunAdmitted",
        "RunAlreadySettled",
        "RunEndedWithoutAnswer",
        "RunFailed",
        "RunHeader",
        "RunId",
        "RunNotFound",
        "RunNotSuspended",
        "RunReport",
        "RunState",
        "RunStateView",
        "RunStatus",
        "RunStillActive",
        "RunStopping",
        "Runtime",
        "RuntimeSettings",
        "Sandbox",
        "SandboxFailure",
        "SandboxLimit",
        "SandboxLimits",
        "SandboxResult",
        "SchemaNotMigrated",
        "Scope",
        "SecretResolver",
        "Session",
        "SharedVersionScope",
        "SpawnEnvelope",
        "SpecValidationError",
        "StaticPriceTable",
        "StaticSecretResolver",
        "Store",
        "StoreError",
        "StoreUnavailable",
        "SubagentRef",
        "SuspensionExpired",
        "Telemetry",
        "TenantAccess",
        "TerminalState",
        "ThreadView",
        "ToolArgumentsInvalid",
        "ToolCallId",
        "ToolClass",
        "ToolContext",
        "ToolDefinition",
        "ToolFailure",
        "ToolOutcome",
        "ToolRegistry",
        "ToolResultInvalid",
        "ToolSchemaError",
        "TotalsReport",
        "UnknownTool",
        "UnstorableValue",
        "Usage",
        "ValidationContext",
        "Version",
        "VersionHash",
        "VersionNotFound",
        "Worker",
        "WorkerId",
        "WorkerSettings",
        "WorkflowBuilder",
        "WorkflowSpec",
        "__version__",
        "answer",
        "delete_run",
        "delete_settled_runs",
        "dispatch",
        "idempotency_key_for",
        "interrupt",
        "open_blob_store",
        "open_memory_store",
        "open_store",
        "publish",
        "read_log",
        "report",
        "resume",
        "send",
        "session",
        "state",
        "status",
        "stream",
        "stream_text",
        "thread",
        "validate",
    ),
    "psych_runtime.spec": (
        "A2APeer",
        "AgentBuilder",
        "AgentSpec",
        "AgentStep",
        "ArtifactCollection",
        "ArtifactPolicy",
        "BranchCase",
        "BranchStep",
        "CodeExecution",
        "CodeExecutionLimits",
        "CodeTool",
        "CompactionPolicy",
        "Condition",
        "ForeachStep",
        "HttpTool",
        "HumanStep",
        "Isolation",
        "Limits",
        "LiteralValue",
        "LiveObjectInSpec",
        "LoopStep",
        "MapStep",
        "McpEnv",
        "McpOAuth",
        "McpServer",
        "ModelRef",
        "NamedToolChoice",
        "NetworkAccess",
        "OutputPolicy",
        "OutputPreservation",
        "ParallelStep",
        "RetryPolicy",
        "SetStateStep",
        "Skill",
        "SleepStep",
        "SpawnEnvelope",
        "SpawnRequest",
        "Spec",
        "SpecValidationError",
        "SubagentRef",
        "SuspensionPolicy",
        "ToolChoice",
        "ToolStep",
        "ValidationContext",
        "ValidationIssue",
        "ValuePath",
        "Version",
        "VersionHashMismatch",
        "WaitStep",
        "WorkflowBuilder",
        "WorkflowSpec",
        "WorkflowStepRef",
        "WorkspaceMode",
        "spec_hash",
        "validate",
    ),
    "psych_runtime.records": (
        "AbortReason",
        "AbortRequested",
        "AnswerView",
        "AskedQuestion",
        "AttemptId",
        "AttemptStarted",
        "CompactionApplied",
        "CompactionReason",
        "CompactionReport",
        "Component",
        "ComponentShown",
        "CorruptLog",
        "CorruptionReason",
        "Cost",
        "CostSource",
        "EntryId",
        "FailureStreakTrip",
        "LatencyReport",
        "Lifecycle",
        "MessageView",
        "ModelCallFailed",
        "ModelCallFinished",
        "ModelCallReport",
        "ModelCallStarted",
        "ModelTimings",
        "PendingApproval",
        "PendingQuestion",
        "PendingWait",
        "QuestionOption",
        "QueueCancelled",
        "QueueConsumed",
        "QueueEnqueued",
        "QueueKind",
        "Record",
        "ResultAttachment",
        "Resumed",
        "RunAdmitted",
        "RunId",
        "RunReport",
        "RunSettled",
        "RunStateView",
        "RunStatus",
        "StepCompleted",
        "StepId",
        "StepReport",
        "StepStarted",
        "SubagentFinished",
        "SubagentMessaged",
        "SubagentReport",
        "SubagentSpawned",
        "SubtreeTotals",
        "SuspendReason",
        "Suspended",
        "SuspensionReport",
        "Task",
        "TaskListUpdated",
        "TerminalState",
        "ThreadView",
        "ToolCallFinished",
        "ToolCallId",
        "ToolCallReport",
        "ToolCallStarted",
        "ToolCallView",
        "ToolDefinition",
        "ToolFailure",
        "ToolOutcome",
        "TotalsReport",
        "TurnStarted",
        "Usage",
        "VersionHash",
        "WorkTurn",
        "WorkerId",
        "record_from_json",
        "record_to_json",
        "reduce",
    ),
    "psych_runtime.models": (
        "DEFAULT_PRICES",
        "DEFAULT_PRICE_CATALOGUE_VERSION",
        "AnthropicClient",
        "AssistantMessage",
        "ContextOverflow",
        "CostPolicy",
        "MalformedChunk",
        "Message",
        "ModelClient",
        "ModelEgressDenied",
        "ModelError",
        "ModelPrice",
        "ModelRequest",
        "OpenAICompatibleClient",
        "PriceResolver",
        "PromptCaching",
        "ReasoningDelta",
        "StaticPriceTable",
        "StreamDone",
        "StreamEvent",
        "StreamIdleTimeout",
        "StreamIncomplete",
        "SystemMessage",
        "TextDelta",
        "ToolCallDelta",
        "ToolCallRequest",
        "ToolDefinition",
        "ToolResultMessage",
        "TransientModelError",
        "UserMessage",
        "compute_cost",
        "load_price_table",
        "resolve_cost",
    ),
    "psych_runtime.adapters": (
        "BatchTooLarge",
        "AUTOLOAD_ENV",
        "SandboxBackend",
        "offer_sandboxes",
        "sandbox_backends",
        "Artifact",
        "Binding",
        "BindingRefused",
        "Execution",
        "ExecutionStatus",
        "Guarantee",
        "Program",
        "RawItem",
        "RawStorage",
        "RunBlobDeletion",
        "RunDeletion",
        "ConnectionPool",
        "Poolable",
        "ResolvedLimits",
        "Sandbox",
        "SandboxCapabilities",
        "HostBinding",
        "InvalidSandboxValue",
        "SandboxFailure",
        "SandboxLimit",
        "SandboxLimits",
        "SandboxResult",
        "ToolSourceFactory",
        "offer_tool_sources",
        "ToolContext",
        "SourceCallFailed",
        "SourceTool",
        "SourceTools",
        "ToolSource",
        "ToolSourceUnavailable",
        "FAILURE_KINDS",
        "AnyPolicy",
        "Catalogue",
        "Endpoint",
        "EgressTransport",
        "GatedTransport",
        "PermitAll",
        "RedirectRefusal",
        "RedirectRefused",
        "RemoteError",
        "RemoteFailure",
        "RemotePool",
        "RemoteTools",
        "TenantAccess",
        "TransportNotes",
        "admitted",
        "egress_allows",
        "credential_digest",
        "egress_client",
        "failure_of",
        "failure_of_error",
        "failure_of_status",
        "leaves",
        "offerable",
        "permitted_for",
        "pool_or_own",
        "qualified",
        "redirect_message",
        "HEADER_COLUMNS",
        "Admission",
        "BlobInfo",
        "BlobKey",
        "BlobNotFound",
        "BlobStore",
        "BlobStoreBackend",
        "DoctorCheck",
        "DoctorResult",
        "Fence",
        "FileBlobStore",
        "InMemoryBlobStore",
        "InMemoryStore",
        "MAX_MEMORY_CHARS",
        "InMemoryMemoryStore",
        "Memory",
        "MemoryKey",
        "MemoryStore",
        "MemoryStoreBackend",
        "UnknownMemoryStoreScheme",
        "check_memory_content",
        "check_memory_key",
        "check_recall_limit",
        "memory_store_backends",
        "mint_memory",
        "newest_facts",
        "offer_memory_stores",
        "IncompatiblePlugin",
        "InvalidBlobKey",
        "InvalidStoreUrl",
        "LeaseLost",
        "LocalNotifier",
        "MAX_JSON_DEPTH",
        "MAX_RECORD_DEPTH",
        "Migratable",
        "Notifier",
        "PLUGIN_API_VERSION",
        "PluginError",
        "RecordTooLarge",
        "RunHeader",
        "RunListing",
        "RunState",
        "SchemaInspection",
        "SchemaNotMigrated",
        "SchemaTooNew",
        "SeqConflict",
        "Store",
        "StoreBackend",
        "StoreError",
        "StoreUnavailable",
        "UnknownBlobStoreScheme",
        "UnknownStoreScheme",
        "UnstorableValue",
        "UrlSettings",
        "WORK",
        "blob_store_backends",
        "check_admission",
        "check_append_batch",
        "check_content_type",
        "check_read_window",
        "check_window",
        "check_listing_limit",
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
        "mentions",
        "newest_runs",
        "oldest_settled_runs",
        "no_run_can_match",
        "offer_blob_stores",
        "offer_doctor_checks",
        "offer_stores",
        "parked",
        "register_plugin",
        "released",
        "reset_plugin_manager",
        "settings_from",
        "store_backends",
        "sweep_expired_leases",
        "sweep_overdue_deadlines",
        "unstorable",
        "NO_TELEMETRY",
        "PSYCH_SCHEMA",
        "AttributeRule",
        "ErrorRule",
        "FinishedSpan",
        "MetricRule",
        "NoTelemetry",
        "SpanProblem",
        "SpanRule",
        "Telemetry",
        "TelemetrySchema",
        "TelemetrySpan",
        "check_spans",
        "TelemetryBackend",
        "offer_telemetry",
        "installed_telemetry",
        "telemetry_backends",
        "OTHER_PROVIDER",
        "SpanKind",
        "is_runtime_span",
        "provider_for_url",
    ),
    "psych_runtime.adapters.store": (
        "Admission",
        "BatchTooLarge",
        "Fence",
        "HEADER_COLUMNS",
        "InMemoryStore",
        "InvalidStoreUrl",
        "LeaseLost",
        "LocalNotifier",
        "MAX_JSON_DEPTH",
        "MAX_RECORD_DEPTH",
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
        "WORK",
        "check_admission",
        "check_append_batch",
        "check_listing_limit",
        "check_read_window",
        "claim_order",
        "claimable",
        "header_from_row",
        "header_row",
        "holds_lease",
        "leased",
        "mentions",
        "newest_runs",
        "no_run_can_match",
        "oldest_settled_runs",
        "parked",
        "released",
        "settings_from",
        "sweep_expired_leases",
        "sweep_overdue_deadlines",
        "unstorable",
    ),
    "psych_runtime.adapters.blob": (
        "BlobInfo",
        "BlobKey",
        "BlobNotFound",
        "BlobStore",
        "FileBlobStore",
        "InMemoryBlobStore",
        "InvalidBlobKey",
        "RawItem",
        "RawStorage",
        "RunBlobDeletion",
        "check_content_type",
        "check_window",
        "coerce_bytes",
        "mentions",
    ),
    "psych_runtime.adapters.memory": (
        "InMemoryMemoryStore",
        "MAX_MEMORY_CHARS",
        "Memory",
        "MemoryKey",
        "MemoryStore",
        "RawItem",
        "RawStorage",
        "check_memory_content",
        "check_memory_key",
        "check_recall_limit",
        "mentions",
        "mint_memory",
        "newest_facts",
    ),
    "psych_runtime.adapters.sandbox": (
        "Artifact",
        "Binding",
        "BindingRefused",
        "Execution",
        "ExecutionStatus",
        "Guarantee",
        "HostBinding",
        "InvalidSandboxValue",
        "Program",
        "ResolvedLimits",
        "Sandbox",
        "SandboxCapabilities",
        "SandboxFailure",
        "SandboxLimit",
        "SandboxLimits",
        "SandboxResult",
    ),
    "psych_runtime.adapters.telemetry": (
        "AttributeRule",
        "ErrorRule",
        "FinishedSpan",
        "MetricRule",
        "NO_TELEMETRY",
        "NoTelemetry",
        "OTHER_PROVIDER",
        "PSYCH_SCHEMA",
        "SpanKind",
        "SpanProblem",
        "SpanRule",
        "Telemetry",
        "TelemetrySchema",
        "TelemetrySpan",
        "check_spans",
        "is_runtime_span",
        "provider_for_url",
    ),
    "psych_runtime.adapters.tools": (
        "AnyPolicy",
        "Catalogue",
        "ConnectionPool",
        "EgressTransport",
        "Endpoint",
        "FAILURE_KINDS",
        "GatedTransport",
        "PermitAll",
        "Poolable",
        "RedirectRefusal",
        "RedirectRefused",
        "RemoteError",
        "RemoteFailure",
        "RemotePool",
        "RemoteTools",
        "SourceCallFailed",
        "SourceTool",
        "SourceTools",
        "TenantAccess",
        "ToolContext",
        "ToolSource",
        "ToolSourceUnavailable",
        "TransportNotes",
        "admitted",
        "credential_digest",
        "egress_allows",
        "egress_client",
        "failure_of",
        "failure_of_error",
        "failure_of_status",
        "leaves",
        "offerable",
        "permitted_for",
        "pool_or_own",
        "qualified",
        "redirect_message",
    ),
    "psych_runtime.adapters.plugins": (
        "AUTOLOAD_ENV",
        "BlobStoreBackend",
        "DoctorCheck",
        "DoctorResult",
        "IncompatiblePlugin",
        "MemoryStoreBackend",
        "PLUGIN_API_VERSION",
        "PluginError",
        "SandboxBackend",
        "StoreBackend",
        "TelemetryBackend",
        "ToolSourceFactory",
        "UnknownBlobStoreScheme",
        "UnknownMemoryStoreScheme",
        "UnknownStoreScheme",
        "blob_store_backends",
        "hookimpl",
        "import_check",
        "installed_telemetry",
        "lazy_exports",
        "memory_store_backends",
        "offer_blob_stores",
        "offer_doctor_checks",
        "offer_memory_stores",
        "offer_sandboxes",
        "offer_stores",
        "offer_telemetry",
        "offer_tool_sources",
        "register_plugin",
        "reset_plugin_manager",
        "sandbox_backends",
        "store_backends",
        "telemetry_backends",
    ),
    "psych_runtime.testing": (
        "CrashRecovery",
        "CrashingStore",
        "FakeModel",
        "ForwardingStore",
        "LogBuilder",
        "ModelsByName",
        "ToolCallScript",
        "crash_and_recover",
    ),
}


def _module(name: str) -> ModuleType:
    return importlib.import_module(name)


@pytest.mark.parametrize("namespace", sorted(PINNED))
def test_a_namespace_exports_exactly_its_pinned_names(namespace: str) -> None:
    exported = list(_module(namespace).__all__)
    expected = list(PINNED[namespace])
    assert len(exported) == len(set(exported)), "a name is listed twice in __all__"
    assert sorted(exported) == sorted(expected)


@pytest.mark.parametrize("namespace", sorted(PINNED))
def test_every_exported_name_resolves(namespace: str) -> None:
    module = _module(namespace)
    assert [name for name in module.__all__ if not hasattr(module, name)] == []


def test_a_name_exported_twice_is_the_same_object_everywhere() -> None:
    homes: dict[str, object] = {}
    for namespace, names in PINNED.items():
        module = _module(namespace)
        for name in names:
            value = getattr(module, name)
            assert homes.setdefault(name, value) is value, f"{name} differs in {namespace}"


def test_the_namespaces_are_attributes_of_the_package() -> None:
    for namespace in NAMESPACES:
        assert getattr(psych_runtime, namespace) is _module(f"psych_runtime.{namespace}")
        assert namespace in dir(psych_runtime)


def test_a_moved_name_says_where_it_lives() -> None:
    with pytest.raises(AttributeError, match=r"psych_runtime\.records\.RunSettled"):
        _ = psych_runtime.RunSettled  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match=r"no attribute 'NoSuchName'$"):
        _ = psych_runtime.NoSuchName  # type: ignore[attr-defined]


def _readme_references() -> set[tuple[str, str]]:
    found = set()
    namespaces = "|".join(NAMESPACES)
    pattern = rf"psych_runtime(?:\.({namespaces}))?\.([A-Za-z_][A-Za-z0-9_]*)"
    text = "\n".join(document.read_text() for document in DOCUMENTS)
    for namespace, name in re.findall(pattern, text):
        if not namespace and name in NAMESPACES:
            continue
        found.add((f"psych_runtime.{namespace}" if namespace else "psych_runtime", name))
    return found


def test_every_public_name_in_the_readme_is_exported() -> None:
    references = _readme_references()
    assert len(references) > 20
    missing = sorted(
        f"{namespace}.{name}"
        for namespace, name in references
        if name not in _module(namespace).__all__
    )
    assert missing == []


def _classes_in(annotation: object) -> set[type]:
    found: set[type] = set()
    origin = typing.get_origin(annotation)
    if origin is not None:
        for arg in typing.get_args(annotation):
            found |= _classes_in(arg)
        return found
    if isinstance(annotation, type) and annotation.__module__.startswith("psych_runtime"):
        found.add(annotation)
    return found


def _public_callables() -> list[tuple[str, str]]:
    return [
        (namespace, name)
        for namespace, names in sorted(PINNED.items())
        for name in names
        if inspect.isfunction(getattr(_module(namespace), name))
    ]


@pytest.mark.parametrize(("namespace", "name"), _public_callables())
def test_types_returned_by_public_functions_are_public(namespace: str, name: str) -> None:
    hints = typing.get_type_hints(getattr(_module(namespace), name))
    public = {id(getattr(_module(ns), n)) for ns, names in PINNED.items() for n in names}
    hidden = sorted(c.__name__ for c in _classes_in(hints.get("return")) if id(c) not in public)
    assert hidden == [], f"{namespace}.{name} returns types no namespace exports: {hidden}"


def test_importing_the_package_loads_no_submodule_eagerly() -> None:
    code = (
        "import sys, psych_runtime; "
        "print(sorted(m for m in sys.modules if m.startswith('psych_runtime.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['psych_runtime._version']"


def test_the_package_docstring_example_runs() -> None:
    import doctest

    failures, tried = doctest.testmod(psych_runtime, verbose=False, report=False)[:2]
    assert tried > 0 and failures == 0


def test_a_first_program_does_not_import_the_http_client() -> None:
    # httpx (with its optional command-line extras) costs a few hundred milliseconds to
    # import; a program that never calls out over HTTP should not pay for it.
    code = (
        "import sys, asyncio, psych_runtime\n"
        "from psych_runtime.testing import FakeModel\n"
        "from psych_runtime.tools import ToolRegistry\n"
        "async def main():\n"
        "    store = await psych_runtime.open_store('memory://')\n"
        "    psych_runtime.Runtime(store, FakeModel(), ToolRegistry())\n"
        "    psych_runtime.AgentSpec(name='a', instructions='b', model='m')\n"
        "asyncio.run(main())\n"
        "print('httpx' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    "namespace", ["psych_runtime", *(f"psych_runtime.{n}" for n in NAMESPACES)]
)
def test_dir_lists_every_public_name_once(namespace: str) -> None:
    import psych_runtime.testing  # noqa: F401  (a loaded namespace must not appear twice)

    listed = dir(_module(namespace))
    assert len(listed) == len(set(listed))
    assert set(_module(namespace).__all__) <= set(listed)


def test_the_type_checking_imports_mirror_the_table_of_exports() -> None:
    """Editors and mypy see exactly the names ``__getattr__`` resolves, from the same homes."""
    import ast

    source = Path(psych_runtime.__file__).read_text()
    tree = ast.parse(source)
    table = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "_EXPORTS"
    )
    guarded = next(node for node in tree.body if isinstance(node, ast.If))
    imported: dict[str, set[str]] = {}
    for node in guarded.body:
        assert isinstance(node, ast.ImportFrom)
        if node.module == "psych_runtime":
            continue
        assert node.module is not None
        imported.setdefault(node.module, set()).update(a.name for a in node.names)
    assert imported == {module: set(names) for module, names in table.items()}


def test_a_name_from_an_adapter_says_which_package_to_install() -> None:
    """``psych_runtime.McpPool`` and friends live in adapter wheels; a missing one is named."""
    code = (
        "import sys; sys.modules['psych_mcp'] = None\n"
        "import psych_runtime\n"
        "try:\n"
        "    from psych_runtime import McpPool\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install psych-mcp" in out.stdout, out


def test_the_adapters_namespace_is_the_union_of_its_port_modules() -> None:
    """Every adapter name has one home, a port module; the namespace only gathers them."""
    adapters = _module("psych_runtime.adapters")
    homes: dict[str, str] = {}
    for port in adapters.PORTS:
        for name in _module(f"psych_runtime.adapters.{port}").__all__:
            homes.setdefault(name, port)
            assert getattr(adapters, name) is getattr(
                _module(f"psych_runtime.adapters.{port}"), name
            ), name
    assert set(homes) == set(adapters.__all__)
