"""``run_code`` through the agent loop, with a scripted sandbox standing in for a backend.

The stand-in runs no code: its "program" is a JSON script saying which bindings to
call and what to end with, which is all the loop's side of ``run_code`` depends on
(the real backends and what they contain are tested in ``psych-sandbox``).
"""

import json
from typing import Any

import pytest

from psych_runtime import AgentSpec
from psych_runtime import ApprovalRules
from psych_runtime import InMemoryStore
from psych_runtime import Limits
from psych_runtime import TerminalState
from psych_runtime import ValidationContext
from psych_runtime import publish
from psych_runtime.adapters import Binding
from psych_runtime.adapters import BindingRefused
from psych_runtime.adapters import Execution
from psych_runtime.adapters import ExecutionStatus
from psych_runtime.adapters import Guarantee
from psych_runtime.adapters import Program
from psych_runtime.adapters import SandboxCapabilities
from psych_runtime.records import Record
from psych_runtime.spec import CodeExecution
from psych_runtime.spec import CodeExecutionLimits
from psych_runtime.spec import Isolation
from psych_runtime.testing import FakeModel

from .conftest import ACME
from .conftest import crash_once
from .conftest import run_once

CODE = ValidationContext(capabilities=("code_execution",))


class ScriptedSandbox:
    """Plays a JSON script instead of a program: calls, then a value or a failure."""

    def __init__(self, isolation: Isolation = Isolation.ISOLATED) -> None:
        self._capabilities = SandboxCapabilities(
            backend="scripted",
            isolation=isolation,
            enforced=frozenset({Guarantee.SEPARATE_PROCESS}),
        )
        self.programs: list[Program] = []
        self.refusals: list[str] = []

    @property
    def capabilities(self) -> SandboxCapabilities:
        return self._capabilities

    async def execute(self, program: Program, binding: Binding) -> Execution:
        self.programs.append(program)
        script = json.loads(program.source)
        answers = []
        for name, arguments in script.get("calls", []):
            try:
                answers.append(await binding(name, arguments))
            except BindingRefused as refusal:
                self.refusals.append(refusal.kind)
                answers.append({"refused": refusal.kind})
        if "raise" in script:
            return Execution(
                ExecutionStatus.ERROR,
                message=script["raise"],
                traceback="Traceback (most recent call last):\n  ...\n"
                f"ValueError: {script['raise']}",
                stdout="working...",
            )
        if "limit" in script:
            return Execution(ExecutionStatus.LIMIT, limit=script["limit"])
        return Execution(ExecutionStatus.OK, value={"answers": answers}, stdout="done")

    async def close(self) -> None:
        return None


def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"{order_id}: shipped"


def refund(order_id: str) -> str:
    """Refund an order."""
    return f"{order_id}: refunded"


def _spec(**execution: Any) -> AgentSpec:
    return AgentSpec(
        name="coder",
        model="fake-standard",
        tools=("lookup", "refund"),
        code_execution=CodeExecution(**execution),
    )


def _program(**script: Any) -> dict[str, str]:
    return {"code": json.dumps(script)}


async def _run(
    spec: AgentSpec, model: FakeModel, sandbox: ScriptedSandbox, **runtime: Any
) -> list[Record]:
    options = {"sandboxes": {"default": sandbox}, **runtime}
    settled = await run_once(
        spec, model, lookup, refund, message="Go.", context=CODE, runtime_options=options
    )
    return settled.log


def _program_calling(tool: str, *, then: str) -> FakeModel:
    """A model whose program calls ``tool`` for order A1, and which then answers."""
    program = _program(calls=[[tool, {"order_id": "A1"}]])
    return FakeModel().turn(tool_calls=[("run_code", program)]).turn(text=then)


def _finishes(log: list[Record]) -> dict[str, Any]:
    return {r.call_id: r for r in log if r.type == "tool_call_finished"}


async def test_a_program_calls_bound_tools_through_the_log() -> None:
    sandbox = ScriptedSandbox()
    model = _program_calling("lookup", then="A1 shipped.")
    log = await _run(_spec(bindings=("lookup",)), model, sandbox)
    assert log[-1].state is TerminalState.COMPLETED
    [program] = sandbox.programs
    assert program.bindings == ("lookup",)  # narrowed by the Spec's list
    starts = [r for r in log if r.type == "tool_call_started"]
    run_code, bound = starts
    assert run_code.tool == "run_code" and bound.tool == "lookup"
    assert bound.parent_call_id == run_code.call_id
    finishes = _finishes(log)
    assert finishes[bound.call_id].result == "A1: shipped"
    assert finishes[run_code.call_id].result["value"] == {"answers": ["A1: shipped"]}
    [definition] = [t for t in model.requests[0].tools if t.name == "run_code"]
    assert "tools.lookup(...)" in definition.description
    assert "refund" not in definition.description


