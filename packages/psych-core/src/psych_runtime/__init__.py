"""Psych Runtime: an embeddable, durable agent runtime for Python.

A library, not a framework: your code calls it, and it calls back only through the
ports you hand it (a model client, tools, a store). This module holds what a program
needs; the rest of the public surface lives in a few namespaces:

* ``psych_runtime.spec``: every Spec model (workflows, subagents, tool sources, ...);
* ``psych_runtime.records``: the Record types of a Run's log, the fold and the views;
* ``psych_runtime.models``: the model port, its stream types, errors and pricing;
* ``psych_runtime.adapters``: ports, checks, errors and hooks for adapter authors;
* ``psych_runtime.testing``: ``FakeModel``, ``LogBuilder`` and the crash helper.

Every other submodule is internal and may move between releases.

Example:
    >>> from datetime import UTC, datetime
    >>> import psych_runtime
    >>> spec = psych_runtime.AgentSpec(name="support", model="gpt-4o")
    >>> published = datetime(2026, 1, 1, tzinfo=UTC)
    >>> psych_runtime.Version.of(spec, published).hash.startswith("sha256:")
    True

Names load on first use, so ``import psych_runtime`` stays cheap.
"""

import importlib
from typing import TYPE_CHECKING
from typing import Any

from psych_runtime._version import __version__

