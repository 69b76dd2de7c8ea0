"""``gate.py``: judging a call, suspending on it, and acting on a person's decision."""

from typing import Any

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import Suspended
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.scope import Scope
from psych_runtime.runtime.agent.gate import approved_now
from psych_runtime.runtime.agent.gate import denied
from psych_runtime.runtime.agent.gate import judge_call
from psych_runtime.runtime.agent.gate import suspend_for_approval
from psych_runtime.runtime.agent.remote import refresh_remote
from psych_runtime.spec import McpServer
from psych_runtime.testing import LogBuilder
from psych_runtime.tools.approval import ApprovalRules
from psych_runtime.tools.approval import Decision
from psych_runtime.tools.approval import Verdict
from psych_runtime.tools.deferred import CALL_TOOL

from ....e2e.test_tool_sources import ServerRoom
from .conftest import Attempt
from .conftest import Orders
from .conftest import agent
from .conftest import open_attempt
from .conftest import started
from .conftest import tool_turn

C1 = ToolCallId("c1")


def _waiting(tool: str = "refund") -> LogBuilder:
    """A Run suspended for a person's approval of call ``c1``."""
    log = tool_turn(started(), "c1").tool_started("c1", tool=tool)
    return log.suspended(SuspendReason.APPROVAL, pending_call_id="c1")


# --- approved_now --------------------------------------------------------------------


async def test_no_decision_yet_is_none() -> None:
    attempt = await open_attempt(_waiting().attempt())
    assert approved_now(attempt.ctx, C1) is None


async def test_an_approval_is_acted_on_by_the_first_attempt_after_it() -> None:
    attempt = await open_attempt(_waiting().resumed(approved=True).attempt())
    assert approved_now(attempt.ctx, C1) is True


async def test_an_approval_an_earlier_attempt_may_have_acted_on_is_no_longer_a_go() -> None:
    # Attempt 2 took the approval and vanished: the call may have run, so attempt 3
    # treats it as any call in doubt.
    log = _waiting().resumed(approved=True).attempt().attempt()
    attempt = await open_attempt(log)
    assert approved_now(attempt.ctx, C1) is None


async def test_a_denial_always_stands() -> None:
    log = _waiting().resumed(approved=False).attempt().attempt()
    attempt = await open_attempt(log)
    assert approved_now(attempt.ctx, C1) is False


async def test_a_decision_for_another_call_says_nothing_of_this_one() -> None:
    attempt = await open_attempt(_waiting().resumed(approved=True).attempt())
    assert approved_now(attempt.ctx, ToolCallId("c2")) is None


# --- denied --------------------------------------------------------------------------


async def test_a_denial_closes_the_call_saying_who_and_why() -> None:
    log = _waiting().resumed(approved=False, payload={"reason": "  too costly \n"}).attempt()
    attempt = await open_attempt(log)
    denied(attempt.ctx, C1)
    finished = attempt.finish("c1")
    assert finished.outcome is ToolOutcome.ERROR
    assert finished.failure is not None and finished.failure.kind == "denied"
    assert finished.failure.message == "a person denied this call: too costly"


async def test_a_denial_without_a_reason_says_only_that() -> None:
    for payload in ({}, {"reason": "   "}, {"reason": 42}):
        log = _waiting().resumed(approved=False, payload=payload).attempt()
        attempt = await open_attempt(log)
        denied(attempt.ctx, C1)
        assert attempt.failure("c1").message == "a person denied this call", payload


# --- judge_call ----------------------------------------------------------------------


class Verdicts:
    """A Policy answering one Decision for every call, keeping what it was asked."""

    def __init__(self, decision: Decision) -> None:
        self.decision = decision
        self.asked: list[tuple[str, str, JsonObject]] = []

    def allow_tool(self, scope: Scope, tool: str, arguments: JsonObject) -> Decision:
        self.asked.append((scope.tenant, tool, arguments))
        return self.decision


async def _judging(**deps: Any) -> Attempt:
    """Call ``c1`` of ``refund`` started; the Spec grants ``lookup`` and ``refund``."""
    log = tool_turn(started(), "c1").tool_started("c1", tool="refund")
    spec = agent(tools=("lookup", "refund"))
    return await open_attempt(log, spec=spec, registry=Orders().registry, **deps)


async def test_a_call_nothing_objects_to_runs_and_nothing_is_staged() -> None:
    attempt = await _judging()
    judgement = await judge_call(attempt.ctx, C1, "refund", {"order_id": "A1"})
    assert judgement.verdict is Verdict.RUN
    assert attempt.new() == []


