"""``code.run_code``: refusals before a program runs, its binding calls, and its outcome.

The sandbox is the scripted stand-in of the ``run_code`` end-to-end tests: its
"program" is a JSON script of binding calls and an ending, which is all this side of
``run_code`` depends on.
"""

import dataclasses
import json
from typing import Any

from psych_runtime.blob.memory import InMemoryBlobStore
from psych_runtime.blob.port import BlobKey
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import ToolCallStarted
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.spec import CodeExecution
from psych_runtime.core.spec import Limits
from psych_runtime.core.spec.code_execution import Isolation
from psych_runtime.core.spec.code_execution import OutputPolicy
from psych_runtime.core.spec.code_execution import OutputPreservation
from psych_runtime.runtime.agent.code import run_code
from psych_runtime.runtime.agent.finish import Executed
from psych_runtime.sandbox.port import Binding
from psych_runtime.sandbox.port import Execution
from psych_runtime.sandbox.port import Program
from psych_runtime.tools.approval import ApprovalRules
from psych_runtime.tools.code import CodeSandboxes

from ....e2e.test_run_code import ScriptedSandbox
from .conftest import Attempt
from .conftest import Orders
from .conftest import agent
from .conftest import open_attempt
from .conftest import started
from .conftest import tool_turn

C1 = ToolCallId("c1")
OFFERED = frozenset({"lookup", "refund", "ask_question"})


def _program(**script: Any) -> dict[str, Any]:
    return {"code": json.dumps(script)}


async def _coding(
    sandbox: ScriptedSandbox | None = None,
    orders: Orders | None = None,
    execution: CodeExecution | None = None,
    **deps: Any,
) -> Attempt:
    spec = agent(
        tools=("lookup", "refund"),
        code_execution=execution if execution is not None else CodeExecution(),
        limits=deps.pop("limits", Limits()),
    )
    log = tool_turn(started(), "c1").tool_started("c1", tool="run_code")
    sandbox = sandbox if sandbox is not None else ScriptedSandbox()
    deps.setdefault("sandboxes", CodeSandboxes({"default": sandbox}))
    registry = (orders if orders is not None else Orders()).registry
    return await open_attempt(log, spec=spec, registry=registry, **deps)


def _refusal(executed: Executed) -> str:
    assert executed.outcome is ToolOutcome.ERROR and executed.failure is not None
    return executed.failure.kind


async def test_anything_but_one_non_empty_program_is_refused() -> None:
    sandbox = ScriptedSandbox()
    attempt = await _coding(sandbox)
    invalid: list[JsonObject] = [{}, {"code": "  "}, {"code": 7}, {"code": "1", "timeout": 5}]
    for arguments in invalid:
        executed = await run_code(attempt.ctx, C1, arguments, OFFERED)
        assert _refusal(executed) == "invalid_arguments", arguments
    assert sandbox.programs == []


async def test_a_profile_no_sandbox_serves_is_refused_before_anything_runs() -> None:
    attempt = await _coding(execution=CodeExecution(profile="gpu"))
    executed = await run_code(attempt.ctx, C1, _program(), OFFERED)
    assert _refusal(executed) == "sandbox_unavailable"
    assert executed.failure is not None and "'gpu'" in executed.failure.message


async def test_a_sandbox_weaker_than_the_spec_demands_is_refused() -> None:
    sandbox = ScriptedSandbox(isolation=Isolation.ISOLATED)
    attempt = await _coding(sandbox, execution=CodeExecution(isolation=Isolation.CONTAINED))
    assert _refusal(await run_code(attempt.ctx, C1, _program(), OFFERED)) == (
        "isolation_unavailable"
    )
    assert sandbox.programs == []


async def test_output_that_must_be_kept_with_no_blob_store_is_refused() -> None:
    required = CodeExecution(output=OutputPolicy(preserve=OutputPreservation.REQUIRED))
    attempt = await _coding(execution=required)
    assert _refusal(await run_code(attempt.ctx, C1, _program(), OFFERED)) == ("blob_store_required")


async def test_a_program_sees_only_the_offered_ordinary_tools_and_its_value_comes_back() -> None:
    sandbox = ScriptedSandbox()
    attempt = await _coding(sandbox)
    executed = await run_code(attempt.ctx, C1, _program(), OFFERED)
    assert executed.outcome is ToolOutcome.OK and isinstance(executed.result, dict)
    assert executed.result["value"] == {"answers": []}
    assert executed.result["status"] == "ok" and executed.result["stdout"] == "done"
    (program,) = sandbox.programs
    assert program.bindings == ("lookup", "refund")  # never ask_question
    assert not program.keep_full_output