async def test_a_traceback_reaches_the_model_and_a_limit_is_named() -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[("run_code", _program(**{"raise": "bad input"}))])
        .turn(tool_calls=[("run_code", _program(limit="cpu"))])
        .turn(text="Gave up.")
    )
    log = await _run(_spec(), model, ScriptedSandbox())
    errors = [r.failure for r in log if r.type == "tool_call_finished"]
    assert errors[0].kind == "program_error" and errors[0].traceback_is_for_the_model
    assert "ValueError: bad input" in errors[0].traceback and "working..." in errors[0].message
    assert errors[1].kind == "limit_cpu"
    tool_messages = [m.content for m in model.requests[1].messages if m.role == "tool"]
    assert "ValueError: bad input" in tool_messages[0]


async def test_isolation_the_sandbox_cannot_give_is_refused_before_running() -> None:
    sandbox = ScriptedSandbox(Isolation.ISOLATED)
    model = FakeModel().turn(tool_calls=[("run_code", _program())]).turn(text="ok")
    log = await _run(_spec(isolation=Isolation.CONTAINED), model, sandbox)
    [finished] = _finishes(log).values()
    assert finished.failure.kind == "isolation_unavailable"
    assert sandbox.programs == []


async def test_limits_are_cut_to_the_deployments_and_approvals_refuse_bindings() -> None:
    from psych_runtime.adapters import ResolvedLimits

    sandbox = ScriptedSandbox()
    model = _program_calling("refund", then="ok")
    spec = _spec(limits=CodeExecutionLimits(cpu_seconds=999, memory_bytes=1024))
    log = await _run(
        spec,
        model,
        sandbox,
        code_limits=ResolvedLimits(cpu_seconds=5.0),
        approvals=ApprovalRules(always=frozenset({"refund"})),
    )
    [program] = sandbox.programs
    assert program.limits.cpu_seconds == 5.0 and program.limits.memory_bytes == 1024
    assert sandbox.refusals == ["access_denied"]  # a program cannot wait for a person
    refused = [r for r in log if r.type == "tool_call_finished" and r.failure]
    assert refused[0].failure.kind == "access_denied"
    assert log[-1].state is TerminalState.COMPLETED


async def test_no_sandbox_for_the_profile_is_data() -> None:
    model = FakeModel().turn(tool_calls=[("run_code", _program())]).turn(text="ok")
    log = await _run(_spec(profile="gpu"), model, ScriptedSandbox())
    [finished] = _finishes(log).values()
    assert finished.failure.kind == "sandbox_unavailable"


@pytest.mark.parametrize("crash_before", ["tool_call_finished"])
async def test_a_binding_call_cut_off_by_a_crash_is_unknown_and_not_sent_again(
    crash_before: str,
) -> None:
    calls: list[str] = []

    def charge(order_id: str) -> str:
        """Charge an order."""
        calls.append(order_id)
        return "charged"

    sandbox = ScriptedSandbox()
    model = _program_calling("charge", then="Let me check.")
    spec = AgentSpec(
        name="coder", model="fake-standard", tools=("charge",), code_execution=CodeExecution()
    )
    recovery = await crash_once(
        spec,
        model,
        charge,
        message="Go.",
        context=CODE,
        runtime_options={"sandboxes": {"default": sandbox}},
        crash_before=crash_before,
    )
    assert calls == ["A1"]  # run once, never again
    outcomes = [r.outcome.value for r in recovery.final_log if r.type == "tool_call_finished"]
    assert outcomes == ["unknown", "unknown"]  # the binding and its program
    assert recovery.final_log[-1].state is TerminalState.COMPLETED


@pytest.mark.parametrize(
    ("settings", "path"),
    [
        ({"workspace": "run"}, "code_execution.workspace"),
    ],
)
async def test_settings_not_honoured_yet_are_refused_at_publish(
    settings: dict[str, Any], path: str
) -> None:
    from psych_runtime import SpecValidationError

    with pytest.raises(SpecValidationError) as refused:
        await publish(InMemoryStore(), _spec(**settings), scope=ACME, context=CODE)
    assert [issue.path for issue in refused.value.issues] == [path]


async def test_the_per_run_binding_allowance_is_counted_from_the_log() -> None:
    sandbox = ScriptedSandbox()
    three = [["lookup", {"order_id": f"A{n}"}] for n in range(3)]
    model = FakeModel().turn(tool_calls=[("run_code", _program(calls=three))]).turn(text="ok")
    spec = _spec().model_copy(update={"limits": Limits(max_steps=2)})
    log = await _run(spec, model, sandbox)
    bound = [r for r in log if r.type == "tool_call_started" and r.parent_call_id]
    assert len(bound) == 2  # the allowance is the Run's max_steps
    assert sandbox.refusals == ["binding_allowance"]
