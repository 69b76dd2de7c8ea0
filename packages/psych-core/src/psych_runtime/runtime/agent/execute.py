"""Executing one tool call that passed its checks.

A tool never starts before its ``tool_call_started`` is durable, so after a crash every
call is either known to have finished or visibly in doubt. What the call amounts to
(its result, or a failure the model can read) is returned as data for ``finish.py``;
nothing a tool does can end more than its own call.

A built-in is run as its entry in ``built_ins.BUILT_INS`` says. Everything else is one
of three kinds of call: a tool of a remote source (an MCP server, an A2A peer; a
``call_tool`` names one of those), an HTTP tool, a Spec ``HttpTool`` entry sent through
the Runtime's transport (and so its egress policy) with the Run's Scope, or a
registered code tool. A GET counts as safe to repeat, so one left in doubt by a crash
is sent again; any other method is closed ``unknown``, like a code tool that was not
registered idempotent (see ``dangling.py``).
"""

import asyncio
import time
import traceback
from collections.abc import Coroutine

from pydantic import JsonValue

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.runtime.agent.built_ins import BUILT_INS
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import failure
from psych_runtime.runtime.agent.finish import Executed
from psych_runtime.runtime.agent.finish import finish
from psych_runtime.runtime.model_call import replace_lone_surrogates
from psych_runtime.tools.context import ToolContext
from psych_runtime.tools.deferred import CALL_TOOL
from psych_runtime.tools.deferred import call_target
from psych_runtime.tools.errors import ToolArgumentsInvalid
from psych_runtime.tools.errors import ToolResultInvalid
from psych_runtime.tools.http.executor import call_http_tool
from psych_runtime.tools.http.request import HttpToolFailed
from psych_runtime.tools.sources import SourceCallFailed


async def execute(
    ctx: AttemptContext, call_id: ToolCallId, name: str, arguments: JsonObject
) -> Executed:
    """Run one call to its end (or its cancellation) and say what it amounted to.

    Raises:
        asyncio.CancelledError: the Attempt was cancelled. An interruptible call is
            abandoned; an uninterruptible one first runs to its end and has its
            finish written.
    """
    built_in = BUILT_INS.get(name)
    if built_in is not None and built_in.run is not None:
        return await built_in.run(ctx, call_id, name, arguments)
    journal = ctx.journal
    assert journal.attempt_id is not None
    context = ToolContext.for_call(
        run_id=journal.run_id,
        call_id=call_id,
        scope=journal.scope,
        attempt_id=journal.attempt_id,
    )
    started = time.perf_counter()
    # Started eagerly: a tool that returns without waiting on anything is finished
    # before this line is, with no trip through the event loop.
    invocation = asyncio.eager_task_factory(
        asyncio.get_running_loop(), _captured(_invoke(ctx, name, arguments, context))
    )
    if not ctx.tools.interruptible(name):
        # An uninterruptible call (a refund, say) is never abandoned half way: it
        # runs to its end even through cancellation, its outcome is recorded, and
        # only then does the cancellation carry on.
        if await _wait_through_cancellation(invocation):
            await finish(ctx, call_id, name, _outcome_of(invocation, started))
            await journal.flush()
            raise asyncio.CancelledError
        return _outcome_of(invocation, started)
    try:
        await invocation
    except asyncio.CancelledError:
        if not invocation.done() or invocation.cancelled():
            raise
    except Exception:
        pass
    current = asyncio.current_task()
    if current is not None and current.cancelling():
        # The call ended although the Attempt was being cancelled (it finished at that
        # very moment, or the tool caught the cancellation): it did run, so its end is
        # written, and the cancellation carries on instead of being lost.
        await finish(ctx, call_id, name, _outcome_of(invocation, started))
        await journal.flush()
        raise asyncio.CancelledError
    return _outcome_of(invocation, started)


