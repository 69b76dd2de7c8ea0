"""The memory phase and built-ins: recall facts when an Attempt starts, keep and drop them.

Facts are recalled once per Attempt, into the system prompt; a recall that fails (the
memory store is down) leaves the section out and the Run goes on, as memory is a help
to the model, not something a Run depends on. ``remember`` and ``forget`` write
through the MemoryStore under the Run's ``MemoryKey`` only, so a model can never read
or touch another person's facts whatever arguments it sends.
"""

import logging
import time

from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import ToolOutcome
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import failure
from psych_runtime.runtime.agent.finish import Executed
from psych_runtime.tools.errors import ToolArgumentsInvalid
from psych_runtime.tools.memory import REMEMBER
from psych_runtime.tools.memory import memory_section
from psych_runtime.tools.memory import read_fact
from psych_runtime.tools.memory import read_fact_id
from psych_runtime.tools.memory import recorded_memory_section
from psych_runtime.tools.memory import shared_section

log = logging.getLogger(__name__)


async def recall(ctx: AttemptContext) -> None:
    """Fill the prompt's section of what is remembered: for every Run, and about its user.

    The Runtime's ``memories`` are shown to every Run; an end user's facts are added
    when the Runtime has a memory store and the Run an end user.
    """
    shared = shared_section(ctx.deps.memories)
    memory, key = ctx.deps.memory, ctx.memory_key
    if memory is None or key is None:
        ctx.memory_prompt = ctx.memory_prompt_recorded = shared
        return
    try:
        facts = await memory.recall(key, limit=ctx.deps.recall_limit)
    except Exception:
        log.warning("run %s: could not recall memories", ctx.journal.run_id, exc_info=True)
        ctx.memory_prompt = ctx.memory_prompt_recorded = shared
        return
    ctx.memory_prompt = _joined(shared, memory_section(facts))
    # The log keeps the facts by id only: their text lives where erase reaches it.
    ctx.memory_prompt_recorded = _joined(shared, recorded_memory_section(facts))


def _joined(*sections: str) -> str:
    return "\n\n".join(section for section in sections if section)


async def run_memory_tool(ctx: AttemptContext, name: str, arguments: JsonObject) -> Executed:
    """Carry out ``remember`` or ``forget`` for the Run's end user."""
    started = time.perf_counter()
    memory, key = ctx.deps.memory, ctx.memory_key
    assert memory is not None and key is not None  # only offered with both
    try:
        if name == REMEMBER:
            fact = await memory.remember(key, read_fact(arguments))
            result: JsonObject = {"remembered": fact.id}
        else:
            result = {"forgotten": await memory.forget(key, read_fact_id(arguments))}
    except (ToolArgumentsInvalid, ValueError) as error:
        refused = failure("invalid_arguments", str(error))
        return Executed(ToolOutcome.ERROR, None, refused, _elapsed(started))
    except Exception as error:
        # The memory store is not the Run's store: its outage fails this call only.
        log.warning("run %s: %s failed", ctx.journal.run_id, name, exc_info=True)
        refused = failure("memory_unavailable", f"{type(error).__name__}: {error}")
        return Executed(ToolOutcome.ERROR, None, refused, _elapsed(started))
    return Executed(ToolOutcome.OK, result, None, _elapsed(started))


def _elapsed(started: float) -> float:
    return round(time.perf_counter() - started, 6)


__all__ = ["recall", "run_memory_tool"]
