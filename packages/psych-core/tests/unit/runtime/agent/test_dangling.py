"""``dangling.settle_dangling``: what becomes of each call an earlier Attempt left open."""

from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.spec import SuspensionPolicy
from psych_runtime.runtime.agent.dangling import UNDECIDED
from psych_runtime.runtime.agent.dangling import settle_dangling
from psych_runtime.runtime.open_calls import ORPHANED_MESSAGE
from psych_runtime.spec import McpServer
from psych_runtime.testing import LogBuilder
from psych_runtime.tools.ask_question import ASK_QUESTION

from ....e2e.test_tool_sources import ServerRoom
from .conftest import Attempt
from .conftest import Orders
from .conftest import agent
from .conftest import open_attempt
from .conftest import started
from .conftest import tool_turn

ORDERS = agent(tools=("lookup", "refund"))


def _open(tool: str, **started_fields: object) -> LogBuilder:
    """Attempt 1 started call ``c1`` of ``tool`` on order A1 and vanished."""
    log = tool_turn(started(), "c1")
    return log.tool_started("c1", tool=tool, arguments={"order_id": "A1"}, **started_fields)


def _decided(approved: bool | None, tool: str = "refund", **resume: object) -> LogBuilder:
    """Call ``c1`` waited for a person, who decided ``approved`` (None: nobody yet)."""
    log = _open(tool).suspended(SuspendReason.APPROVAL, pending_call_id="c1")
    if approved is not None:
        log.resumed(approved=approved, **resume)
    return log


async def _settled(log: LogBuilder, orders: Orders | None = None) -> Attempt:
    orders = orders if orders is not None else Orders()
    attempt = await open_attempt(log, spec=ORDERS, registry=orders.registry)
    await settle_dangling(attempt.ctx)
    return attempt


async def test_nothing_open_and_a_settled_run_are_left_alone() -> None:
    done = tool_turn(started(), "c1").tool_started("c1").tool_finished("c1").attempt()
    assert (await _settled(done)).new() == []
    # A Run already settled is not run again, whatever its log shows open.
    orders = Orders()
    settled = _open("lookup", safe_to_retry=True).settled(TerminalState.FAILED)
    assert (await _settled(settled, orders)).new() == []
    assert orders.calls == []


async def test_a_question_is_closed_with_the_answer_the_log_holds() -> None:
    log = tool_turn(started(), "c1").tool_started("c1", tool=ASK_QUESTION)
    log.suspended(SuspendReason.QUESTION, pending_call_id="c1")
    log.resumed(payload={"answer": "A1"}).attempt()
    spec = agent(suspension=SuspensionPolicy(may_ask_questions=True))
    attempt = await open_attempt(log, spec=spec)
    await settle_dangling(attempt.ctx)
    assert attempt.finish("c1").result == {"answer": "A1"}


async def test_a_call_still_waiting_for_a_decision_when_the_run_was_stopped_is_not_run() -> None:
    orders = Orders()
    attempt = await _settled(_decided(None).abort().attempt(), orders)
    failure = attempt.failure("c1")
    assert (failure.kind, failure.message) == ("not_executed", UNDECIDED)
    assert orders.calls == []


async def test_a_denied_call_is_closed_denied_and_never_run() -> None:
    orders = Orders()
    log = _decided(False, payload={"reason": "no refunds"}).attempt()
    attempt = await _settled(log, orders)
    failure = attempt.failure("c1")
    assert (failure.kind, failure.message) == ("denied", "a person denied this call: no refunds")
    assert orders.calls == []


async def test_an_approved_call_is_run_by_the_first_attempt_after_the_approval() -> None:
    orders = Orders()
    attempt = await _settled(_decided(True).attempt(), orders)
    finished = attempt.finish("c1")
    assert (finished.outcome, finished.result) == (ToolOutcome.OK, "A1: refunded")
    assert orders.calls == [("refund", "A1")]


