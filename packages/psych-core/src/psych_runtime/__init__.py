"""Psych Runtime: an embeddable, durable agent runtime for Python.

A library, not a framework: your code calls it, and it calls back only through the
ports you hand it (a model client, tools, a store). Everything public is importable
from this module; submodules are internal and may move.

Example:
    >>> from datetime import UTC, datetime
    >>> import psych_runtime
    >>> spec = psych_runtime.AgentSpec(
    ...     name="support", model=psych_runtime.ModelRef(model="gpt-4o")
    ... )
    >>> published = datetime(2026, 1, 1, tzinfo=UTC)
    >>> psych_runtime.Version.of(spec, published).hash.startswith("sha256:")
    True

Names are loaded on first use, so ``import psych_runtime`` stays cheap.
"""

import importlib
from typing import TYPE_CHECKING, Any

from psych_runtime._version import __version__

if TYPE_CHECKING:
    from psych_runtime.blob.filesystem import (
        FileBlobStore as FileBlobStore,
    )
    from psych_runtime.blob.memory import (
        InMemoryBlobStore as InMemoryBlobStore,
    )
    from psych_runtime.blob.port import (
        BlobInfo as BlobInfo,
    )
    from psych_runtime.blob.port import (
        BlobKey as BlobKey,
    )
    from psych_runtime.blob.port import (
        BlobNotFound as BlobNotFound,
    )
    from psych_runtime.blob.port import (
        BlobStore as BlobStore,
    )
    from psych_runtime.blob.port import (
        InvalidBlobKey as InvalidBlobKey,
    )
    from psych_runtime.core.corruption import (
        CorruptionReason as CorruptionReason,
    )
    from psych_runtime.core.corruption import (
        CorruptLog as CorruptLog,
    )
    from psych_runtime.core.errors import (
        AccessDenied as AccessDenied,
    )
    from psych_runtime.core.errors import (
        PsychError as PsychError,
    )
    from psych_runtime.core.errors import (
        RunNotFound as RunNotFound,
    )
    from psych_runtime.core.errors import (
        UnstorableValue as UnstorableValue,
    )
    from psych_runtime.core.errors import (
        VersionNotFound as VersionNotFound,
    )
    from psych_runtime.core.ids import (
        AttemptId as AttemptId,
    )
    from psych_runtime.core.ids import (
        EntryId as EntryId,
    )
    from psych_runtime.core.ids import (
        RunId as RunId,
    )
    from psych_runtime.core.ids import (
        StepId as StepId,
    )
    from psych_runtime.core.ids import (
        ToolCallId as ToolCallId,
    )
    from psych_runtime.core.ids import (
        VersionHash as VersionHash,
    )
    from psych_runtime.core.ids import (
        WorkerId as WorkerId,
    )
    from psych_runtime.core.messages import (
        ToolDefinition as ToolDefinition,
    )
    from psych_runtime.core.metering import (
        Cost as Cost,
    )
    from psych_runtime.core.metering import (
        CostSource as CostSource,
    )
    from psych_runtime.core.metering import (
        Usage as Usage,
    )
    from psych_runtime.core.projections.answer import (
        AnswerView as AnswerView,
    )
    from psych_runtime.core.projections.answer import (
        ToolCallView as ToolCallView,
    )
    from psych_runtime.core.projections.answer import (
        WorkTurn as WorkTurn,
    )
    from psych_runtime.core.projections.report import (
        CompactionReport as CompactionReport,
    )
    from psych_runtime.core.projections.report import (
        FailureStreakTrip as FailureStreakTrip,
    )
    from psych_runtime.core.projections.report import (
        LatencyReport as LatencyReport,
    )
    from psych_runtime.core.projections.report import (
        ModelCallReport as ModelCallReport,
    )
    from psych_runtime.core.projections.report import (
        RunReport as RunReport,
    )
    from psych_runtime.core.projections.report import (
        StepReport as StepReport,
    )
    from psych_runtime.core.projections.report import (
        SubagentReport as SubagentReport,
    )
    from psych_runtime.core.projections.report import (
        SubtreeTotals as SubtreeTotals,
    )
    from psych_runtime.core.projections.report import (
        SuspensionReport as SuspensionReport,
    )
    from psych_runtime.core.projections.report import (
        ToolCallReport as ToolCallReport,
    )
    from psych_runtime.core.projections.report import (
        TotalsReport as TotalsReport,
    )
    from psych_runtime.core.projections.status import (
        PendingApproval as PendingApproval,
    )
    from psych_runtime.core.projections.status import (
        PendingQuestion as PendingQuestion,
    )
    from psych_runtime.core.projections.status import (
        PendingWait as PendingWait,
    )
    from psych_runtime.core.projections.status import (
        RunStatus as RunStatus,
    )
    from psych_runtime.core.projections.thread import (
        MessageView as MessageView,
    )
    from psych_runtime.core.projections.thread import (
        ThreadView as ThreadView,
    )
    from psych_runtime.core.records import (
        AbortRequested as AbortRequested,
    )
    from psych_runtime.core.records import (
        AskedQuestion as AskedQuestion,
    )
    from psych_runtime.core.records import (
        AttemptStarted as AttemptStarted,
    )
    from psych_runtime.core.records import (
        CompactionApplied as CompactionApplied,
    )
    from psych_runtime.core.records import (
        CompactionReason as CompactionReason,
    )
    from psych_runtime.core.records import (
        Component as Component,
    )
    from psych_runtime.core.records import (
        ComponentShown as ComponentShown,
    )
    from psych_runtime.core.records import (
        ModelCallFailed as ModelCallFailed,
    )
    from psych_runtime.core.records import (
        ModelCallFinished as ModelCallFinished,
    )
    from psych_runtime.core.records import (
        ModelCallStarted as ModelCallStarted,
    )
    from psych_runtime.core.records import (
        ModelTimings as ModelTimings,
    )
    from psych_runtime.core.records import (
        QuestionOption as QuestionOption,
    )
    from psych_runtime.core.records import (
        QueueCancelled as QueueCancelled,
    )
    from psych_runtime.core.records import (
        QueueConsumed as QueueConsumed,
    )
    from psych_runtime.core.records import (
        QueueEnqueued as QueueEnqueued,
    )
    from psych_runtime.core.records import (
        QueueKind as QueueKind,
    )
    from psych_runtime.core.records import (
        Record as Record,
    )
    from psych_runtime.core.records import (
        ResultAttachment as ResultAttachment,
    )
    from psych_runtime.core.records import (
        Resumed as Resumed,
    )
    from psych_runtime.core.records import (
        RunAdmitted as RunAdmitted,
    )
    from psych_runtime.core.records import (
        RunSettled as RunSettled,
    )
    from psych_runtime.core.records import (
        StepCompleted as StepCompleted,
    )
    from psych_runtime.core.records import (
        StepStarted as StepStarted,
    )
    from psych_runtime.core.records import (
        SubagentFinished as SubagentFinished,
    )
    from psych_runtime.core.records import (
        SubagentMessaged as SubagentMessaged,
    )
    from psych_runtime.core.records import (
        SubagentSpawned as SubagentSpawned,
    )
    from psych_runtime.core.records import (
        Suspended as Suspended,
    )
    from psych_runtime.core.records import (
        SuspendReason as SuspendReason,
    )
    from psych_runtime.core.records import (
        Task as Task,
    )
    from psych_runtime.core.records import (
        TaskListUpdated as TaskListUpdated,
    )
    from psych_runtime.core.records import (
        TerminalState as TerminalState,
    )
    from psych_runtime.core.records import (
        ToolCallFinished as ToolCallFinished,
    )
    from psych_runtime.core.records import (
        ToolCallStarted as ToolCallStarted,
    )
    from psych_runtime.core.records import (
        ToolFailure as ToolFailure,
    )
    from psych_runtime.core.records import (
        ToolOutcome as ToolOutcome,
    )
    from psych_runtime.core.records import (
        TurnStarted as TurnStarted,
    )
    from psych_runtime.core.records import (
        record_from_json as record_from_json,
    )
    from psych_runtime.core.records import (
        record_to_json as record_to_json,
    )
    from psych_runtime.core.reducer import (
        reduce as reduce,
    )
    from psych_runtime.core.scope import (
        Scope as Scope,
    )
    from psych_runtime.core.spec import (
        A2APeer as A2APeer,
    )
    from psych_runtime.core.spec import (
        AgentSpec as AgentSpec,
    )
    from psych_runtime.core.spec import (
        AgentStep as AgentStep,
    )
    from psych_runtime.core.spec import (
        ArtifactCollection as ArtifactCollection,
    )
    from psych_runtime.core.spec import (
        ArtifactPolicy as ArtifactPolicy,
    )
    from psych_runtime.core.spec import (
        BranchCase as BranchCase,
    )
    from psych_runtime.core.spec import (
        BranchStep as BranchStep,
    )
    from psych_runtime.core.spec import (
        CodeExecution as CodeExecution,
    )
    from psych_runtime.core.spec import (
        CodeExecutionLimits as CodeExecutionLimits,
    )
    from psych_runtime.core.spec import (
        CodeTool as CodeTool,
    )
    from psych_runtime.core.spec import (
        CompactionPolicy as CompactionPolicy,
    )
    from psych_runtime.core.spec import (
        Condition as Condition,
    )
    from psych_runtime.core.spec import (
        ForeachStep as ForeachStep,
    )
    from psych_runtime.core.spec import (
        HttpTool as HttpTool,
    )
    from psych_runtime.core.spec import (
        HumanStep as HumanStep,
    )
    from psych_runtime.core.spec import (
        Isolation as Isolation,
    )
    from psych_runtime.core.spec import (
        Limits as Limits,
    )
    from psych_runtime.core.spec import (
        LiteralValue as LiteralValue,
    )
    from psych_runtime.core.spec import (
        LiveObjectInSpec as LiveObjectInSpec,
    )
    from psych_runtime.core.spec import (
        LoopStep as LoopStep,
    )
    from psych_runtime.core.spec import (
        MapStep as MapStep,
    )
    from psych_runtime.core.spec import (
        McpOAuth as McpOAuth,
    )
    from psych_runtime.core.spec import (
        McpServer as McpServer,
    )
    from psych_runtime.core.spec import (
        ModelRef as ModelRef,
    )
    from psych_runtime.core.spec import (
        NetworkAccess as NetworkAccess,
    )
    from psych_runtime.core.spec import (
        OutputPolicy as OutputPolicy,
    )
    from psych_runtime.core.spec import (
        OutputPreservation as OutputPreservation,
    )
    from psych_runtime.core.spec import (
        ParallelStep as ParallelStep,
    )
    from psych_runtime.core.spec import (
        RetryPolicy as RetryPolicy,
    )
    from psych_runtime.core.spec import (
        SetStateStep as SetStateStep,
    )
    from psych_runtime.core.spec import (
        Skill as Skill,
    )
    from psych_runtime.core.spec import (
        SleepStep as SleepStep,
    )
    from psych_runtime.core.spec import (
        SpawnEnvelope as SpawnEnvelope,
    )
    from psych_runtime.core.spec import (
        SpawnRequest as SpawnRequest,
    )
    from psych_runtime.core.spec import (
        Spec as Spec,
    )
    from psych_runtime.core.spec import (
        SubagentRef as SubagentRef,
    )
    from psych_runtime.core.spec import (
        SuspensionPolicy as SuspensionPolicy,
    )
    from psych_runtime.core.spec import (
        ToolStep as ToolStep,
    )
    from psych_runtime.core.spec import (
        ValuePath as ValuePath,
    )
    from psych_runtime.core.spec import (
        WaitStep as WaitStep,
    )
    from psych_runtime.core.spec import (
        WorkflowSpec as WorkflowSpec,
    )
    from psych_runtime.core.spec import (
        WorkflowStepRef as WorkflowStepRef,
    )
    from psych_runtime.core.spec import (
        WorkspaceMode as WorkspaceMode,
    )
    from psych_runtime.core.state import (
        Lifecycle as Lifecycle,
    )
    from psych_runtime.core.state import (
        RunStateView as RunStateView,
    )
    from psych_runtime.core.validation import (
        SpecValidationError as SpecValidationError,
    )
    from psych_runtime.core.validation import (
        ValidationContext as ValidationContext,
    )
    from psych_runtime.core.validation import (
        ValidationIssue as ValidationIssue,
    )
    from psych_runtime.core.validation import (
        validate as validate,
    )
    from psych_runtime.core.version import (
        Version as Version,
    )
    from psych_runtime.core.version import (
        VersionHashMismatch as VersionHashMismatch,
    )
    from psych_runtime.core.version import (
        spec_hash as spec_hash,
    )
    from psych_runtime.model.egress import (
        EgressDecision as EgressDecision,
    )
    from psych_runtime.model.egress import (
        EgressDenied as EgressDenied,
    )
    from psych_runtime.model.egress import (
        EgressPolicy as EgressPolicy,
    )
    from psych_runtime.model.egress import (
        EgressRule as EgressRule,
    )
    from psych_runtime.model.openai_compat import (
        OpenAICompatibleClient as OpenAICompatibleClient,
    )
    from psych_runtime.model.port import (
        ContextOverflow as ContextOverflow,
    )
    from psych_runtime.model.port import (
        MalformedChunk as MalformedChunk,
    )
    from psych_runtime.model.port import (
        ModelClient as ModelClient,
    )
    from psych_runtime.model.port import (
        ModelEgressDenied as ModelEgressDenied,
    )
    from psych_runtime.model.port import (
        ModelError as ModelError,
    )
    from psych_runtime.model.port import (
        ModelRequest as ModelRequest,
    )
    from psych_runtime.model.port import (
        ReasoningDelta as ReasoningDelta,
    )
    from psych_runtime.model.port import (
        StreamDone as StreamDone,
    )
    from psych_runtime.model.port import (
        StreamIdleTimeout as StreamIdleTimeout,
    )
    from psych_runtime.model.port import (
        StreamIncomplete as StreamIncomplete,
    )
    from psych_runtime.model.port import (
        TextDelta as TextDelta,
    )
    from psych_runtime.model.port import (
        ToolCallDelta as ToolCallDelta,
    )
    from psych_runtime.model.port import (
        TransientModelError as TransientModelError,
    )
    from psych_runtime.model.pricing import (
        DEFAULT_PRICE_CATALOGUE_VERSION as DEFAULT_PRICE_CATALOGUE_VERSION,
    )
    from psych_runtime.model.pricing import (
        DEFAULT_PRICES as DEFAULT_PRICES,
    )
    from psych_runtime.model.pricing import (
        CostPolicy as CostPolicy,
    )
    from psych_runtime.model.pricing import (
        ModelPrice as ModelPrice,
    )
    from psych_runtime.model.pricing import (
        PriceResolver as PriceResolver,
    )
    from psych_runtime.model.pricing import (
        StaticPriceTable as StaticPriceTable,
    )
    from psych_runtime.model.pricing import (
        compute_cost as compute_cost,
    )
    from psych_runtime.model.pricing import (
        load_price_table as load_price_table,
    )
    from psych_runtime.model.pricing import (
        resolve_cost as resolve_cost,
    )
    from psych_runtime.model.transport import (
        HttpTransport as HttpTransport,
    )
    from psych_runtime.plugins import (
        PLUGIN_API_VERSION as PLUGIN_API_VERSION,
    )
    from psych_runtime.plugins import (
        BlobStoreBackend as BlobStoreBackend,
    )
    from psych_runtime.plugins import (
        DoctorCheck as DoctorCheck,
    )
    from psych_runtime.plugins import (
        DoctorResult as DoctorResult,
    )
    from psych_runtime.plugins import (
        IncompatiblePlugin as IncompatiblePlugin,
    )
    from psych_runtime.plugins import (
        PluginError as PluginError,
    )
    from psych_runtime.plugins import (
        StoreBackend as StoreBackend,
    )
    from psych_runtime.plugins import (
        UnknownStoreScheme as UnknownStoreScheme,
    )
    from psych_runtime.plugins import (
        hookimpl as hookimpl,
    )
    from psych_runtime.plugins import (
        open_store as open_store,
    )
    from psych_runtime.plugins import (
        register_plugin as register_plugin,
    )
    from psych_runtime.plugins.backends import (
        import_check as import_check,
    )
    from psych_runtime.plugins.errors import (
        UnknownBlobStoreScheme as UnknownBlobStoreScheme,
    )
    from psych_runtime.plugins.urls import (
        open_blob_store as open_blob_store,
    )
    from psych_runtime.reporting import (
        report as report,
    )
    from psych_runtime.runtime.abort import (
        AbortReason as AbortReason,
    )
    from psych_runtime.runtime.dispatch import (
        Dispatched as Dispatched,
    )
    from psych_runtime.runtime.dispatch import (
        InvalidDispatch as InvalidDispatch,
    )
    from psych_runtime.runtime.dispatch import (
        RunAlreadySettled as RunAlreadySettled,
    )
    from psych_runtime.runtime.dispatch import (
        SharedVersionScope as SharedVersionScope,
    )
    from psych_runtime.runtime.dispatch import (
        dispatch as dispatch,
    )
    from psych_runtime.runtime.dispatch import (
        interrupt as interrupt,
    )
    from psych_runtime.runtime.dispatch import (
        publish as publish,
    )
    from psych_runtime.runtime.dispatch import (
        send as send,
    )
    from psych_runtime.runtime.journal import (
        Journal as Journal,
    )
    from psych_runtime.runtime.reads import (
        RunAborted as RunAborted,
    )
    from psych_runtime.runtime.reads import (
        RunEndedWithoutAnswer as RunEndedWithoutAnswer,
    )
    from psych_runtime.runtime.reads import (
        RunFailed as RunFailed,
    )
    from psych_runtime.runtime.reads import (
        answer as answer,
    )
    from psych_runtime.runtime.reads import (
        records as records,
    )
    from psych_runtime.runtime.reads import (
        state as state,
    )
    from psych_runtime.runtime.reads import (
        status as status,
    )
    from psych_runtime.runtime.reads import (
        stream as stream,
    )
    from psych_runtime.runtime.reads import (
        stream_text as stream_text,
    )
    from psych_runtime.runtime.reads import (
        thread as thread,
    )
    from psych_runtime.runtime.runtime import (
        Runtime as Runtime,
    )
    from psych_runtime.runtime.session import (
        RuntimeSettings as RuntimeSettings,
    )
    from psych_runtime.runtime.session import (
        Session as Session,
    )
    from psych_runtime.runtime.session import (
        WorkerSettings as WorkerSettings,
    )
    from psych_runtime.runtime.session import (
        session as session,
    )
    from psych_runtime.runtime.worker import (
        AttemptRunner as AttemptRunner,
    )
    from psych_runtime.runtime.worker import (
        Worker as Worker,
    )
    from psych_runtime.store.checks import (
        check_admission as check_admission,
    )
    from psych_runtime.store.checks import (
        check_append_batch as check_append_batch,
    )
    from psych_runtime.store.checks import (
        check_read_window as check_read_window,
    )
    from psych_runtime.store.checks import (
        no_run_can_match as no_run_can_match,
    )
    from psych_runtime.store.errors import (
        InvalidStoreUrl as InvalidStoreUrl,
    )
    from psych_runtime.store.errors import (
        LeaseLost as LeaseLost,
    )
    from psych_runtime.store.errors import (
        RecordTooLarge as RecordTooLarge,
    )
    from psych_runtime.store.errors import (
        SchemaNotMigrated as SchemaNotMigrated,
    )
    from psych_runtime.store.errors import (
        SchemaTooNew as SchemaTooNew,
    )
    from psych_runtime.store.errors import (
        SeqConflict as SeqConflict,
    )
    from psych_runtime.store.errors import (
        StoreError as StoreError,
    )
    from psych_runtime.store.errors import (
        StoreUnavailable as StoreUnavailable,
    )
    from psych_runtime.store.memory import (
        InMemoryStore as InMemoryStore,
    )
    from psych_runtime.store.notify import (
        WORK as WORK,
    )
    from psych_runtime.store.notify import (
        LocalNotifier as LocalNotifier,
    )
    from psych_runtime.store.notify import (
        Notifier as Notifier,
    )
    from psych_runtime.store.port import (
        Admission as Admission,
    )
    from psych_runtime.store.port import (
        Fence as Fence,
    )
    from psych_runtime.store.port import (
        Migratable as Migratable,
    )
    from psych_runtime.store.port import (
        RunHeader as RunHeader,
    )
    from psych_runtime.store.port import (
        RunState as RunState,
    )
    from psych_runtime.store.port import (
        Store as Store,
    )
    from psych_runtime.tools.context import (
        ToolContext as ToolContext,
    )
    from psych_runtime.tools.context import (
        idempotency_key_for as idempotency_key_for,
    )
    from psych_runtime.tools.errors import (
        ToolArgumentsInvalid as ToolArgumentsInvalid,
    )
    from psych_runtime.tools.errors import (
        ToolResultInvalid as ToolResultInvalid,
    )
    from psych_runtime.tools.errors import (
        ToolSchemaError as ToolSchemaError,
    )
    from psych_runtime.tools.errors import (
        UnknownTool as UnknownTool,
    )
    from psych_runtime.tools.large_results import (
        DEFAULT_OFFLOAD_BYTES as DEFAULT_OFFLOAD_BYTES,
    )
    from psych_runtime.tools.registry import (
        RegisteredTool as RegisteredTool,
    )
    from psych_runtime.tools.registry import (
        ToolRegistry as ToolRegistry,
    )
    from psych_runtime.tools.secrets import (
        EnvSecretResolver as EnvSecretResolver,
    )
    from psych_runtime.tools.secrets import (
        ResolvedCredential as ResolvedCredential,
    )
    from psych_runtime.tools.secrets import (
        SecretResolver as SecretResolver,
    )
    from psych_runtime.tools.secrets import (
        StaticSecretResolver as StaticSecretResolver,
    )

