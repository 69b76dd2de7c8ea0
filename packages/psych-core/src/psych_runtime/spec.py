"""The Spec models: what an agent or a workflow is, as data that publishes into a Version."""

from psych_runtime.core.spec import A2APeer as A2APeer
from psych_runtime.core.spec import AgentSpec as AgentSpec
from psych_runtime.core.spec import AgentStep as AgentStep
from psych_runtime.core.spec import ArtifactCollection as ArtifactCollection
from psych_runtime.core.spec import ArtifactPolicy as ArtifactPolicy
from psych_runtime.core.spec import BranchCase as BranchCase
from psych_runtime.core.spec import BranchStep as BranchStep
from psych_runtime.core.spec import CodeExecution as CodeExecution
from psych_runtime.core.spec import CodeExecutionLimits as CodeExecutionLimits
from psych_runtime.core.spec import CodeTool as CodeTool
from psych_runtime.core.spec import CompactionPolicy as CompactionPolicy
from psych_runtime.core.spec import Condition as Condition
from psych_runtime.core.spec import ForeachStep as ForeachStep
from psych_runtime.core.spec import HttpTool as HttpTool
from psych_runtime.core.spec import HumanStep as HumanStep
from psych_runtime.core.spec import Isolation as Isolation
from psych_runtime.core.spec import Limits as Limits
from psych_runtime.core.spec import LiteralValue as LiteralValue
from psych_runtime.core.spec import LiveObjectInSpec as LiveObjectInSpec
from psych_runtime.core.spec import LoopStep as LoopStep
from psych_runtime.core.spec import MapStep as MapStep
from psych_runtime.core.spec import McpEnv as McpEnv
from psych_runtime.core.spec import McpOAuth as McpOAuth
from psych_runtime.core.spec import McpServer as McpServer
from psych_runtime.core.spec import ModelRef as ModelRef
from psych_runtime.core.spec import NamedToolChoice as NamedToolChoice
from psych_runtime.core.spec import NetworkAccess as NetworkAccess
from psych_runtime.core.spec import OutputPolicy as OutputPolicy
from psych_runtime.core.spec import OutputPreservation as OutputPreservation
from psych_runtime.core.spec import ParallelStep as ParallelStep
from psych_runtime.core.spec import RetryPolicy as RetryPolicy
from psych_runtime.core.spec import SetStateStep as SetStateStep
from psych_runtime.core.spec import Skill as Skill
from psych_runtime.core.spec import SleepStep as SleepStep
from psych_runtime.core.spec import SpawnEnvelope as SpawnEnvelope
from psych_runtime.core.spec import SpawnRequest as SpawnRequest
from psych_runtime.core.spec import Spec as Spec
from psych_runtime.core.spec import SubagentRef as SubagentRef
from psych_runtime.core.spec import SuspensionPolicy as SuspensionPolicy
from psych_runtime.core.spec import ToolChoice as ToolChoice
from psych_runtime.core.spec import ToolStep as ToolStep
from psych_runtime.core.spec import ValuePath as ValuePath
from psych_runtime.core.spec import WaitStep as WaitStep
from psych_runtime.core.spec import WorkflowSpec as WorkflowSpec
from psych_runtime.core.spec import WorkflowStepRef as WorkflowStepRef
from psych_runtime.core.spec import WorkspaceMode as WorkspaceMode
from psych_runtime.core.spec.builders import AgentBuilder as AgentBuilder
from psych_runtime.core.spec.builders import WorkflowBuilder as WorkflowBuilder
from psych_runtime.core.validation import SpecValidationError as SpecValidationError
from psych_runtime.core.validation import ValidationContext as ValidationContext
from psych_runtime.core.validation import ValidationIssue as ValidationIssue
from psych_runtime.core.validation import validate as validate
from psych_runtime.core.version import Version as Version
from psych_runtime.core.version import VersionHashMismatch as VersionHashMismatch
from psych_runtime.core.version import spec_hash as spec_hash

# Each name above is imported ``as`` itself, the explicit re-export type checkers
# honour; the list of public names is that list of imports.
__all__ = sorted(name for name in globals() if not name.startswith("_"))
