"""The Spec models: what an agent or a workflow is, as data that publishes into a Version."""

from psych_runtime.core.spec import (
    A2APeer as A2APeer,
    AgentSpec as AgentSpec,
    AgentStep as AgentStep,
    ArtifactCollection as ArtifactCollection,
    ArtifactPolicy as ArtifactPolicy,
    BranchCase as BranchCase,
    BranchStep as BranchStep,
    CodeExecution as CodeExecution,
    CodeExecutionLimits as CodeExecutionLimits,
    CodeTool as CodeTool,
    CompactionPolicy as CompactionPolicy,
    Condition as Condition,
    ForeachStep as ForeachStep,
    HttpTool as HttpTool,
    HumanStep as HumanStep,
    Isolation as Isolation,
    Limits as Limits,
    LiteralValue as LiteralValue,
    LiveObjectInSpec as LiveObjectInSpec,
    LoopStep as LoopStep,
    MapStep as MapStep,
    McpEnv as McpEnv,
    McpOAuth as McpOAuth,
    McpServer as McpServer,
    ModelRef as ModelRef,
    NamedToolChoice as NamedToolChoice,
    NetworkAccess as NetworkAccess,
    OutputPolicy as OutputPolicy,
    OutputPreservation as OutputPreservation,
    ParallelStep as ParallelStep,
    RetryPolicy as RetryPolicy,
    SetStateStep as SetStateStep,
    Skill as Skill,
    SleepStep as SleepStep,
    SpawnEnvelope as SpawnEnvelope,
    SpawnRequest as SpawnRequest,
    Spec as Spec,
    SubagentRef as SubagentRef,
    SuspensionPolicy as SuspensionPolicy,
    ToolChoice as ToolChoice,
    ToolStep as ToolStep,
    ValuePath as ValuePath,
    WaitStep as WaitStep,
    WorkflowSpec as WorkflowSpec,
    WorkflowStepRef as WorkflowStepRef,
    WorkspaceMode as WorkspaceMode,
)
from psych_runtime.core.spec.builders import (
    AgentBuilder as AgentBuilder,
    WorkflowBuilder as WorkflowBuilder,
)
from psych_runtime.core.validation import (
    SpecValidationError as SpecValidationError,
    ValidationContext as ValidationContext,
    ValidationIssue as ValidationIssue,
    validate as validate,
)
from psych_runtime.core.version import (
    Version as Version,
    VersionHashMismatch as VersionHashMismatch,
    spec_hash as spec_hash,
)

# Each name above is imported ``as`` itself, the explicit re-export type checkers
# honour; the list of public names is that list of imports.
__all__ = sorted(name for name in globals() if not name.startswith("_"))