if TYPE_CHECKING:
    from psych_runtime import adapters as adapters
    from psych_runtime import models as models
    from psych_runtime import records as records
    from psych_runtime import spec as spec
    from psych_runtime import testing as testing
    from psych_runtime.blob.memory import InMemoryBlobStore as InMemoryBlobStore
    from psych_runtime.blob.port import BlobKey as BlobKey
    from psych_runtime.blob.port import BlobStore as BlobStore
    from psych_runtime.core.corruption import CorruptLog as CorruptLog
    from psych_runtime.core.errors import AccessDenied as AccessDenied
    from psych_runtime.core.errors import InvalidArgument as InvalidArgument
    from psych_runtime.core.errors import PsychError as PsychError
    from psych_runtime.core.errors import RunNotFound as RunNotFound
    from psych_runtime.core.errors import UnstorableValue as UnstorableValue
    from psych_runtime.core.errors import VersionNotFound as VersionNotFound
    from psych_runtime.core.ids import RunId as RunId
    from psych_runtime.core.ids import ToolCallId as ToolCallId
    from psych_runtime.core.ids import VersionHash as VersionHash
    from psych_runtime.core.ids import WorkerId as WorkerId
    from psych_runtime.core.messages import ToolDefinition as ToolDefinition
    from psych_runtime.core.metering import Cost as Cost
    from psych_runtime.core.metering import Usage as Usage
    from psych_runtime.core.projections.answer import AnswerView as AnswerView
    from psych_runtime.core.projections.report_types import LatencyReport as LatencyReport
    from psych_runtime.core.projections.report_types import RunReport as RunReport
    from psych_runtime.core.projections.report_types import TotalsReport as TotalsReport
    from psych_runtime.core.projections.status import RunStatus as RunStatus
    from psych_runtime.core.projections.thread import ThreadView as ThreadView
    from psych_runtime.core.records import ModelTimings as ModelTimings
    from psych_runtime.core.records import QueueKind as QueueKind
    from psych_runtime.core.records import RunAdmitted as RunAdmitted
    from psych_runtime.core.records import TerminalState as TerminalState
    from psych_runtime.core.records import ToolFailure as ToolFailure
    from psych_runtime.core.records import ToolOutcome as ToolOutcome
    from psych_runtime.core.scope import Scope as Scope
    from psych_runtime.core.spec import A2APeer as A2APeer
    from psych_runtime.core.spec import AgentSpec as AgentSpec
    from psych_runtime.core.spec import CodeTool as CodeTool
    from psych_runtime.core.spec import HttpTool as HttpTool
    from psych_runtime.core.spec import Limits as Limits
    from psych_runtime.core.spec import McpEnv as McpEnv
    from psych_runtime.core.spec import McpServer as McpServer
    from psych_runtime.core.spec import ModelRef as ModelRef
    from psych_runtime.core.spec import SpawnEnvelope as SpawnEnvelope
    from psych_runtime.core.spec import SubagentRef as SubagentRef
    from psych_runtime.core.spec import WorkflowSpec as WorkflowSpec
    from psych_runtime.core.spec.builders import AgentBuilder as AgentBuilder
    from psych_runtime.core.spec.builders import WorkflowBuilder as WorkflowBuilder
    from psych_runtime.core.state import RunStateView as RunStateView
    from psych_runtime.core.validation import SpecValidationError as SpecValidationError
    from psych_runtime.core.validation import ValidationContext as ValidationContext
    from psych_runtime.core.validation import validate as validate
    from psych_runtime.core.version import Version as Version
    from psych_runtime.egress.policy import EgressDecision as EgressDecision
    from psych_runtime.egress.policy import EgressDenied as EgressDenied
    from psych_runtime.egress.policy import EgressPolicy as EgressPolicy
    from psych_runtime.egress.policy import EgressRule as EgressRule
    from psych_runtime.egress.transport import HttpTransport as HttpTransport
    from psych_runtime.memory.local import InMemoryMemoryStore as InMemoryMemoryStore
    from psych_runtime.memory.port import EndUserRequired as EndUserRequired
    from psych_runtime.memory.port import Memory as Memory
    from psych_runtime.memory.port import MemoryKey as MemoryKey
    from psych_runtime.memory.port import MemoryPort as MemoryPort
    from psych_runtime.memory.port import MemoryStore as MemoryStore
    from psych_runtime.model.anthropic import AnthropicClient as AnthropicClient
    from psych_runtime.model.openai_compat import OpenAICompatibleClient as OpenAICompatibleClient
    from psych_runtime.model.port import ModelClient as ModelClient
    from psych_runtime.model.port import ModelRequest as ModelRequest
    from psych_runtime.model.pricing import DEFAULT_PRICES as DEFAULT_PRICES
    from psych_runtime.model.pricing import CostPolicy as CostPolicy
    from psych_runtime.model.pricing import ModelPrice as ModelPrice
    from psych_runtime.model.pricing import PriceResolver as PriceResolver
    from psych_runtime.model.pricing import StaticPriceTable as StaticPriceTable
    from psych_runtime.plugins import open_store as open_store
    from psych_runtime.plugins.urls import open_blob_store as open_blob_store
    from psych_runtime.plugins.urls import open_memory_store as open_memory_store
    from psych_runtime.retention import DeletedRuns as DeletedRuns
    from psych_runtime.retention import DeletionUnsupported as DeletionUnsupported
    from psych_runtime.retention import RunStillActive as RunStillActive
    from psych_runtime.retention import delete_run as delete_run
    from psych_runtime.retention import delete_settled_runs as delete_settled_runs
    from psych_runtime.runtime.admission import Dispatched as Dispatched
    from psych_runtime.runtime.admission import InvalidDispatch as InvalidDispatch
    from psych_runtime.runtime.admission import dispatch as dispatch
    from psych_runtime.runtime.attempt import AttemptRunner as AttemptRunner
    from psych_runtime.runtime.control import RunAlreadySettled as RunAlreadySettled
    from psych_runtime.runtime.control import RunStopping as RunStopping
    from psych_runtime.runtime.control import interrupt as interrupt
    from psych_runtime.runtime.control import send as send
    from psych_runtime.runtime.publish import SharedVersionScope as SharedVersionScope
    from psych_runtime.runtime.publish import publish as publish
    from psych_runtime.runtime.reads import RunAborted as RunAborted
    from psych_runtime.runtime.reads import RunEndedWithoutAnswer as RunEndedWithoutAnswer
    from psych_runtime.runtime.reads import RunFailed as RunFailed
    from psych_runtime.runtime.reads import answer as answer
    from psych_runtime.runtime.reads import read_log as read_log
    from psych_runtime.runtime.reads import report as report
    from psych_runtime.runtime.reads import state as state
    from psych_runtime.runtime.reads import status as status
    from psych_runtime.runtime.reads import stream as stream
    from psych_runtime.runtime.reads import stream_text as stream_text
    from psych_runtime.runtime.reads import thread as thread
    from psych_runtime.runtime.resume import InvalidResume as InvalidResume
    from psych_runtime.runtime.resume import RunNotSuspended as RunNotSuspended
    from psych_runtime.runtime.resume import SuspensionExpired as SuspensionExpired
    from psych_runtime.runtime.resume import resume as resume
    from psych_runtime.runtime.runtime import Runtime as Runtime
    from psych_runtime.runtime.session import Session as Session
    from psych_runtime.runtime.session import session as session
    from psych_runtime.runtime.settings import RuntimeSettings as RuntimeSettings
    from psych_runtime.runtime.settings import WorkerSettings as WorkerSettings
    from psych_runtime.runtime.worker import Worker as Worker
    from psych_runtime.sandbox.port import HostBinding as HostBinding
    from psych_runtime.sandbox.port import Sandbox as Sandbox
    from psych_runtime.sandbox.port import SandboxFailure as SandboxFailure
    from psych_runtime.sandbox.port import SandboxLimit as SandboxLimit
    from psych_runtime.sandbox.port import SandboxLimits as SandboxLimits
    from psych_runtime.sandbox.port import SandboxResult as SandboxResult
    from psych_runtime.store.errors import SchemaNotMigrated as SchemaNotMigrated
    from psych_runtime.store.errors import StoreError as StoreError
    from psych_runtime.store.errors import StoreUnavailable as StoreUnavailable
    from psych_runtime.store.memory import InMemoryStore as InMemoryStore
    from psych_runtime.store.port import RunHeader as RunHeader
    from psych_runtime.store.port import RunState as RunState
    from psych_runtime.store.port import Store as Store
    from psych_runtime.telemetry.port import Telemetry as Telemetry
    from psych_runtime.tools.access import PermitAll as PermitAll
    from psych_runtime.tools.access import TenantAccess as TenantAccess
    from psych_runtime.tools.approval import AllowAll as AllowAll
    from psych_runtime.tools.approval import ApprovalRules as ApprovalRules
    from psych_runtime.tools.approval import Decision as Decision
    from psych_runtime.tools.approval import InvalidApprovalRule as InvalidApprovalRule
    from psych_runtime.tools.approval import Policy as Policy
    from psych_runtime.tools.approval import ToolClass as ToolClass
    from psych_runtime.tools.context import ToolContext as ToolContext
    from psych_runtime.tools.context import idempotency_key_for as idempotency_key_for
    from psych_runtime.tools.errors import ToolArgumentsInvalid as ToolArgumentsInvalid
    from psych_runtime.tools.errors import ToolResultInvalid as ToolResultInvalid
    from psych_runtime.tools.errors import ToolSchemaError as ToolSchemaError
    from psych_runtime.tools.errors import UnknownTool as UnknownTool
    from psych_runtime.tools.registry import ToolRegistry as ToolRegistry
    from psych_runtime.tools.secrets import EnvSecretResolver as EnvSecretResolver
    from psych_runtime.tools.secrets import ResolvedCredential as ResolvedCredential
    from psych_runtime.tools.secrets import SecretResolver as SecretResolver
    from psych_runtime.tools.secrets import StaticSecretResolver as StaticSecretResolver

