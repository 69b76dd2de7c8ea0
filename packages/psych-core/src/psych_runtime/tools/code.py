"""``run_code`` as the model sees it, and the limits and bindings a program gets.

Pure: the definition, which tools a program may call back this turn, and how the
Spec's limits are cut to the deployment's. Running a program is
``runtime/agent/code.py``'s job.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field

from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.spec.code_execution import CodeExecution
from psych_runtime.core.spec.names import BINDABLE_BUILTINS
from psych_runtime.core.spec.names import RESERVED_TOOL_NAMES
from psych_runtime.sandbox.port import ResolvedLimits
from psych_runtime.sandbox.port import Sandbox

RUN_CODE = "run_code"

DEFAULT_HARD_LIMITS = ResolvedLimits(
    cpu_seconds=30.0,
    wall_seconds=120.0,
    memory_bytes=1024 * 1024 * 1024,
    file_size_bytes=256 * 1024 * 1024,
    process_count=64,
    disk_bytes=1024 * 1024 * 1024,
)
"""The most any Spec may ask of a deployment that sets no hard limits of its own."""


@dataclass(frozen=True, slots=True)
class CodeSandboxes:
    """The sandboxes a process runs programs in, and the limits no Spec may exceed.

    Attributes:
        profiles: sandbox by profile name (``default`` serves Specs that name none).
        hard_limits: the ceiling on every limit a Spec asks for.
    """

    profiles: Mapping[str, Sandbox] = field(default_factory=dict)
    hard_limits: ResolvedLimits = DEFAULT_HARD_LIMITS


def run_code_definition(execution: CodeExecution, bindings: tuple[str, ...]) -> ToolDefinition:
    """``run_code``: one argument, the program, and the tools it may call."""
    listed = ", ".join(f"tools.{name}(...)" for name in bindings) or "none"
    return ToolDefinition(
        name=RUN_CODE,
        description=(
            "Run a Python program in a fresh, isolated process and get back what it "
            "computed. Its value is the global `result` if it sets one, else its last "
            "expression. It can call these host tools with keyword arguments: "
            f"{listed}; `tools.call(name, **arguments)` works for any of them. "
            "Nothing carries over from one program to the next. "
            + ("It has no network access." if execution.network.value == "denied" else "")
        ),
        input_schema={
            "type": "object",
            "properties": {"code": {"type": "string", "minLength": 1}},
            "required": ["code"],
            "additionalProperties": False,
        },
    )


def program_bindings(execution: CodeExecution, offered: frozenset[str]) -> tuple[str, ...]:
    """The tools a program may call this turn: the Spec's list (or all) within the turn's.

    A program may not start another program, ask a question or delegate: only
    ordinary tools and the bindable built-ins are ever bound.
    """
    candidates = [
        name
        for name in sorted(offered)
        if name != RUN_CODE and (name in BINDABLE_BUILTINS or name not in RESERVED_TOOL_NAMES)
    ]
    if execution.bindings is not None:
        allowed = set(execution.bindings)
        candidates = [name for name in candidates if name in allowed]
    return tuple(candidates)


def resolve_limits(execution: CodeExecution, hard: ResolvedLimits) -> ResolvedLimits:
    """The Spec's limits, each cut to the deployment's ceiling (its default when unset)."""
    asked = execution.limits

    def pick[T: (int, float)](value: T | None, ceiling: T) -> T:
        return ceiling if value is None else min(value, ceiling)

    return ResolvedLimits(
        cpu_seconds=pick(asked.cpu_seconds, hard.cpu_seconds),
        wall_seconds=pick(asked.wall_seconds, hard.wall_seconds),
        memory_bytes=pick(asked.memory_bytes, hard.memory_bytes),
        file_size_bytes=pick(asked.file_size_bytes, hard.file_size_bytes),
        process_count=pick(asked.process_count, hard.process_count),
        disk_bytes=pick(asked.disk_bytes, hard.disk_bytes),
    )


__all__ = [
    "DEFAULT_HARD_LIMITS",
    "RUN_CODE",
    "CodeSandboxes",
    "program_bindings",
    "resolve_limits",
    "run_code_definition",
]
