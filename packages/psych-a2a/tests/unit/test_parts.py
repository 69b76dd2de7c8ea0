"""Naming, narrowing, mapping results, card locations, arguments and the pool, offline."""

import asyncio
import base64
from dataclasses import dataclass

import pytest
from a2a.types import AgentSkill
from a2a.types import Artifact
from a2a.types import Message
from a2a.types import Part
from a2a.types import Task
from a2a.types import TaskState
from a2a.types import TaskStatus
from google.protobuf.struct_pb2 import Value

from psych_a2a import A2ATools
from psych_a2a._mapping import MAX_INLINE_BYTES
from psych_a2a._mapping import merge_artifact
from psych_a2a._mapping import message_result
from psych_a2a._mapping import part_json
from psych_a2a._mapping import skill_definition
from psych_a2a._mapping import state_name
from psych_a2a._mapping import task_result
from psych_a2a.tools import card_url
from psych_runtime import Scope
from psych_runtime import ToolContext
from psych_runtime.adapters import ConnectionPool
from psych_runtime.adapters import SourceCallFailed
from psych_runtime.adapters import SourceTool
from psych_runtime.adapters import ToolSourceUnavailable
from psych_runtime.adapters import admitted
from psych_runtime.adapters import offerable
from psych_runtime.adapters import qualified
from psych_runtime.models import ToolDefinition
from psych_runtime.spec import A2APeer
from psych_runtime.spec import AgentSpec


def test_skills_are_qualified_and_narrowed_by_allow_and_the_tenant_plane() -> None:
    peer = A2APeer(name="billing", url="https://b.example.com", allow=("refund*", "lookup"))
    assert qualified("billing", "refund") == "billing__refund"
    assert admitted(peer, "refund_full", None)
    assert admitted(peer, "lookup", None)
    assert not admitted(peer, "lookup_all", None)
    assert not admitted(peer, "delete", None)
    assert admitted(peer, "lookup", ("billing__*",))
    assert not admitted(peer, "lookup", ("other__*",))
    assert admitted(A2APeer(name="b", url="https://b.example.com"), "anything", None)
    assert offerable("billing__refund")
    assert not offerable("billing__has.dot")
    assert not offerable("b__" + "x" * 70)


def test_card_locations() -> None:
    assert card_url("https://a.example.com") == "https://a.example.com/.well-known/agent-card.json"
    assert card_url("https://a.example.com/x/") == (
        "https://a.example.com/x/.well-known/agent-card.json"
    )
    assert card_url("https://a.example.com/cards/billing.json") == (
        "https://a.example.com/cards/billing.json"
    )


def test_parts_and_states_as_json() -> None:
    assert part_json(Part(text="hi", media_type="text/plain")) == {
        "text": "hi",
        "media_type": "text/plain",
    }
    assert part_json(Part(url="https://x/f.pdf", filename="f.pdf")) == {
        "url": "https://x/f.pdf",
        "filename": "f.pdf",
    }
    assert part_json(Part(data=Value(number_value=3))) == {"data": 3}
    assert part_json(Part(raw=b"abc")) == {"base64": base64.b64encode(b"abc").decode()}
    big = part_json(Part(raw=b"x" * (MAX_INLINE_BYTES + 1)))
    assert isinstance(big, dict) and big["bytes"] == MAX_INLINE_BYTES + 1 and "base64" not in big
    assert state_name(TaskState.TASK_STATE_INPUT_REQUIRED) == "input-required"
    assert state_name(TaskState.TASK_STATE_COMPLETED) == "completed"


def test_a_task_without_artifacts_reports_its_status_message() -> None:
    task = Task(
        id="t1",
        context_id="c1",
        status=TaskStatus(
            state=TaskState.TASK_STATE_INPUT_REQUIRED,
            message=Message(message_id="m", parts=[Part(text="Which one?")]),
        ),
    )
    assert task_result(task) == {
        "state": "input-required",
        "task_id": "t1",
        "context_id": "c1",
        "text": "Which one?",
        "artifacts": [],
    }
    merge_artifact(task, Artifact(artifact_id="a", parts=[Part(text="one")]), append=False)
    merge_artifact(task, Artifact(artifact_id="a", parts=[Part(text="two")]), append=True)
    result = task_result(task)
    assert result["text"] == "one\ntwo"
    assert result["status_message"] == "Which one?"
    assert message_result(Message(context_id="c", parts=[Part(text="direct")]))["text"] == "direct"


