"""The runtime's own tools, one entry each: when offered, how described, how run.

The entries are in the order a turn offers them, after the Spec's tools and the
remote ones. ``run_code`` comes last because a program may call any tool offered
before it. Adding a built-in tool means adding its entry here (see ``built_in.py`` for
what an entry says); the catalog, the executor, the approval gate and crash recovery
all read this table.
"""

import time
from collections.abc import Callable

from pydantic import JsonValue

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.records import ComponentShown
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import TaskListUpdated
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.reducer import READ_TOOL_OUTPUT
from psych_runtime.runtime.agent.built_in import Available
from psych_runtime.runtime.agent.built_in import BuiltIn
from psych_runtime.runtime.agent.built_in import Offer
from psych_runtime.runtime.agent.built_in import TurnView
from psych_runtime.runtime.agent.catalog import ToolCatalog
from psych_runtime.runtime.agent.code import run_code
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import failure
from psych_runtime.runtime.agent.delegation import run_subagent_tool
from psych_runtime.runtime.agent.finish import Executed
from psych_runtime.runtime.agent.memory import run_memory_tool
from psych_runtime.tools.approval import ToolClass
from psych_runtime.tools.ask_question import ASK_QUESTION
from psych_runtime.tools.ask_question import ASK_QUESTION_DEFINITION
from psych_runtime.tools.code import RUN_CODE
from psych_runtime.tools.code import program_bindings
from psych_runtime.tools.code import run_code_definition
from psych_runtime.tools.deferred import CALL_TOOL
from psych_runtime.tools.deferred import CALL_TOOL_DEFINITION
from psych_runtime.tools.deferred import GET_TOOL_INFO
from psych_runtime.tools.deferred import GET_TOOL_INFO_DEFINITION
from psych_runtime.tools.deferred import LIST_TOOLS
from psych_runtime.tools.deferred import LIST_TOOLS_DEFINITION
from psych_runtime.tools.deferred import list_tools
from psych_runtime.tools.deferred import tool_info
from psych_runtime.tools.errors import ToolArgumentsInvalid
from psych_runtime.tools.large_results.read_tool import READ_TOOL_OUTPUT_DEFINITION
from psych_runtime.tools.large_results.reader import ResultNotReadable
from psych_runtime.tools.memory import FORGET
from psych_runtime.tools.memory import FORGET_DEFINITION
from psych_runtime.tools.memory import REMEMBER
from psych_runtime.tools.memory import REMEMBER_DEFINITION
from psych_runtime.tools.plan_and_show import SHOW_COMPONENT
from psych_runtime.tools.plan_and_show import SHOW_COMPONENT_DEFINITION
from psych_runtime.tools.plan_and_show import UPDATE_TASKS
from psych_runtime.tools.plan_and_show import UPDATE_TASKS_DEFINITION
from psych_runtime.tools.plan_and_show import component_from
from psych_runtime.tools.plan_and_show import tasks_from
from psych_runtime.tools.skills import LOAD_SKILL
from psych_runtime.tools.skills import load_skill
from psych_runtime.tools.subagents import CHECK_SUBAGENT
from psych_runtime.tools.subagents import DELEGATE
from psych_runtime.tools.subagents import MESSAGE_SUBAGENT
from psych_runtime.tools.subagents import SPAWN_SUBAGENT

# --- how the simple ones run -------------------------------------------------------------


def _elapsed(started: float) -> float:
    return round(time.perf_counter() - started, 6)


def _refused(kind: str, error: Exception, started: float) -> Executed:
    return Executed(ToolOutcome.ERROR, None, failure(kind, str(error)), _elapsed(started))


def _answer(compute: Callable[[], JsonValue]) -> Executed:
    """Time ``compute``; arguments it refuses make an ``invalid_arguments`` failure."""
    started = time.perf_counter()
    try:
        result = compute()
    except ToolArgumentsInvalid as error:
        return _refused("invalid_arguments", error, started)
    return Executed(ToolOutcome.OK, result, None, _elapsed(started))


async def _read_output(
    ctx: AttemptContext, call_id: ToolCallId, name: str, arguments: JsonObject
) -> Executed:
    """Answer ``read_tool_output`` from this Run's own results."""
    started = time.perf_counter()
    try:
        page = await ctx.reader.read(ctx.journal.state, arguments)
    except ToolArgumentsInvalid as error:
        return _refused("invalid_arguments", error, started)
    except ResultNotReadable as error:
        return _refused(error.kind, error, started)
    return Executed(ToolOutcome.OK, page, None, _elapsed(started))


async def _load_skill(
    ctx: AttemptContext, call_id: ToolCallId, name: str, arguments: JsonObject
) -> Executed:
    """Answer ``load_skill`` from the Spec itself; an unknown skill is refused."""
    return _answer(lambda: load_skill(ctx.tools.skills, arguments, ctx.journal.state))


async def _plan_or_show(
    ctx: AttemptContext, call_id: ToolCallId, name: str, arguments: JsonObject
) -> Executed:
    """Record a task list or a component; it lands in the same batch as the finish."""

    def stage() -> JsonObject:
        if name == UPDATE_TASKS:
            tasks = tasks_from(arguments)
            ctx.journal.stage(TaskListUpdated, tasks=tasks)
            return {"tasks": len(tasks)}
        component = component_from(arguments)
        ctx.journal.stage(ComponentShown, component=component)
        return {"shown": component.kind}

    return _answer(stage)


async def _describe_deferred(
    ctx: AttemptContext, call_id: ToolCallId, name: str, arguments: JsonObject
) -> Executed:
    """Answer ``list_tools`` or ``get_tool_info`` from this turn's deferred tools."""
    describe = list_tools if name == LIST_TOOLS else tool_info
    return _answer(lambda: describe(ctx.tools.deferred, arguments))


