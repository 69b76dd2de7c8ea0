"""What the model may do with ``run_code``: where its program runs and what comes back.

Process isolation is the floor, so the weakest isolation level this module can even
express is a separate process; there is no value for running model code in the host
interpreter.
"""

from enum import StrEnum
from typing import Annotated
from typing import Literal
from typing import Self

from pydantic import Field
from pydantic import field_validator
from pydantic import model_validator

from psych_runtime.core.spec.base import SpecModel
from psych_runtime.core.spec.base import sorted_unique
from psych_runtime.core.spec.names import Name

_MIB = 1024 * 1024


class Isolation(StrEnum):
    """How far a model program is separated from the host."""

    ISOLATED = "isolated"
    """A separate, unprivileged process under resource limits (the minimum)."""
    CONTAINED = "contained"
    """A container, whose boundaries the kernel enforces."""


class NetworkAccess(StrEnum):
    """Whether a model program may reach the network itself."""

    DENIED = "denied"
    ALLOWED = "allowed"


class WorkspaceMode(StrEnum):
    """How long files written by a program survive."""

    EPHEMERAL = "ephemeral"
    """A fresh directory for every execution."""
    RUN = "run"
    """One directory kept for the life of the Run, shared by its executions."""


class OutputPreservation(StrEnum):
    """What happens to output beyond the preview the model sees."""

    NEVER = "never"
    """Only the preview is kept."""
    WHEN_AVAILABLE = "when_available"
    """Full output is kept when a blob store is configured."""
    REQUIRED = "required"
    """Full output must be kept; an execution fails without a blob store."""


class ArtifactCollection(StrEnum):
    """Whether files a program leaves behind are returned."""

    COLLECT = "collect"
    IGNORE = "ignore"


class CodeExecutionLimits(SpecModel):
    """Resource caps for one execution; None means the sandbox profile's default.

    Attributes:
        cpu_seconds: CPU time consumed.
        wall_seconds: real time from start to teardown.
        memory_bytes: address space.
        file_size_bytes: the largest single file written.
        process_count: processes (and threads) at once.
        disk_bytes: bytes the workspace may hold in all, across files.
    """

    cpu_seconds: Annotated[float | None, Field(gt=0)] = None
    wall_seconds: Annotated[float | None, Field(gt=0)] = None
    memory_bytes: Annotated[int | None, Field(gt=0)] = None
    file_size_bytes: Annotated[int | None, Field(gt=0)] = None
    process_count: Annotated[int | None, Field(gt=0)] = None
    disk_bytes: Annotated[int | None, Field(gt=0)] = None


class OutputPolicy(SpecModel):
    """How much of a program's output is shown and how much is kept.

    Attributes:
        preview_bytes: shown to the model.
        max_bytes: captured in total; at most 256 MiB.
        preserve: what happens to output beyond the preview.
    """

    preview_bytes: Annotated[int, Field(ge=256, le=65_536)] = 4_000
    max_bytes: Annotated[int, Field(ge=4_096, le=256 * _MIB)] = 8 * _MIB
    preserve: OutputPreservation = OutputPreservation.WHEN_AVAILABLE

    @model_validator(mode="after")
    def _preview_fits(self) -> Self:
        if self.preview_bytes > self.max_bytes:
            raise ValueError("preview_bytes may not exceed max_bytes")
        return self


class ArtifactPolicy(SpecModel):
    """Which files written by a program come back, and how many.

    Attributes:
        collection: collect them or ignore them.
        max_count: files returned per execution.
        max_total_bytes: bytes returned per execution, across files.
    """

    collection: ArtifactCollection = ArtifactCollection.COLLECT
    max_count: Annotated[int, Field(ge=0, le=1_024)] = 16
    max_total_bytes: Annotated[int, Field(ge=0, le=1_024 * _MIB)] = 16 * _MIB


class CodeExecution(SpecModel):
    """Lets the model write a program that runs in a sandbox and calls tools back.

    Attributes:
        enabled: whether ``run_code`` is offered at all.
        profile: the sandbox profile the host maps to a concrete backend.
        isolation: the least isolation the profile must provide.
        network: whether the program may reach the network.
        limits: resource caps.
        bindings: the tools a program may call back; None leaves it every tool the
            model could call in that turn, while a tuple restricts it to the names listed.
        workspace: how long written files survive.
        output: preview and capture sizes.
        artifacts: which written files come back.
        language: the program's language.
    """

    enabled: bool = True
    profile: Name = "default"
    isolation: Isolation = Isolation.ISOLATED
    network: NetworkAccess = NetworkAccess.DENIED
    limits: CodeExecutionLimits = CodeExecutionLimits()
    bindings: tuple[Annotated[str, Field(min_length=1, max_length=256)], ...] | None = None
    workspace: WorkspaceMode = WorkspaceMode.EPHEMERAL
    output: OutputPolicy = OutputPolicy()
    artifacts: ArtifactPolicy = ArtifactPolicy()
    language: Literal["python"] = "python"

    @field_validator("bindings")
    @classmethod
    def _bindings_as_set(cls, bindings: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return None if bindings is None else sorted_unique(bindings, "binding")


__all__ = [
    "ArtifactCollection",
    "ArtifactPolicy",
    "CodeExecution",
    "CodeExecutionLimits",
    "Isolation",
    "NetworkAccess",
    "OutputPolicy",
    "OutputPreservation",
    "WorkspaceMode",
]