async def test_an_approved_call_no_tool_here_can_run_is_closed_unavailable() -> None:
    attempt = await _settled(_decided(True, tool="shred").attempt())
    failure = attempt.failure("c1")
    assert failure.kind == "tool_unavailable" and "'shred'" in failure.message


async def test_an_approval_a_vanished_attempt_may_have_acted_on_is_not_run_again() -> None:
    orders = Orders()
    attempt = await _settled(_decided(True).attempt().attempt(), orders)
    finished = attempt.finish("c1")
    assert finished.outcome is ToolOutcome.UNKNOWN
    assert finished.failure is not None and finished.failure.kind == "orphaned"
    assert orders.calls == []


async def test_a_call_safe_to_retry_is_run_again() -> None:
    orders = Orders()
    attempt = await _settled(_open("lookup", safe_to_retry=True).attempt(), orders)
    assert attempt.finish("c1").result == "A1: shipped"
    assert orders.calls == [("lookup", "A1")]


async def test_a_call_not_safe_to_retry_is_closed_in_doubt() -> None:
    orders = Orders()
    attempt = await _settled(_open("refund").attempt(), orders)
    finished = attempt.finish("c1")
    assert finished.outcome is ToolOutcome.UNKNOWN
    assert finished.failure is not None
    assert (finished.failure.kind, finished.failure.message) == ("orphaned", ORPHANED_MESSAGE)
    assert orders.calls == []


async def test_a_call_safe_to_retry_that_no_tool_here_can_run_is_closed_in_doubt() -> None:
    attempt = await _settled(_open("gone", safe_to_retry=True).attempt())
    assert attempt.failure("c1").kind == "orphaned"


async def test_a_programs_call_is_closed_in_doubt_even_when_safe_to_retry() -> None:
    # The program that made it is gone: nobody is left to hand its result to.
    orders = Orders()
    log = tool_turn(started(), "c0").tool_started("c0", tool="run_code")
    log.tool_started(
        "c1", tool="lookup", arguments={"order_id": "A1"}, safe_to_retry=True, parent_call_id="c0"
    )
    attempt = await _settled(log.attempt(), orders)
    assert attempt.failure("c1").kind == "orphaned"
    assert attempt.failure("c0").kind == "orphaned"
    assert orders.calls == []


def _remote(down: bool) -> tuple[ServerRoom, LogBuilder]:
    room = ServerRoom({"files": {"read": ("read-only", "idempotent")}})
    if down:
        room.down.add("files")
    log = tool_turn(started(), "c1")
    log.tool_started("c1", tool="files__read", arguments={"path": "a"}, safe_to_retry=True)
    return room, log.attempt()


async def test_a_remote_call_is_sent_again_once_its_source_says_it_still_offers_it() -> None:
    room, log = _remote(down=False)
    server = McpServer(name="files", url="https://files.example/mcp")
    attempt = await open_attempt(log, spec=agent(mcp_servers=(server,)), sources=(room,))
    await settle_dangling(attempt.ctx)
    assert attempt.finish("c1").result == {"server": "files", "tool": "read"}
    assert room.resolved == 1 and [call[2] for call in room.calls] == ["read"]


async def test_a_remote_call_whose_source_is_down_is_closed_in_doubt() -> None:
    room, log = _remote(down=True)
    server = McpServer(name="files", url="https://files.example/mcp")
    attempt = await open_attempt(log, spec=agent(mcp_servers=(server,)), sources=(room,))
    await settle_dangling(attempt.ctx)
    assert attempt.failure("c1").kind == "orphaned"
    assert room.calls == []


async def test_every_open_call_is_settled_in_one_pass() -> None:
    orders = Orders()
    log = tool_turn(started(), "c1", "c2")
    log.tool_started("c1", tool="lookup", arguments={"order_id": "A1"}, safe_to_retry=True)
    log.tool_started("c2", tool="refund", arguments={"order_id": "B2"})
    attempt = await _settled(log.attempt(), orders)
    assert attempt.finish("c1").outcome is ToolOutcome.OK
    assert attempt.finish("c2").outcome is ToolOutcome.UNKNOWN
    assert attempt.state.open_tool_calls == {}