async def test_a_policy_denial_refuses_the_call_as_data_for_the_model() -> None:
    policy = Verdicts(Decision.deny("refunds are closed today"))
    attempt = await _judging(policy=policy)
    judgement = await judge_call(attempt.ctx, C1, "refund", {"order_id": "A1"})
    assert judgement.verdict is Verdict.DENY
    failure = attempt.failure("c1")
    assert (failure.kind, failure.message) == ("access_denied", "refunds are closed today")
    assert policy.asked == [("acme", "refund", {"order_id": "A1"})]


async def test_a_rule_on_the_tools_class_makes_the_call_wait_and_stages_nothing() -> None:
    attempt = await _judging(approvals=ApprovalRules(selectors=("@write",)))
    refund = await judge_call(attempt.ctx, C1, "refund", {"order_id": "A1"})
    lookup = await judge_call(attempt.ctx, C1, "lookup", {"order_id": "A1"})
    assert (refund.verdict, lookup.verdict) == (Verdict.ASK, Verdict.RUN)
    assert attempt.new() == []  # the suspension is the caller's to stage


async def test_a_policy_asking_for_a_person_passes_its_reason_on() -> None:
    attempt = await _judging(policy=Verdicts(Decision.ask("over the limit")))
    judgement = await judge_call(attempt.ctx, C1, "lookup", {"order_id": "A1"})
    assert (judgement.verdict, judgement.reason) == (Verdict.ASK, "over the limit")


async def _deferring(policy: Verdicts, **deps: Any) -> Attempt:
    """A Spec whose one MCP server's tools are all deferred behind ``call_tool``."""
    room = ServerRoom({"files": {"read": ("read-only",), "wipe": ("destructive",)}})
    server = McpServer(name="files", url="https://files.example/mcp", preload=False)
    log = tool_turn(started(), "c1").tool_started("c1", tool=CALL_TOOL)
    attempt = await open_attempt(
        log, spec=agent(mcp_servers=(server,)), sources=(room,), policy=policy, **deps
    )
    assert await refresh_remote(attempt.ctx, None) is None
    assert set(attempt.ctx.tools.deferred) == {"files__read", "files__wipe"}
    return attempt


async def test_call_tool_is_judged_as_the_tool_it_calls_with_that_tools_arguments() -> None:
    policy = Verdicts(Decision.allow())
    attempt = await _deferring(policy, approvals=ApprovalRules(selectors=("@destructive",)))
    read: JsonObject = {"name": "files__read", "arguments": {"path": "a"}}
    wipe: JsonObject = {"name": "files__wipe", "arguments": {"path": "/"}}
    assert (await judge_call(attempt.ctx, C1, CALL_TOOL, read)).verdict is Verdict.RUN
    assert (await judge_call(attempt.ctx, C1, CALL_TOOL, wipe)).verdict is Verdict.ASK
    assert [(tool, passed) for _, tool, passed in policy.asked] == [
        ("files__read", {"path": "a"}),
        ("files__wipe", {"path": "/"}),
    ]


async def test_call_tool_naming_no_deferred_tool_is_refused_before_anything_is_judged() -> None:
    policy = Verdicts(Decision.allow())
    attempt = await _deferring(policy)
    judgement = await judge_call(
        attempt.ctx, C1, CALL_TOOL, {"name": "files__gone", "arguments": {}}
    )
    assert judgement.verdict is Verdict.DENY
    assert attempt.failure("c1").kind == "unknown_tool"
    assert policy.asked == []


# --- suspend_for_approval ------------------------------------------------------------


async def test_the_suspension_names_the_call_and_the_first_line_of_the_reason() -> None:
    attempt = await _judging()
    suspend_for_approval(attempt.ctx, C1, "\n  over the limit\nsecond line")
    (suspended,) = attempt.new(Suspended)
    assert suspended.reason is SuspendReason.APPROVAL
    assert suspended.pending_call_id == "c1"
    assert suspended.question == "over the limit"
    assert attempt.state.suspended and attempt.state.pending_call is not None
    days = (suspended.expires_at - suspended.at).total_seconds() / 86_400
    assert days == attempt.ctx.spec.suspension.approval_expires_seconds / 86_400


async def test_a_suspension_without_a_reason_carries_no_question() -> None:
    attempt = await _judging()
    suspend_for_approval(attempt.ctx, C1, "   ")
    (suspended,) = attempt.new(Suspended)
    assert suspended.question is None