async def test_a_binding_call_is_recorded_under_the_program_and_run_like_any_call() -> None:
    orders = Orders()
    attempt = await _coding(orders=orders)
    script = _program(calls=[["lookup", {"order_id": "A1"}]])
    executed = await run_code(attempt.ctx, C1, script, OFFERED)
    assert isinstance(executed.result, dict)
    assert executed.result["value"] == {"answers": ["A1: shipped"]}
    assert orders.calls == [("lookup", "A1")]
    (start,) = attempt.new(ToolCallStarted)
    assert (start.tool, start.parent_call_id, start.turn) == ("lookup", "c1", 1)
    assert start.safe_to_retry  # lookup is registered idempotent
    # Started and finished are written before the program hears the answer.
    assert [r.type for r in await attempt.durable()] == ["tool_call_started", "tool_call_finished"]
    assert attempt.state.program_tool_calls == 1


async def test_a_binding_the_program_was_not_given_is_refused_to_it() -> None:
    sandbox = ScriptedSandbox()
    attempt = await _coding(sandbox)
    offered = frozenset({"lookup"})
    await run_code(attempt.ctx, C1, _program(calls=[["refund", {"order_id": "A1"}]]), offered)
    assert sandbox.refusals == ["unknown_binding"]
    assert attempt.new() == []


async def test_the_runs_programs_may_call_tools_only_max_steps_times() -> None:
    sandbox = ScriptedSandbox()
    orders = Orders()
    attempt = await _coding(sandbox, orders, limits=Limits(max_steps=1))
    calls = [["lookup", {"order_id": "A1"}], ["lookup", {"order_id": "B2"}]]
    await run_code(attempt.ctx, C1, _program(calls=calls), OFFERED)
    assert sandbox.refusals == ["binding_allowance"]
    assert orders.calls == [("lookup", "A1")]


async def test_a_binding_call_that_needs_a_person_is_refused_and_recorded() -> None:
    sandbox = ScriptedSandbox()
    orders = Orders()
    attempt = await _coding(sandbox, orders, approvals=ApprovalRules(selectors=("@write",)))
    calls = [["refund", {"order_id": "A1"}], ["lookup", {"order_id": "A1"}]]
    await run_code(attempt.ctx, C1, _program(calls=calls), OFFERED)
    assert sandbox.refusals == ["access_denied"]
    assert orders.calls == [("lookup", "A1")]
    (refused, ran) = attempt.new(ToolCallStarted)
    failure = attempt.failure(refused.call_id)
    assert failure.kind == "access_denied" and "a program cannot wait" in failure.message
    assert attempt.finish(ran.call_id).outcome is ToolOutcome.OK


async def test_a_program_that_raises_shows_the_model_its_traceback_and_output() -> None:
    attempt = await _coding()
    executed = await run_code(attempt.ctx, C1, _program(**{"raise": "bad input"}), OFFERED)
    assert executed.failure is not None
    assert executed.failure.kind == "program_error"
    assert executed.failure.traceback_is_for_the_model
    assert executed.failure.message == "bad input\nstdout:\nworking..."


async def test_a_program_stopped_by_a_limit_says_which() -> None:
    attempt = await _coding()
    executed = await run_code(attempt.ctx, C1, _program(limit="wall"), OFFERED)
    assert executed.failure is not None
    assert executed.failure.kind == "limit_wall"
    assert executed.failure.message == "the program hit its wall limit and was stopped"


class FullOutput(ScriptedSandbox):
    """The scripted sandbox, returning the whole of what the program printed as well."""

    async def execute(self, program: Program, binding: Binding) -> Execution:
        done = await super().execute(program, binding)
        return dataclasses.replace(done, stdout_full=b"done, all of it", stdout_bytes=15)


class RefusingBlobs(InMemoryBlobStore):
    async def put(self, key: BlobKey, data: bytes, *, content_type: str) -> None:
        raise OSError("disk full")


async def test_the_full_output_is_kept_in_the_blob_store_and_named_in_the_result() -> None:
    blob = InMemoryBlobStore()
    attempt = await _coding(FullOutput(), blob=blob)
    executed = await run_code(attempt.ctx, C1, _program(), OFFERED)
    assert isinstance(executed.result, dict)
    key = BlobKey("acme", attempt.journal.run_id, ToolCallId("c1.stdout"))
    assert executed.result["full_output"] == {"stdout": str(key)}
    assert await blob.get(key) == b"done, all of it"


async def test_full_output_that_cannot_be_kept_fails_the_call_only_when_required() -> None:
    required = CodeExecution(output=OutputPolicy(preserve=OutputPreservation.REQUIRED))
    attempt = await _coding(FullOutput(), blob=RefusingBlobs(), execution=required)
    executed = await run_code(attempt.ctx, C1, _program(), OFFERED)
    assert _refusal(executed) == "output_not_preserved"

    attempt = await _coding(FullOutput(), blob=RefusingBlobs())
    executed = await run_code(attempt.ctx, C1, _program(), OFFERED)
    assert executed.outcome is ToolOutcome.OK and isinstance(executed.result, dict)
    full = executed.result["full_output"]
    assert isinstance(full, dict) and "OSError: disk full" in str(full["error"])