# Where each name lives; the same names, grouped the same way, as above.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "psych_runtime.core.spec": (
        "A2APeer",
        "AgentSpec",
        "CodeTool",
        "HttpTool",
        "Limits",
        "McpEnv",
        "McpServer",
        "ModelRef",
        "SpawnEnvelope",
        "SubagentRef",
        "WorkflowSpec",
    ),
    "psych_runtime.core.spec.builders": (
        "AgentBuilder",
        "WorkflowBuilder",
    ),
    "psych_runtime.core.version": ("Version",),
    "psych_runtime.core.validation": (
        "SpecValidationError",
        "validate",
        "ValidationContext",
    ),
    "psych_runtime.runtime.session": (
        "Session",
        "session",
    ),
    "psych_runtime.runtime.settings": (
        "RuntimeSettings",
        "WorkerSettings",
    ),
    "psych_runtime.runtime.publish": (
        "publish",
        "SharedVersionScope",
    ),
    "psych_runtime.runtime.admission": (
        "dispatch",
        "Dispatched",
        "InvalidDispatch",
    ),
    "psych_runtime.runtime.control": (
        "interrupt",
        "RunAlreadySettled",
        "RunStopping",
        "send",
    ),
    "psych_runtime.runtime.resume": (
        "InvalidResume",
        "resume",
        "RunNotSuspended",
        "SuspensionExpired",
    ),
    "psych_runtime.runtime.runtime": ("Runtime",),
    "psych_runtime.runtime.attempt": ("AttemptRunner",),
    "psych_runtime.runtime.worker": ("Worker",),
    "psych_runtime.model.anthropic": ("AnthropicClient",),
    "psych_runtime.model.openai_compat": ("OpenAICompatibleClient",),
    "psych_runtime.model.pricing": (
        "CostPolicy",
        "DEFAULT_PRICES",
        "ModelPrice",
        "PriceResolver",
        "StaticPriceTable",
    ),
    "psych_runtime.model.port": (
        "ModelClient",
        "ModelRequest",
    ),
    "psych_runtime.core.messages": ("ToolDefinition",),
    "psych_runtime.tools.registry": ("ToolRegistry",),
    "psych_runtime.tools.access": (
        "PermitAll",
        "TenantAccess",
    ),
    "psych_runtime.tools.approval": (
        "AllowAll",
        "ApprovalRules",
        "Decision",
        "InvalidApprovalRule",
        "Policy",
        "ToolClass",
    ),
    "psych_runtime.tools.context": (
        "idempotency_key_for",
        "ToolContext",
    ),
    "psych_runtime.tools.errors": (
        "ToolArgumentsInvalid",
        "ToolResultInvalid",
        "ToolSchemaError",
        "UnknownTool",
    ),
    "psych_runtime.tools.secrets": (
        "EnvSecretResolver",
        "ResolvedCredential",
        "SecretResolver",
        "StaticSecretResolver",
    ),
    "psych_runtime.egress.transport": ("HttpTransport",),
    "psych_runtime.egress.policy": (
        "EgressDecision",
        "EgressDenied",
        "EgressPolicy",
        "EgressRule",
    ),
    "psych_runtime.runtime.reads": (
        "answer",
        "read_log",
        "report",
        "RunAborted",
        "RunEndedWithoutAnswer",
        "RunFailed",
        "state",
        "status",
        "stream",
        "stream_text",
        "thread",
    ),
    "psych_runtime.core.projections.status": ("RunStatus",),
    "psych_runtime.core.projections.answer": ("AnswerView",),
    "psych_runtime.core.projections.thread": ("ThreadView",),
    "psych_runtime.core.projections.report_types": (
        "LatencyReport",
        "RunReport",
        "TotalsReport",
    ),
    "psych_runtime.core.state": ("RunStateView",),
    "psych_runtime.core.records": (
        "ModelTimings",
        "QueueKind",
        "RunAdmitted",
        "TerminalState",
        "ToolFailure",
        "ToolOutcome",
    ),
    "psych_runtime.core.ids": (
        "RunId",
        "ToolCallId",
        "VersionHash",
        "WorkerId",
    ),
    "psych_runtime.memory.port": (
        "EndUserRequired",
        "Memory",
        "MemoryKey",
        "MemoryPort",
        "MemoryStore",
    ),
    "psych_runtime.memory.local": ("InMemoryMemoryStore",),
    "psych_runtime.plugins": ("open_store",),
    "psych_runtime.plugins.urls": (
        "open_blob_store",
        "open_memory_store",
    ),
    "psych_runtime.store.port": (
        "RunHeader",
        "RunState",
        "Store",
    ),
    "psych_runtime.blob.port": (
        "BlobKey",
        "BlobStore",
    ),
    "psych_runtime.blob.memory": ("InMemoryBlobStore",),
    "psych_runtime.sandbox.port": (
        "HostBinding",
        "Sandbox",
        "SandboxFailure",
        "SandboxLimit",
        "SandboxLimits",
        "SandboxResult",
    ),
    "psych_runtime.telemetry.port": ("Telemetry",),
    "psych_runtime.store.memory": ("InMemoryStore",),
    "psych_runtime.store.errors": (
        "SchemaNotMigrated",
        "StoreError",
        "StoreUnavailable",
    ),
    "psych_runtime.core.scope": ("Scope",),
    "psych_runtime.core.errors": (
        "AccessDenied",
        "InvalidArgument",
        "PsychError",
        "RunNotFound",
        "UnstorableValue",
        "VersionNotFound",
    ),
    "psych_runtime.core.corruption": ("CorruptLog",),
    "psych_runtime.retention": (
        "DeletedRuns",
        "DeletionUnsupported",
        "RunStillActive",
        "delete_run",
        "delete_settled_runs",
    ),
    "psych_runtime.core.metering": (
        "Cost",
        "Usage",
    ),
}

