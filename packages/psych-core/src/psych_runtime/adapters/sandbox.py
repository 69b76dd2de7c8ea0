"""The Sandbox port, for whoever writes a sandbox backend.

The protocol, what a program asks for (``Program``, ``ResolvedLimits``), what a backend
returns (``Execution``), the guarantees a backend claims, and the reference API's types.
"""

from psych_runtime.sandbox.port import (
    Artifact as Artifact,
    Binding as Binding,
    BindingRefused as BindingRefused,
    Execution as Execution,
    ExecutionStatus as ExecutionStatus,
    Guarantee as Guarantee,
    HostBinding as HostBinding,
    InvalidSandboxValue as InvalidSandboxValue,
    Program as Program,
    ResolvedLimits as ResolvedLimits,
    Sandbox as Sandbox,
    SandboxCapabilities as SandboxCapabilities,
    SandboxFailure as SandboxFailure,
    SandboxLimit as SandboxLimit,
    SandboxLimits as SandboxLimits,
    SandboxResult as SandboxResult,
)

__all__ = [
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
]
