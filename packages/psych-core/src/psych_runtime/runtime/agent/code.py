"""The ``run_code`` built-in: the model's program, in a sandbox, calling tools back.

The program runs in the sandbox the deployment maps the Spec's ``profile`` to, under
the Spec's limits cut to the deployment's hard ones; a backend that cannot give the
isolation the Spec demands is refused before anything runs. A program reaches the
host only through its bindings: each binding call is recorded in the Run's log as a
tool call of its own under the program's call (``parent_call_id``), durable before it
runs, and goes through the same path as the model's calls (narrowed to the tools this
turn offers, judged by the approval rules, executed, finished). A call that would need
a person's approval is refused to the program, since a program cannot wait for one.

What the program did comes back as data: its value and output previews, or its
traceback (shown to the model), or the limit that stopped it. Output beyond the
preview is kept in the blob store when the Spec's output policy asks for it (the
result names the blob keys under ``full_output``); a Spec that requires it is refused
before its program runs where no blob store is configured. No state survives
between programs. After a crash, a binding call left in doubt is closed ``unknown``
and never sent again (``dangling.py``), and the per-Run binding allowance counts the
calls already in the log, so a reclaim does not reset it.
"""

import time

from pydantic import JsonValue

from psych_runtime.blob.port import BlobKey
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.spec.code_execution import OutputPreservation
from psych_runtime.runtime.agent.call_checks import stage_started
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import failure
from psych_runtime.runtime.agent.finish import Executed
from psych_runtime.runtime.agent.finish import finish
from psych_runtime.runtime.ids import new_call_id
from psych_runtime.sandbox.port import BindingRefused
from psych_runtime.sandbox.port import Execution
from psych_runtime.sandbox.port import ExecutionStatus
from psych_runtime.sandbox.port import Program
from psych_runtime.tools.approval import Verdict
from psych_runtime.tools.approval import judge
from psych_runtime.tools.code import program_bindings
from psych_runtime.tools.code import resolve_limits


async def run_code(
    ctx: AttemptContext, call_id: ToolCallId, arguments: JsonObject, offered: frozenset[str]
) -> Executed:
    """Run the model's program and say, as data, what it did."""
    started = time.perf_counter()
    spec, journal = ctx.spec, ctx.journal
    execution = spec.code_execution
    assert execution is not None  # only offered when enabled
    code = arguments.get("code")
    if not isinstance(code, str) or not code.strip() or set(arguments) != {"code"}:
        return _refused(started, "invalid_arguments", "pass one argument, code: the program")
    sandboxes = ctx.deps.sandboxes
    sandbox = sandboxes.profiles.get(execution.profile)
    if sandbox is None:
        return _refused(
            started,
            "sandbox_unavailable",
            f"no sandbox serves the profile {execution.profile!r} in this deployment",
        )
    unfit = sandbox.capabilities.provides(execution.isolation, execution.network)
    if unfit is not None:
        return _refused(started, "isolation_unavailable", unfit)
    preserve = execution.output.preserve
    if preserve is OutputPreservation.REQUIRED and ctx.deps.blob is None:
        return _refused(
            started,
            "blob_store_required",
            "this agent's programs must keep their full output, and this deployment has "
            "no blob store to keep it in",
        )
    keep = preserve is not OutputPreservation.NEVER and ctx.deps.blob is not None
    bindings = program_bindings(execution, offered)
    program = Program(
        source=code,
        limits=resolve_limits(execution, sandboxes.hard_limits),
        network=execution.network,
        bindings=bindings,
        preview_bytes=execution.output.preview_bytes,
        max_output_bytes=execution.output.max_bytes,
        max_artifacts=execution.artifacts.max_count
        if execution.artifacts.collection.value == "collect"
        else 0,
        max_artifact_bytes=execution.artifacts.max_total_bytes,
        keep_full_output=keep,
    )
    turn = max(journal.state.turn, 1)
    allowance = spec.limits.max_steps

    async def binding(name: str, passed: JsonObject) -> JsonValue:
        if name not in bindings:
            raise BindingRefused("unknown_binding", f"no tool {name!r} is bound to this program")
        if journal.state.program_tool_calls >= allowance:
            raise BindingRefused(
                "binding_allowance", f"this run's programs may call tools {allowance} times"
            )
        return await _bound_call(ctx, call_id, turn, name, passed)

    done = await sandbox.execute(program, binding)
    executed = _executed(done, started)
    if not keep:
        return executed
    return await _keep_output(ctx, call_id, done, executed, required=preserve.value == "required")


