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

from pydantic import Field, TypeAdapter

from psych_runtime.core.spec.agent import (
    AgentSpec,
    Skill,
    SpawnEnvelope,
    SpawnRequest,
    SubagentRef,
)
from psych_runtime.core.spec.base import LiveObjectInSpec, SpecModel
from psych_runtime.core.spec.code_execution import (
    ArtifactCollection,
    ArtifactPolicy,
    CodeExecution,
    CodeExecutionLimits,
    Isolation,
    NetworkAccess,
    OutputPolicy,
    OutputPreservation,
    WorkspaceMode,
)
from psych_runtime.core.spec.connections import A2APeer, McpEnv, McpOAuth, McpServer
from psych_runtime.core.spec.limits import CompactionPolicy, Limits, SuspensionPolicy
from psych_runtime.core.spec.models import ModelRef, NamedToolChoice, ToolChoice
from psych_runtime.core.spec.names import (
    BINDABLE_BUILTINS,
    NAME_PATTERN,
    RESERVED_TOOL_NAMES,
    TOOL_NAME_PATTERN,
    normalise_newlines,
)
from psych_runtime.core.spec.tools import CodeTool, HttpTool, StaticTool
from psych_runtime.core.spec.workflow import (
    STEP_KINDS,
    AgentStep,
    BranchCase,
    BranchStep,
    Condition,
    ConditionOp,
    ForeachStep,
    HumanStep,
    LiteralValue,
    LoopStep,
    MapStep,
    ParallelStep,
    RetryPolicy,
    SetStateStep,
    SleepStep,
    Step,
    StepBase,
    ToolStep,
    ValuePath,
    ValueRef,
    WaitStep,
    WorkflowSpec,
    WorkflowStepRef,
    derive_step_id,
    walk_steps,
)

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
