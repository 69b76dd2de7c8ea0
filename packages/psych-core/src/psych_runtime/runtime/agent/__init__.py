"""The agent loop, one module per phase of a turn.

``AgentLoop`` (``loop.py``) runs one Attempt of an agent Run as a short list of
phases, each a function in its own module taking the ``AttemptContext``
(``context.py``): the Run's Journal, its Spec, the Worker's abort signal, the tools
the Spec grants (``catalog.py``) and the ``AgentDeps`` (``deps.py``), a frozen value
holding every outside thing a turn touches (model, tool registry, prices, blob store,
HTTP transport, secrets, retry backoff, the store, memory). The loop never sees the
Runtime that built it.

A phase reads the folded state from the Journal, stages records on it, and answers
``Next.CONTINUE`` or ``Next.STOP`` when it decides how the loop goes on (None when it
leaves that to the phases after it). The phases, in the order a turn meets them:

- ``dangling.py``: calls a previous Attempt left open, re-run or closed, once per
  Attempt (closing through ``runtime/open_calls.py``, shared with the Runtime and the
  Worker);
- ``stops.py``: the checks before every turn (abort, suspension, budgets, streaks);
- ``compact.py``: summarising old turns when the prompt grew past the trigger;
- ``model_turn.py``: opening the turn and calling the model, with ``failover.py``
  (fallback models, retries, backoff) and ``cost.py``;
- ``tool_calls.py``: the calls of one answer, each through ``call_checks.py`` (the
  refusals: malformed arguments, unknown or withheld tools, unissued handles,
  repeats, the per-turn cap; ``arguments.py`` parses), ``execute.py`` (code, HTTP and
  ``read_tool_output`` calls, cancellation) and ``finish.py`` (storable results,
  large-result elision and offload). The built-ins with more to them have modules of
  their own that ``execute.py`` dispatches to: ``delegation.py`` (``delegate``, roster
  children run inline), ``background.py`` (composed children, and suspending on them
  when the model answers while they work; ``subagent_calls.py`` holds what both share)
  and ``memory.py`` (recalling facts when the Attempt starts, ``remember``/``forget``).

A capability joins as one more phase or module beside these, not as a branch inside
another: a check that must hold a call for a person's approval sits between the
checks and ``execute`` in ``tool_calls.py`` and stops the turn with ``Next.STOP``
once the Run is suspended (``stops.py`` already stops a suspended Run); a new kind of
call target (a subagent, say) is one more executor that ``execute.py`` dispatches to
by the catalog's kind; a workflow runs its steps with its own loop over the same
``AgentDeps`` and Journal.
"""

from psych_runtime.runtime.agent.deps import AgentDeps
from psych_runtime.runtime.agent.loop import AgentLoop

__all__ = ["AgentDeps", "AgentLoop"]