async def _keep_output(
    ctx: AttemptContext, call_id: ToolCallId, done: Execution, executed: Executed, *, required: bool
) -> Executed:
    """Put the full output in the blob store and name the keys in the call's result.

    Written before the call is finished in the log, so a crash in between leaves an
    orphaned blob at worst, never a result that names a blob that is not there.
    """
    blob = ctx.deps.blob
    assert blob is not None  # only asked for when one is configured
    streams = {"stdout": done.stdout_full, "stderr": done.stderr_full}
    keys: JsonObject = {}
    try:
        for stream, data in streams.items():
            if data is None:
                continue
            named = ToolCallId(f"{call_id}.{stream}")
            key = BlobKey(ctx.journal.scope.tenant, ctx.journal.run_id, named)
            await blob.put(key, data, content_type="text/plain; charset=utf-8")
            keys[stream] = str(key)
    except Exception as error:
        why = f"the program's full output could not be kept: {type(error).__name__}: {error}"
        if required:
            return Executed(
                ToolOutcome.ERROR,
                None,
                failure("output_not_preserved", why),
                executed.duration,
            )
        keys = {"error": why}
    if not keys:
        return executed
    if executed.outcome is ToolOutcome.OK and isinstance(executed.result, dict):
        return Executed(
            executed.outcome, {**executed.result, "full_output": keys}, None, executed.duration
        )
    if executed.failure is not None:
        kept = ", ".join(f"{stream}={key}" for stream, key in keys.items())
        message = f"{executed.failure.message}\n(full output: {kept})"
        problem = executed.failure.model_copy(update={"message": message})
        return Executed(executed.outcome, executed.result, problem, executed.duration)
    return executed


async def _bound_call(
    ctx: AttemptContext, parent: ToolCallId, turn: int, name: str, passed: JsonObject
) -> JsonValue:
    """One binding call through the normal tool path, recorded under its program."""
    journal = ctx.journal
    binding_id = ToolCallId(new_call_id())
    stage_started(
        ctx,
        binding_id,
        name,
        passed,
        turn,
        safe_to_retry=ctx.tools.safe_to_retry(name, passed),
        parent=parent,
    )
    judgement = await judge(
        ctx.deps.approvals,
        ctx.deps.policy,
        journal.scope,
        name,
        ctx.tools.tool_class(name),
        passed,
    )
    if judgement.verdict is not Verdict.RUN:
        why = (
            "this call needs a person's approval, which a program cannot wait for"
            if judgement.verdict is Verdict.ASK
            else judgement.reason
        )
        refused = failure("access_denied", why)
        await finish(ctx, binding_id, name, Executed(ToolOutcome.ERROR, None, refused, 0.0))
        await journal.flush()
        raise BindingRefused("access_denied", why)
    await journal.flush()  # durable before it runs: a crash leaves it visibly in doubt
    executed = await ctx.execute(ctx, binding_id, name, passed)
    await finish(ctx, binding_id, name, executed)
    await journal.flush()
    if executed.outcome is not ToolOutcome.OK:
        problem = executed.failure or ToolFailure(kind="tool_error", message="the call failed")
        raise BindingRefused(problem.kind, problem.message)
    return executed.result


def _executed(done: Execution, started: float) -> Executed:
    """The run_code call's outcome: the program's data, or why it did not finish."""
    result: JsonObject = {
        "status": done.status.value,
        "stdout": done.stdout,
        "stderr": done.stderr,
        "stdout_bytes": done.stdout_bytes,
        "stderr_bytes": done.stderr_bytes,
        "binding_calls": done.binding_calls,
        "artifacts": [
            {"path": a.path, "size": a.size, "text": _text(a.content)} for a in done.artifacts
        ],
    }
    elapsed = round(time.perf_counter() - started, 6)
    if done.status is ExecutionStatus.OK:
        result["value"] = done.value
        return Executed(ToolOutcome.OK, result, None, elapsed)
    if done.status is ExecutionStatus.ERROR:
        raised = failure("program_error", done.message or "the program raised", tb=done.traceback)
        problem = raised.model_copy(update={"traceback_is_for_the_model": True})
    elif done.status is ExecutionStatus.LIMIT:
        problem = failure(
            f"limit_{done.limit or 'exceeded'}",
            done.message or f"the program hit its {done.limit} limit and was stopped",
        )
    else:
        problem = failure("sandbox_failed", done.message or "the sandbox could not run it")
    return Executed(ToolOutcome.ERROR, None, _with_output(problem, result), elapsed)


def _with_output(problem: ToolFailure, result: JsonObject) -> ToolFailure:
    """Add what the program printed to the failure the model reads."""
    printed = "\n".join(
        f"{stream}:\n{result[stream]}" for stream in ("stdout", "stderr") if result[stream]
    )
    if not printed:
        return problem
    return problem.model_copy(update={"message": f"{problem.message}\n{printed}"})


def _text(content: bytes | None) -> str | None:
    if content is None:
        return None
    try:
        return content.decode()
    except UnicodeDecodeError:
        return None


def _refused(started: float, kind: str, message: str) -> Executed:
    elapsed = round(time.perf_counter() - started, 6)
    return Executed(ToolOutcome.ERROR, None, failure(kind, message), elapsed)


__all__ = ["run_code"]
