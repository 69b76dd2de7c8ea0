"""What the loop knows about one of its own tools: when it is offered, how it runs.

The runtime's own tools (``read_tool_output``, ``load_skill``, ``delegate``,
``remember``, ``run_code``...) are each one ``BuiltIn`` in the table of
``built_ins.py``. The catalog asks the table which of them a turn offers and how
each is described; the executor asks it how to run one; the approval gate and the
recovery after a crash ask it how harmful a call is and whether it may simply run
again. A new built-in tool is one entry there and nowhere else.

This module holds only the shape of an entry, so the catalog can read the table it is
handed without importing the phases the entries run.
"""

from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.records import JsonObject
from psych_runtime.core.state import RunStateView
from psych_runtime.tools.approval import ToolClass

if TYPE_CHECKING:
    from psych_runtime.runtime.agent.catalog import ToolCatalog
    from psych_runtime.runtime.agent.context import AttemptContext
    from psych_runtime.runtime.agent.finish import Executed

Runner = Callable[["AttemptContext", ToolCallId, str, JsonObject], Awaitable["Executed"]]
"""Runs one call of a built-in and says, as data, what it amounted to."""

Available = Callable[["ToolCatalog"], bool]
"""Whether a Run has a built-in at all."""


@dataclass(frozen=True, slots=True)
class TurnView:
    """What a built-in's offer looks at when a turn's tools are assembled.

    Attributes:
        catalog: the Run's tool catalog (what the Spec enables, this turn's remote tools).
        state: the Run's folded state.
        withheld: tools taken away by a failure streak this turn.
        before: the definitions offered so far this turn, in order.
    """

    catalog: "ToolCatalog"
    state: RunStateView
    withheld: frozenset[str]
    before: tuple[ToolDefinition, ...]


Offer = Callable[[TurnView], ToolDefinition | None]
"""A built-in's definition for a turn, or None when the turn does not offer it."""


@dataclass(frozen=True, slots=True)
class BuiltIn:
    """One of the runtime's own tools.

    Attributes:
        name: the tool's name (reserved: no registered or Spec tool may take it).
        available: whether the Run has the tool at all (its Spec enables it, the
            process can serve it); a call of one it lacks is an unknown tool.
        offer: its definition for this turn, or None when the turn does not offer it.
        run: how a call is executed; None when the tool phase handles the call itself
            (``ask_question`` suspends the Run, ``call_tool`` is a remote call).
        tool_class: how much harm a call could do, for the approval rules.
        safe_to_retry: whether a call left in doubt by a crash is simply run again.
        interruptible: whether a call may be abandoned half way when the Attempt stops.
    """

    name: str
    available: Available
    offer: "Offer"
    run: Runner | None
    tool_class: ToolClass = ToolClass.READ_ONLY
    safe_to_retry: bool = True
    interruptible: bool = True


__all__ = ["Available", "BuiltIn", "Offer", "Runner", "TurnView"]