async def _memory(
    ctx: AttemptContext, call_id: ToolCallId, name: str, arguments: JsonObject
) -> Executed:
    return await run_memory_tool(ctx, name, arguments)


async def _program(
    ctx: AttemptContext, call_id: ToolCallId, name: str, arguments: JsonObject
) -> Executed:
    return await run_code(ctx, call_id, arguments, ctx.tools.offered_now)


# --- when they are offered ---------------------------------------------------------------


def _always(catalog: ToolCatalog) -> bool:
    return True


def _defers(catalog: ToolCatalog) -> bool:
    return bool(catalog.deferred)


def _fixed(definition: ToolDefinition, *, when: str) -> Offer:
    """Offer ``definition`` whenever the catalog attribute ``when`` is true."""

    def offer(view: TurnView) -> ToolDefinition | None:
        return definition if getattr(view.catalog, when) else None

    return offer


def _subagent(name: str) -> tuple[Available, Offer]:
    """Offered when the Spec's roster or spawn envelope gives the parent this tool."""

    def available(catalog: ToolCatalog) -> bool:
        return catalog.subagent_definition(name) is not None

    def offer(view: TurnView) -> ToolDefinition | None:
        return view.catalog.subagent_definition(name)

    return available, offer


def _offer_reader(view: TurnView) -> ToolDefinition | None:
    # Only worth its tokens once there is something to read back.
    if view.state.result_handles and READ_TOOL_OUTPUT not in view.withheld:
        return READ_TOOL_OUTPUT_DEFINITION
    return None


def _offer_skills(view: TurnView) -> ToolDefinition | None:
    return view.catalog.skill_definition


def _offer_program(view: TurnView) -> ToolDefinition | None:
    execution = view.catalog.code_execution
    if execution is None:
        return None
    bindings = program_bindings(execution, frozenset(d.name for d in view.before))
    return run_code_definition(execution, bindings)


_DELEGATE = _subagent(DELEGATE)
_SPAWN = _subagent(SPAWN_SUBAGENT)
_CHECK = _subagent(CHECK_SUBAGENT)
_MESSAGE = _subagent(MESSAGE_SUBAGENT)

_ENTRIES = (
    BuiltIn(
        LIST_TOOLS,
        _defers,
        _fixed(LIST_TOOLS_DEFINITION, when="deferred"),
        _describe_deferred,
    ),
    BuiltIn(
        GET_TOOL_INFO,
        _defers,
        _fixed(GET_TOOL_INFO_DEFINITION, when="deferred"),
        _describe_deferred,
    ),
    # Judged and executed as the deferred tool it names (``deferred.call_target``).
    BuiltIn(
        CALL_TOOL,
        _defers,
        _fixed(CALL_TOOL_DEFINITION, when="deferred"),
        None,
        tool_class=ToolClass.WRITE,
        safe_to_retry=False,
    ),
    BuiltIn(READ_TOOL_OUTPUT, _always, _offer_reader, _read_output),
    # The tool phase suspends the Run on it (``question.py``).
    BuiltIn(
        ASK_QUESTION,
        lambda catalog: catalog.asks_questions,
        _fixed(ASK_QUESTION_DEFINITION, when="asks_questions"),
        None,
        safe_to_retry=False,
    ),
    BuiltIn(LOAD_SKILL, lambda catalog: bool(catalog.skills), _offer_skills, _load_skill),
    BuiltIn(
        UPDATE_TASKS,
        lambda catalog: catalog.tracks_tasks,
        _fixed(UPDATE_TASKS_DEFINITION, when="tracks_tasks"),
        _plan_or_show,
    ),
    BuiltIn(
        SHOW_COMPONENT,
        lambda catalog: catalog.shows_components,
        _fixed(SHOW_COMPONENT_DEFINITION, when="shows_components"),
        _plan_or_show,
    ),
    # A child is admitted under a key made of the Run and the call, so a retry after a
    # crash finds the child the first try started; a message may have been delivered
    # already, so it is not sent again.
    BuiltIn(DELEGATE, *_DELEGATE, run_subagent_tool, tool_class=ToolClass.WRITE),
    BuiltIn(SPAWN_SUBAGENT, *_SPAWN, run_subagent_tool, tool_class=ToolClass.WRITE),
    BuiltIn(CHECK_SUBAGENT, *_CHECK, run_subagent_tool),
    BuiltIn(
        MESSAGE_SUBAGENT,
        *_MESSAGE,
        run_subagent_tool,
        tool_class=ToolClass.WRITE,
        safe_to_retry=False,
    ),
    # Forgetting twice forgets once; remembering twice would keep the fact twice.
    BuiltIn(
        REMEMBER,
        lambda catalog: catalog.remembers,
        _fixed(REMEMBER_DEFINITION, when="remembers"),
        _memory,
        tool_class=ToolClass.WRITE,
        safe_to_retry=False,
    ),
    BuiltIn(
        FORGET,
        lambda catalog: catalog.remembers,
        _fixed(FORGET_DEFINITION, when="remembers"),
        _memory,
        tool_class=ToolClass.WRITE,
    ),
    # Last: a program may call any tool offered before it.
    BuiltIn(
        RUN_CODE,
        lambda catalog: catalog.code_execution is not None,
        _offer_program,
        _program,
        tool_class=ToolClass.WRITE,
        safe_to_retry=False,
    ),
)

BUILT_INS: dict[str, BuiltIn] = {entry.name: entry for entry in _ENTRIES}
"""Every built-in tool by name, in the order a turn offers them."""


__all__ = ["BUILT_INS"]