# Names that live in separately installed adapter packages: (module, distribution).
_ADAPTER_EXPORTS: dict[str, tuple[str, str]] = {
    "McpPool": ("psych_mcp", "psych-mcp"),
    "McpPoolKey": ("psych_mcp", "psych-mcp"),
    "McpStubServer": ("psych_mcp", "psych-mcp"),
    "McpTools": ("psych_mcp", "psych-mcp"),
    "A2APool": ("psych_a2a", "psych-a2a"),
    "A2APoolKey": ("psych_a2a", "psych-a2a"),
    "A2ATools": ("psych_a2a", "psych-a2a"),
}
_NAMESPACES = frozenset({"adapters", "models", "records", "spec", "testing"})
_HOME = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> Any:
    if name in _NAMESPACES:
        return importlib.import_module(f"psych_runtime.{name}")
    module = _HOME.get(name)
    if module is None:
        if name in _ADAPTER_EXPORTS:
            return _from_adapter(name)
        raise AttributeError(_missing(name), name=name, obj=__name__)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def _from_adapter(name: str) -> Any:
    """A name an adapter package provides, or an ImportError saying which to install."""
    module, distribution = _ADAPTER_EXPORTS[name]
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as missing:
        if missing.name != module:
            raise
        raise ImportError(
            f"psych_runtime.{name} comes with the separately installed {distribution} "
            f"package; install it (pip install {distribution}) to use it",
            name=module,
        ) from None
    value = getattr(loaded, name)
    globals()[name] = value
    return value


def _missing(name: str) -> str:
    """Say where a name lives when a namespace has it, so a moved import is easy to fix."""
    message = f"module 'psych_runtime' has no attribute {name!r}"
    if name.startswith("__"):
        return message
    for namespace in sorted(_NAMESPACES):
        module = importlib.import_module(f"psych_runtime.{namespace}")
        if name in module.__all__:
            if namespace == "adapters":
                # Adapter names are organised by port: point at the port's module.
                namespace = f"adapters.{module.home_of(name)}"
            return f"{message}; it is psych_runtime.{namespace}.{name}"
    return message


def __dir__() -> list[str]:
    # A set: a namespace already imported is in globals() as well.
    return sorted({*globals(), *_HOME, *_ADAPTER_EXPORTS, *_NAMESPACES})


__all__ = ["__version__", *sorted(_HOME)]
