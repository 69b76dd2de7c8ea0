"""Spec models: agents and workflows described as data, ready to be hashed.

A Spec is what a consumer writes and publishes. It names tools, servers and models
and never holds code, so it can be serialised, stored, compared and hashed into a
Version. Every model here is frozen and refuses unknown keys.

Example:
    >>> from psych_runtime.core.spec import AgentSpec, ModelRef, SPEC_ADAPTER
    >>> spec = AgentSpec(name="support", model=ModelRef(model="gpt-4o"))
    >>> SPEC_ADAPTER.validate_python(spec.model_dump()) == spec
    True
"""

from typing import Annotated

from pydantic import Field
from pydantic import TypeAdapter

from psych_runtime.core.spec.agent import AgentSpec
from psych_runtime.core.spec.agent import Skill
from psych_runtime.core.spec.agent import SpawnEnvelope
from psych_runtime.core.spec.agent import SpawnRequest
from psych_runtime.core.spec.agent import SubagentRef
from psych_runtime.core.spec.base import LiveObjectInSpec
from psych_runtime.core.spec.base import SpecModel
from psych_runtime.core.spec.code_execution import ArtifactCollection
from psych_runtime.core.spec.code_execution import ArtifactPolicy
from psych_runtime.core.spec.code_execution import CodeExecution
from psych_runtime.core.spec.code_execution import CodeExecutionLimits
from psych_runtime.core.spec.code_execution import Isolation
from psych_runtime.core.spec.code_execution import NetworkAccess
from psych_runtime.core.spec.code_execution import OutputPolicy
from psych_runtime.core.spec.code_execution import OutputPreservation
from psych_runtime.core.spec.code_execution import WorkspaceMode
from psych_runtime.core.spec.connections import A2APeer
from psych_runtime.core.spec.connections import McpEnv
from psych_runtime.core.spec.connections import McpOAuth
from psych_runtime.core.spec.connections import McpServer
from psych_runtime.core.spec.limits import CompactionPolicy
from psych_runtime.core.spec.limits import Limits
from psych_runtime.core.spec.limits import SuspensionPolicy
from psych_runtime.core.spec.models import ModelRef
from psych_runtime.core.spec.models import NamedToolChoice
from psych_runtime.core.spec.models import ToolChoice
from psych_runtime.core.spec.names import BINDABLE_BUILTINS
from psych_runtime.core.spec.names import NAME_PATTERN
from psych_runtime.core.spec.names import RESERVED_TOOL_NAMES
from psych_runtime.core.spec.names import TOOL_NAME_PATTERN
from psych_runtime.core.spec.names import normalise_newlines
from psych_runtime.core.spec.tools import CodeTool
from psych_runtime.core.spec.tools import HttpTool
from psych_runtime.core.spec.tools import StaticTool
from psych_runtime.core.spec.workflow import STEP_KINDS
from psych_runtime.core.spec.workflow import AgentStep
from psych_runtime.core.spec.workflow import BranchCase
from psych_runtime.core.spec.workflow import BranchStep
from psych_runtime.core.spec.workflow import Condition
from psych_runtime.core.spec.workflow import ConditionOp
from psych_runtime.core.spec.workflow import ForeachStep
from psych_runtime.core.spec.workflow import HumanStep
from psych_runtime.core.spec.workflow import LiteralValue
from psych_runtime.core.spec.workflow import LoopStep
from psych_runtime.core.spec.workflow import MapStep
from psych_runtime.core.spec.workflow import ParallelStep
from psych_runtime.core.spec.workflow import RetryPolicy
from psych_runtime.core.spec.workflow import SetStateStep
from psych_runtime.core.spec.workflow import SleepStep
from psych_runtime.core.spec.workflow import Step
from psych_runtime.core.spec.workflow import StepBase
from psych_runtime.core.spec.workflow import ToolStep
from psych_runtime.core.spec.workflow import ValuePath
from psych_runtime.core.spec.workflow import ValueRef
from psych_runtime.core.spec.workflow import WaitStep
from psych_runtime.core.spec.workflow import WorkflowSpec
from psych_runtime.core.spec.workflow import WorkflowStepRef
from psych_runtime.core.spec.workflow import derive_step_id
from psych_runtime.core.spec.workflow import walk_steps

Spec = Annotated[AgentSpec | WorkflowSpec, Field(discriminator="kind")]
"""An agent or a workflow, told apart by ``kind``."""

SPEC_ADAPTER: TypeAdapter[AgentSpec | WorkflowSpec] = TypeAdapter(Spec)
"""Validates a plain dict (or a model) into whichever Spec its ``kind`` names."""

__all__ = [
    "BINDABLE_BUILTINS",
    "NAME_PATTERN",
    "RESERVED_TOOL_NAMES",
    "SPEC_ADAPTER",
    "STEP_KINDS",
    "TOOL_NAME_PATTERN",
    "A2APeer",
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
    "ConditionOp",
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
    "SpecModel",
    "StaticTool",
    "Step",
    "StepBase",
    "SubagentRef",
    "SuspensionPolicy",
    "ToolChoice",
    "ToolStep",
    "ValuePath",
    "ValueRef",
    "WaitStep",
    "WorkflowSpec",
    "WorkflowStepRef",
    "WorkspaceMode",
    "derive_step_id",
    "normalise_newlines",
    "walk_steps",
]
