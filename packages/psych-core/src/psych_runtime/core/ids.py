"""Identifier types.

Identifiers are plain strings at runtime; the distinct types exist so that mypy stops a
call id from being passed where a run id belongs. Minting new ids needs randomness, so
it lives outside the core (see ``psych_runtime.runtime.ids``).
"""

from typing import NewType

RunId = NewType("RunId", str)
AttemptId = NewType("AttemptId", str)
WorkerId = NewType("WorkerId", str)
ToolCallId = NewType("ToolCallId", str)
StepId = NewType("StepId", str)
EntryId = NewType("EntryId", str)
VersionHash = NewType("VersionHash", str)

__all__ = [
    "AttemptId",
    "EntryId",
    "RunId",
    "StepId",
    "ToolCallId",
    "VersionHash",
    "WorkerId",
]