_EXPORTS: dict[str, str] = {
    "RunId": "psych_runtime.core.ids",
    "AttemptId": "psych_runtime.core.ids",
    "WorkerId": "psych_runtime.core.ids",
    "ToolCallId": "psych_runtime.core.ids",
    "StepId": "psych_runtime.core.ids",
    "EntryId": "psych_runtime.core.ids",
    "VersionHash": "psych_runtime.core.ids",
    "Scope": "psych_runtime.core.scope",
    "PsychError": "psych_runtime.core.errors",
    "AccessDenied": "psych_runtime.core.errors",
    "RunNotFound": "psych_runtime.core.errors",
    "VersionNotFound": "psych_runtime.core.errors",
    "UnstorableValue": "psych_runtime.core.errors",
    "Usage": "psych_runtime.core.metering",
    "Cost": "psych_runtime.core.metering",
    "CostSource": "psych_runtime.core.metering",
    "record_to_json": "psych_runtime.core.records",
    "record_from_json": "psych_runtime.core.records",
    "Record": "psych_runtime.core.records",
    "RunAdmitted": "psych_runtime.core.records",
    "AttemptStarted": "psych_runtime.core.records",
    "RunSettled": "psych_runtime.core.records",
    "TurnStarted": "psych_runtime.core.records",
    "ModelCallStarted": "psych_runtime.core.records",
    "ModelCallFinished": "psych_runtime.core.records",
    "ModelCallFailed": "psych_runtime.core.records",
    "ToolCallStarted": "psych_runtime.core.records",
    "ToolCallFinished": "psych_runtime.core.records",
    "StepStarted": "psych_runtime.core.records",
    "StepCompleted": "psych_runtime.core.records",
    "AbortRequested": "psych_runtime.core.records",
    "QueueEnqueued": "psych_runtime.core.records",
    "QueueCancelled": "psych_runtime.core.records",
    "QueueConsumed": "psych_runtime.core.records",
    "Suspended": "psych_runtime.core.records",
    "Resumed": "psych_runtime.core.records",
    "CompactionApplied": "psych_runtime.core.records",
    "TaskListUpdated": "psych_runtime.core.records",
    "ComponentShown": "psych_runtime.core.records",
    "SubagentSpawned": "psych_runtime.core.records",
    "SubagentMessaged": "psych_runtime.core.records",
    "SubagentFinished": "psych_runtime.core.records",
    "TerminalState": "psych_runtime.core.records",
    "ToolOutcome": "psych_runtime.core.records",
    "SuspendReason": "psych_runtime.core.records",
    "QueueKind": "psych_runtime.core.records",
    "CompactionReason": "psych_runtime.core.records",
    "ToolFailure": "psych_runtime.core.records",
    "ModelTimings": "psych_runtime.core.records",
    "ResultAttachment": "psych_runtime.core.records",
    "AskedQuestion": "psych_runtime.core.records",
    "QuestionOption": "psych_runtime.core.records",
    "Task": "psych_runtime.core.records",
    "Component": "psych_runtime.core.records",
    "AgentSpec": "psych_runtime.core.spec",
    "WorkflowSpec": "psych_runtime.core.spec",
    "Spec": "psych_runtime.core.spec",
    "ModelRef": "psych_runtime.core.spec",
    "Limits": "psych_runtime.core.spec",
    "CodeTool": "psych_runtime.core.spec",
    "HttpTool": "psych_runtime.core.spec",
    "McpServer": "psych_runtime.core.spec",
    "McpOAuth": "psych_runtime.core.spec",
    "A2APeer": "psych_runtime.core.spec",
    "Skill": "psych_runtime.core.spec",
    "SubagentRef": "psych_runtime.core.spec",
    "SpawnEnvelope": "psych_runtime.core.spec",
    "SpawnRequest": "psych_runtime.core.spec",
    "SuspensionPolicy": "psych_runtime.core.spec",
    "CompactionPolicy": "psych_runtime.core.spec",
    "CodeExecution": "psych_runtime.core.spec",
    "CodeExecutionLimits": "psych_runtime.core.spec",
    "OutputPolicy": "psych_runtime.core.spec",
    "ArtifactPolicy": "psych_runtime.core.spec",
    "Isolation": "psych_runtime.core.spec",
    "NetworkAccess": "psych_runtime.core.spec",
    "WorkspaceMode": "psych_runtime.core.spec",
    "OutputPreservation": "psych_runtime.core.spec",
    "ArtifactCollection": "psych_runtime.core.spec",
    "AgentStep": "psych_runtime.core.spec",
    "ToolStep": "psych_runtime.core.spec",
    "WorkflowStepRef": "psych_runtime.core.spec",
    "ParallelStep": "psych_runtime.core.spec",
    "BranchStep": "psych_runtime.core.spec",
    "BranchCase": "psych_runtime.core.spec",
    "ForeachStep": "psych_runtime.core.spec",
    "LoopStep": "psych_runtime.core.spec",
    "MapStep": "psych_runtime.core.spec",
    "SetStateStep": "psych_runtime.core.spec",
    "SleepStep": "psych_runtime.core.spec",
    "WaitStep": "psych_runtime.core.spec",
    "HumanStep": "psych_runtime.core.spec",
    "Condition": "psych_runtime.core.spec",
    "ValuePath": "psych_runtime.core.spec",
    "LiteralValue": "psych_runtime.core.spec",
    "RetryPolicy": "psych_runtime.core.spec",
    "LiveObjectInSpec": "psych_runtime.core.spec",
    "Version": "psych_runtime.core.version",
    "VersionHashMismatch": "psych_runtime.core.version",
    "spec_hash": "psych_runtime.core.version",
    "ValidationContext": "psych_runtime.core.validation",
    "ValidationIssue": "psych_runtime.core.validation",
    "SpecValidationError": "psych_runtime.core.validation",
    "validate": "psych_runtime.core.validation",
    "CorruptLog": "psych_runtime.core.corruption",
    "CorruptionReason": "psych_runtime.core.corruption",
    "RunStateView": "psych_runtime.core.state",
    "Lifecycle": "psych_runtime.core.state",
    "reduce": "psych_runtime.core.reducer",
    "ToolDefinition": "psych_runtime.core.messages",
    "RunStatus": "psych_runtime.core.projections.status",
    "PendingApproval": "psych_runtime.core.projections.status",
    "PendingQuestion": "psych_runtime.core.projections.status",
    "PendingWait": "psych_runtime.core.projections.status",
    "AnswerView": "psych_runtime.core.projections.answer",
    "WorkTurn": "psych_runtime.core.projections.answer",
    "ToolCallView": "psych_runtime.core.projections.answer",
    "ThreadView": "psych_runtime.core.projections.thread",
    "MessageView": "psych_runtime.core.projections.thread",
    "RunReport": "psych_runtime.core.projections.report",
    "ModelCallReport": "psych_runtime.core.projections.report",
    "ToolCallReport": "psych_runtime.core.projections.report",
    "StepReport": "psych_runtime.core.projections.report",
    "FailureStreakTrip": "psych_runtime.core.projections.report",
    "SuspensionReport": "psych_runtime.core.projections.report",
    "CompactionReport": "psych_runtime.core.projections.report",
    "TotalsReport": "psych_runtime.core.projections.report",
    "LatencyReport": "psych_runtime.core.projections.report",
    "SubagentReport": "psych_runtime.core.projections.report",
    "SubtreeTotals": "psych_runtime.core.projections.report",
    "Store": "psych_runtime.store.port",
    "RunHeader": "psych_runtime.store.port",
    "RunState": "psych_runtime.store.port",
    "Fence": "psych_runtime.store.port",
    "Migratable": "psych_runtime.store.port",
    "Admission": "psych_runtime.store.port",
    "Notifier": "psych_runtime.store.notify",
    "LocalNotifier": "psych_runtime.store.notify",
    "WORK": "psych_runtime.store.notify",
    "StoreError": "psych_runtime.store.errors",
    "SeqConflict": "psych_runtime.store.errors",
    "LeaseLost": "psych_runtime.store.errors",
    "StoreUnavailable": "psych_runtime.store.errors",
    "SchemaTooNew": "psych_runtime.store.errors",
    "SchemaNotMigrated": "psych_runtime.store.errors",
    "InvalidStoreUrl": "psych_runtime.store.errors",
    "RecordTooLarge": "psych_runtime.store.errors",
    "InMemoryStore": "psych_runtime.store.memory",
    "check_append_batch": "psych_runtime.store.checks",
    "check_admission": "psych_runtime.store.checks",
    "check_read_window": "psych_runtime.store.checks",
    "no_run_can_match": "psych_runtime.store.checks",
    "BlobStore": "psych_runtime.blob.port",
    "BlobKey": "psych_runtime.blob.port",
    "BlobInfo": "psych_runtime.blob.port",
    "BlobNotFound": "psych_runtime.blob.port",
    "InvalidBlobKey": "psych_runtime.blob.port",
    "InMemoryBlobStore": "psych_runtime.blob.memory",
    "FileBlobStore": "psych_runtime.blob.filesystem",
    "open_blob_store": "psych_runtime.plugins.urls",
    "UnknownBlobStoreScheme": "psych_runtime.plugins.errors",
    "DEFAULT_OFFLOAD_BYTES": "psych_runtime.tools.large_results",
    "EgressPolicy": "psych_runtime.model.egress",
    "EgressRule": "psych_runtime.model.egress",
    "EgressDecision": "psych_runtime.model.egress",
    "EgressDenied": "psych_runtime.model.egress",
    "HttpTransport": "psych_runtime.model.transport",
    "OpenAICompatibleClient": "psych_runtime.model.openai_compat",
    "ModelClient": "psych_runtime.model.port",
    "ModelRequest": "psych_runtime.model.port",
    "ModelError": "psych_runtime.model.port",
    "TransientModelError": "psych_runtime.model.port",
    "ContextOverflow": "psych_runtime.model.port",
    "StreamDone": "psych_runtime.model.port",
    "TextDelta": "psych_runtime.model.port",
    "ToolCallDelta": "psych_runtime.model.port",
    "ReasoningDelta": "psych_runtime.model.port",
    "StreamIncomplete": "psych_runtime.model.port",
    "StreamIdleTimeout": "psych_runtime.model.port",
    "MalformedChunk": "psych_runtime.model.port",
    "ModelEgressDenied": "psych_runtime.model.port",
    "ModelPrice": "psych_runtime.model.pricing",
    "StaticPriceTable": "psych_runtime.model.pricing",
    "PriceResolver": "psych_runtime.model.pricing",
    "CostPolicy": "psych_runtime.model.pricing",
    "compute_cost": "psych_runtime.model.pricing",
    "resolve_cost": "psych_runtime.model.pricing",
    "DEFAULT_PRICES": "psych_runtime.model.pricing",
    "DEFAULT_PRICE_CATALOGUE_VERSION": "psych_runtime.model.pricing",
    "load_price_table": "psych_runtime.model.pricing",
    "ToolRegistry": "psych_runtime.tools.registry",
    "RegisteredTool": "psych_runtime.tools.registry",
    "ToolContext": "psych_runtime.tools.context",
    "idempotency_key_for": "psych_runtime.tools.context",
    "ToolSchemaError": "psych_runtime.tools.errors",
    "ToolArgumentsInvalid": "psych_runtime.tools.errors",
    "ToolResultInvalid": "psych_runtime.tools.errors",
    "UnknownTool": "psych_runtime.tools.errors",
    "SecretResolver": "psych_runtime.tools.secrets",
    "ResolvedCredential": "psych_runtime.tools.secrets",
    "EnvSecretResolver": "psych_runtime.tools.secrets",
    "StaticSecretResolver": "psych_runtime.tools.secrets",
    "open_store": "psych_runtime.plugins",
    "StoreBackend": "psych_runtime.plugins",
    "BlobStoreBackend": "psych_runtime.plugins",
    "DoctorCheck": "psych_runtime.plugins",
    "DoctorResult": "psych_runtime.plugins",
    "IncompatiblePlugin": "psych_runtime.plugins",
    "PluginError": "psych_runtime.plugins",
    "UnknownStoreScheme": "psych_runtime.plugins",
    "PLUGIN_API_VERSION": "psych_runtime.plugins",
    "hookimpl": "psych_runtime.plugins",
    "register_plugin": "psych_runtime.plugins",
    "import_check": "psych_runtime.plugins.backends",
    "Runtime": "psych_runtime.runtime.runtime",
    "Worker": "psych_runtime.runtime.worker",
    "WorkerSettings": "psych_runtime.runtime.session",
    "AttemptRunner": "psych_runtime.runtime.worker",
    "AbortReason": "psych_runtime.runtime.abort",
    "Journal": "psych_runtime.runtime.journal",
    "RuntimeSettings": "psych_runtime.runtime.session",
    "Session": "psych_runtime.runtime.session",
    "session": "psych_runtime.runtime.session",
    "Dispatched": "psych_runtime.runtime.dispatch",
    "RunAlreadySettled": "psych_runtime.runtime.dispatch",
    "InvalidDispatch": "psych_runtime.runtime.dispatch",
    "SharedVersionScope": "psych_runtime.runtime.dispatch",
    "publish": "psych_runtime.runtime.dispatch",
    "dispatch": "psych_runtime.runtime.dispatch",
    "interrupt": "psych_runtime.runtime.dispatch",
    "send": "psych_runtime.runtime.dispatch",
    "records": "psych_runtime.runtime.reads",
    "state": "psych_runtime.runtime.reads",
    "status": "psych_runtime.runtime.reads",
    "answer": "psych_runtime.runtime.reads",
    "thread": "psych_runtime.runtime.reads",
    "stream": "psych_runtime.runtime.reads",
    "stream_text": "psych_runtime.runtime.reads",
    "RunEndedWithoutAnswer": "psych_runtime.runtime.reads",
    "RunFailed": "psych_runtime.runtime.reads",
    "RunAborted": "psych_runtime.runtime.reads",
    "report": "psych_runtime.reporting",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'psych_runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "DEFAULT_OFFLOAD_BYTES",
    "DEFAULT_PRICES",
    "DEFAULT_PRICE_CATALOGUE_VERSION",
    "PLUGIN_API_VERSION",
    "WORK",
    "A2APeer",
    "AbortReason",
    "AbortRequested",
    "AccessDenied",
    "Admission",
    "AgentSpec",
    "AgentStep",
    "AnswerView",
    "ArtifactCollection",
    "ArtifactPolicy",
    "AskedQuestion",
    "AttemptId",
    "AttemptRunner",
    "AttemptStarted",
    "BlobInfo",
    "BlobKey",
    "BlobNotFound",
    "BlobStore",
    "BlobStoreBackend",
    "BranchCase",
    "BranchStep",
    "CodeExecution",
    "CodeExecutionLimits",
    "CodeTool",
    "CompactionApplied",
    "CompactionPolicy",
    "CompactionReason",
    "CompactionReport",
    "Component",
    "ComponentShown",
    "Condition",
    "ContextOverflow",
    "CorruptLog",
    "CorruptionReason",
    "Cost",
    "CostPolicy",
    "CostSource",
    "Dispatched",
    "DoctorCheck",
    "DoctorResult",
    "EgressDecision",
    "EgressDenied",
    "EgressPolicy",
    "EgressRule",
    "EntryId",
    "EnvSecretResolver",
    "FailureStreakTrip",
    "Fence",
    "FileBlobStore",
    "ForeachStep",
    "HttpTool",
    "HttpTransport",
    "HumanStep",
    "InMemoryBlobStore",
    "InMemoryStore",
    "IncompatiblePlugin",
    "InvalidBlobKey",
    "InvalidDispatch",
    "InvalidStoreUrl",
    "Isolation",
    "Journal",
    "LatencyReport",
    "LeaseLost",
    "Lifecycle",
    "Limits",
    "LiteralValue",
    "LiveObjectInSpec",
    "LocalNotifier",
    "LoopStep",
    "MalformedChunk",
    "MapStep",
    "McpOAuth",
    "McpServer",
    "MessageView",
    "Migratable",
    "ModelCallFailed",
    "ModelCallFinished",
    "ModelCallReport",
    "ModelCallStarted",
    "ModelClient",
    "ModelEgressDenied",
    "ModelError",
    "ModelPrice",
    "ModelRef",
    "ModelRequest",
    "ModelTimings",
    "NetworkAccess",
    "Notifier",
    "OpenAICompatibleClient",
    "OutputPolicy",
    "OutputPreservation",
    "ParallelStep",
    "PendingApproval",
    "PendingQuestion",
    "PendingWait",
    "PluginError",
    "PriceResolver",
    "PsychError",
    "QuestionOption",
    "QueueCancelled",
    "QueueConsumed",
    "QueueEnqueued",
    "QueueKind",
    "ReasoningDelta",
    "Record",
    "RecordTooLarge",
    "RegisteredTool",
    "ResolvedCredential",
    "ResultAttachment",
    "Resumed",
    "RetryPolicy",
    "RunAborted",
    "RunAdmitted",
    "RunAlreadySettled",
    "RunEndedWithoutAnswer",
    "RunFailed",
    "RunHeader",
    "RunId",
    "RunNotFound",
    "RunReport",
    "RunSettled",
    "RunState",
    "RunStateView",
    "RunStatus",
    "Runtime",
    "RuntimeSettings",
    "SchemaNotMigrated",
    "SchemaTooNew",
    "Scope",
    "SecretResolver",
    "SeqConflict",
    "Session",
    "SetStateStep",
    "SharedVersionScope",
    "Skill",
    "SleepStep",
    "SpawnEnvelope",
    "SpawnRequest",
    "Spec",
    "SpecValidationError",
    "StaticPriceTable",
    "StaticSecretResolver",
    "StepCompleted",
    "StepId",
    "StepReport",
    "StepStarted",
    "Store",
    "StoreBackend",
    "StoreError",
    "StoreUnavailable",
    "StreamDone",
    "StreamIdleTimeout",
    "StreamIncomplete",
    "SubagentFinished",
    "SubagentMessaged",
    "SubagentRef",
    "SubagentReport",
    "SubagentSpawned",
    "SubtreeTotals",
    "SuspendReason",
    "Suspended",
    "SuspensionPolicy",
    "SuspensionReport",
    "Task",
    "TaskListUpdated",
    "TerminalState",
    "TextDelta",
    "ThreadView",
    "ToolArgumentsInvalid",
    "ToolCallDelta",
    "ToolCallFinished",
    "ToolCallId",
    "ToolCallReport",
    "ToolCallStarted",
    "ToolCallView",
    "ToolContext",
    "ToolDefinition",
    "ToolFailure",
    "ToolOutcome",
    "ToolRegistry",
    "ToolResultInvalid",
    "ToolSchemaError",
    "ToolStep",
    "TotalsReport",
    "TransientModelError",
    "TurnStarted",
    "UnknownBlobStoreScheme",
    "UnknownStoreScheme",
    "UnknownTool",
    "UnstorableValue",
    "Usage",
    "ValidationContext",
    "ValidationIssue",
    "ValuePath",
    "Version",
    "VersionHash",
    "VersionHashMismatch",
    "VersionNotFound",
    "WaitStep",
    "WorkTurn",
    "Worker",
    "WorkerId",
    "WorkerSettings",
    "WorkflowSpec",
    "WorkflowStepRef",
    "WorkspaceMode",
    "__version__",
    "answer",
    "check_admission",
    "check_append_batch",
    "check_read_window",
    "compute_cost",
    "dispatch",
    "hookimpl",
    "idempotency_key_for",
    "import_check",
    "interrupt",
    "load_price_table",
    "no_run_can_match",
    "open_blob_store",
    "open_store",
    "publish",
    "record_from_json",
    "record_to_json",
    "records",
    "reduce",
    "register_plugin",
    "report",
    "resolve_cost",
    "send",
    "session",
    "spec_hash",
    "state",
    "status",
    "stream",
    "stream_text",
    "thread",
    "validate",
]