async def _invoke(
    ctx: AttemptContext, name: str, arguments: JsonObject, context: ToolContext
) -> JsonValue:
    """Run a Spec HTTP tool, a remote source's tool, or a registered code tool."""
    if name == CALL_TOOL:
        target, arguments = call_target(ctx.tools.deferred, arguments)
        name = target.name
    remote = ctx.tools.remote.get(name)
    if remote is not None:
        source, tool = remote
        permitted = ctx.tools.permitted
        return await source.call(ctx.spec, tool, arguments, context, permitted=permitted)
    http = ctx.tools.http_tools.get(name)
    if http is None:
        return await ctx.deps.registry.invoke(name, arguments, context)
    return await call_http_tool(
        http,
        arguments,
        scope=context.scope,
        transport=ctx.deps.http,
        secrets=ctx.deps.secrets,
    )


async def _wait_through_cancellation(task: "asyncio.Future[JsonValue]") -> bool:
    """Wait until ``task`` is done, even when the caller is cancelled meanwhile.

    The supervisor's grace period is what bounds a call that hangs for ever.

    Returns:
        Whether a cancellation arrived while waiting.
    """
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
        except Exception:
            break  # the task failed; its caller reads the failure from the task
    return cancelled


class _ToolRaised(Exception):
    """Carries a ``BaseException`` a tool raised out of its task as an ordinary failure.

    Attributes:
        raised: what the tool raised (``SystemExit``, ``KeyboardInterrupt``...).
    """

    def __init__(self, raised: BaseException) -> None:
        super().__init__(str(raised))
        self.raised = raised


async def _captured(invocation: Coroutine[object, object, JsonValue]) -> JsonValue:
    """Run a tool so that nothing it raises can end more than its own call.

    A tool is code the runtime does not control: ``sys.exit()`` deep in a library, a
    ``KeyboardInterrupt`` re-raised by a helper. Left alone, such an exception ends the
    task and asyncio hands ``SystemExit`` and ``KeyboardInterrupt`` on to the event
    loop itself, which stops the Worker and every Run it holds. Caught here, inside the
    task, it becomes that call's failure like any other exception. Only a cancellation
    passes through: it is how the Worker stops a call, not something the tool did.
    Stopping the process still works: under ``asyncio.run`` a SIGINT cancels the main
    task, which reaches every call as a cancellation. Only when a default SIGINT
    handler happens to interrupt a tool's own code in the loop's thread is the
    resulting ``KeyboardInterrupt`` taken for the tool's, failing that call.
    """
    try:
        return await invocation
    except (asyncio.CancelledError, Exception):
        raise
    except BaseException as raised:
        raise _ToolRaised(raised) from None


def _outcome_of(task: "asyncio.Future[JsonValue]", started: float) -> Executed:
    """What a finished tool invocation amounts to, as data for the log and the model."""
    duration = _elapsed(started)
    if task.cancelled():
        return Executed(
            ToolOutcome.ABORTED, None, failure("cancelled", "the call was cancelled"), duration
        )
    caught = task.exception()
    if caught is None:
        return Executed(ToolOutcome.OK, task.result(), None, duration)
    error: BaseException = caught.raised if isinstance(caught, _ToolRaised) else caught
    if isinstance(error, ToolArgumentsInvalid | ToolResultInvalid):
        return Executed(ToolOutcome.ERROR, None, failure(error.kind, str(error)), duration)
    if isinstance(error, HttpToolFailed | SourceCallFailed):
        failed = ToolFailure(
            kind=error.kind,
            message=replace_lone_surrogates(str(error)),
            transient=error.transient,
        )
        return Executed(ToolOutcome.ERROR, None, failed, duration)
    return Executed(
        ToolOutcome.ERROR,
        None,
        failure(
            type(error).__name__,
            str(error) or type(error).__name__,
            tb="".join(traceback.format_exception(error)),
        ),
        duration,
    )


def _elapsed(started: float) -> float:
    return round(time.perf_counter() - started, 6)
