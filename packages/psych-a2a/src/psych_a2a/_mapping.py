"""Between the SDK's protobuf messages and what the model and the runtime see.

A skill becomes a tool definition taking one ``message`` (plus, to carry on a task
the peer left waiting for input, its ``task_id`` and ``context_id``). A task becomes
a JSON result: its state, the text of its artifacts (or of its last status message),
and each artifact's parts, text and data as they are, a file by its URL, raw bytes
base64-encoded up to a bound.
"""

import base64

from a2a.types import AgentSkill
from a2a.types import Artifact
from a2a.types import Message
from a2a.types import Part
from a2a.types import Task
from a2a.types import TaskState
from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
from pydantic import JsonValue

from psych_runtime.models import ToolDefinition

MAX_INLINE_BYTES = 64 * 1024
"""Raw file bytes larger than this are described, not inlined, in a tool result."""

SETTLED = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)
"""States a task never leaves."""

PAUSED = frozenset({TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED})
"""States where a task waits on the caller; following it further would wait forever."""

INPUT_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "message": {"type": "string", "description": "What to ask the agent, in full."},
        "task_id": {
            "type": "string",
            "description": "Only to answer a task of this agent that asked for more input.",
        },
        "context_id": {
            "type": "string",
            "description": "Only to carry on an earlier conversation with this agent.",
        },
    },
    "required": ["message"],
    "additionalProperties": False,
}


def state_name(state: int) -> str:
    """A task state as the A2A specification spells it (``input-required``)."""
    name = TaskState.Name(state) if state in TaskState.values() else "TASK_STATE_UNSPECIFIED"
    return name.removeprefix("TASK_STATE_").lower().replace("_", "-")


def skill_definition(name: str, agent: str, skill: AgentSkill) -> ToolDefinition:
    """The tool ``skill`` of the agent called ``agent`` is offered as, under ``name``."""
    lines = [f"Ask the agent {agent!r} ({skill.name or skill.id})."]
    if skill.description:
        lines.append(skill.description)
    if skill.examples:
        lines.append("For example: " + "; ".join(skill.examples[:3]))
    return ToolDefinition(name=name, description="\n".join(lines)[:4096], input_schema=INPUT_SCHEMA)


def part_json(part: Part) -> JsonValue:
    """One part of a message or an artifact as JSON."""
    kind = part.WhichOneof("content")
    described: dict[str, JsonValue] = {}
    if part.media_type:
        described["media_type"] = part.media_type
    if part.filename:
        described["filename"] = part.filename
    if kind == "text":
        return {"text": part.text, **described}
    if kind == "data":
        return {"data": MessageToDict(part.data), **described}
    if kind == "url":
        return {"url": part.url, **described}
    if kind == "raw":
        if len(part.raw) <= MAX_INLINE_BYTES:
            return {"base64": base64.b64encode(part.raw).decode(), **described}
        return {"bytes": len(part.raw), "omitted": "too large to include", **described}
    return described


def text_of(parts: "list[Part] | tuple[Part, ...]") -> str:
    """The text parts joined by newlines."""
    return "\n".join(part.text for part in parts if part.WhichOneof("content") == "text")


def artifact_json(artifact: Artifact) -> JsonValue:
    """An artifact as JSON: its name, description and parts."""
    return {
        "name": artifact.name,
        "description": artifact.description,
        "parts": [part_json(part) for part in artifact.parts],
    }


def task_result(task: Task) -> dict[str, JsonValue]:
    """What the model is handed for ``task``."""
    texts = [text_of(list(artifact.parts)) for artifact in task.artifacts]
    status_text = (
        text_of(list(task.status.message.parts)) if task.status.HasField("message") else ""
    )
    text = "\n".join(t for t in texts if t) or status_text
    result: dict[str, JsonValue] = {
        "state": state_name(task.status.state),
        "task_id": task.id,
        "context_id": task.context_id,
        "text": text,
        "artifacts": [artifact_json(artifact) for artifact in task.artifacts],
    }
    if status_text and status_text != text:
        result["status_message"] = status_text
    return result


def message_result(message: Message) -> dict[str, JsonValue]:
    """What the model is handed when the peer answered with a message and no task."""
    return {
        "state": "completed",
        "context_id": message.context_id,
        "text": text_of(list(message.parts)),
        "parts": [part_json(part) for part in message.parts],
    }


def merge_artifact(task: Task, artifact: Artifact, *, append: bool) -> None:
    """Add a streamed artifact (or a chunk of one) to ``task``."""
    for existing in task.artifacts:
        if existing.artifact_id == artifact.artifact_id:
            if append:
                existing.parts.extend(artifact.parts)
            else:
                existing.CopyFrom(artifact)
            return
    task.artifacts.append(artifact)


__all__ = [
    "INPUT_SCHEMA",
    "PAUSED",
    "SETTLED",
    "artifact_json",
    "merge_artifact",
    "message_result",
    "part_json",
    "skill_definition",
    "state_name",
    "task_result",
    "text_of",
]