def test_a_skill_is_described_with_its_examples() -> None:
    skill = AgentSkill(id="refund", name="Refunds", description="Refunds orders.", examples=["x"])
    definition = skill_definition("billing__refund", "billing", skill)
    assert isinstance(definition, ToolDefinition)
    assert "Refunds orders." in definition.description
    assert "For example: x" in definition.description


def _tool() -> tuple[AgentSpec, SourceTool]:
    spec = AgentSpec(
        name="a", model="fake", a2a_peers=(A2APeer(name="p", url="https://p.example.com"),)
    )
    tool = SourceTool(ToolDefinition(name="p__s"), "p", "s")
    return spec, tool


@pytest.mark.parametrize(
    "arguments",
    [{}, {"message": ""}, {"message": 3}, {"message": "x", "task_id": 4}, {"message": "x", "y": 1}],
)
async def test_bad_arguments_are_refused_before_anything_is_sent(
    arguments: dict[str, object],
) -> None:
    spec, tool = _tool()
    context = ToolContext.for_call(run_id="r", call_id="c", scope=Scope(tenant="t"), attempt_id="a")
    with pytest.raises(SourceCallFailed) as refused:
        await A2ATools().call(spec, tool, arguments, context, permitted=None)  # type: ignore[arg-type]
    assert refused.value.kind == "invalid_arguments"


async def test_a_missing_credential_is_reported_without_a_request() -> None:
    spec = AgentSpec(
        name="a",
        model="fake",
        a2a_peers=(A2APeer(name="p", url="https://p.example.com", credential="tok"),),
    )
    with pytest.raises(ToolSourceUnavailable) as missing:
        await A2ATools().resolve(spec, Scope(tenant="t"), permitted=None)
    assert "no secret 'tok'" in str(missing.value)
    assert not missing.value.transient


@pytest.mark.parametrize(
    "options",
    [{"card_ttl_seconds": -1}, {"timeout_seconds": 0}, {"poll_seconds": 0}, {"max_connections": 0}],
)
def test_limits_are_checked(options: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        A2ATools(**options)  # type: ignore[arg-type]


@dataclass
class _Conn:
    name: str
    closed: bool = False
    broken: bool = False

    async def close(self) -> None:
        self.closed = True


async def test_the_pool_is_bounded_expires_idle_connections_and_drops_broken_ones() -> None:
    now = [0.0]
    pool: ConnectionPool[str, _Conn] = ConnectionPool(
        max_connections=2, idle_seconds=10, clock=lambda: now[0]
    )
    opened: list[_Conn] = []

    async def opener_for(name: str) -> _Conn:
        conn = _Conn(name)
        opened.append(conn)
        return conn

    for name in ("a", "b", "a", "c"):
        async with pool.lease(name, lambda n=name: opener_for(n)):  # type: ignore[misc]
            pass
    assert pool.keys() == ("a", "c")  # b was least recently used
    await asyncio.sleep(0)
    assert [c.name for c in opened if c.closed] == ["b"]
    now[0] = 100.0
    async with pool.lease("d", lambda: opener_for("d")) as d:
        assert pool.keys() == ("d",)  # a and c idled out
        d.broken = True
    async with pool.lease("d", lambda: opener_for("d2")) as d2:
        assert d2.name == "d2"
    await pool.close()
    assert all(c.closed for c in opened)


async def test_concurrent_leases_share_one_opening() -> None:
    pool: ConnectionPool[str, _Conn] = ConnectionPool()
    count = 0

    async def opener() -> _Conn:
        nonlocal count
        count += 1
        await asyncio.sleep(0.01)
        return _Conn("x")

    async def use() -> None:
        async with pool.lease("k", opener):
            pass

    await asyncio.gather(*(use() for _ in range(5)))
    assert count == 1
    await pool.close()
