"""What every phase of one Attempt shares, and the small vocabulary phases speak.

A phase is a function taking the ``AttemptContext`` (plus whatever the previous phase
handed on). It reads the Run's state from ``ctx.journal``, stages records on it, and
answers ``Next.CONTINUE`` or ``Next.STOP`` when it decides how the loop goes on, or
None when it leaves that to the phases after it.
"""

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from enum import Enum
from typing import TYPE_CHECKING

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.messages import Message
from psych_runtime.core.metering import Usage
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.spec import AgentSpec
from psych_runtime.memory.port import MemoryKey
from psych_runtime.runtime.abort import AbortSignal
from psych_runtime.runtime.agent.built_in import BuiltIn
from psych_runtime.runtime.agent.catalog import ToolCatalog
from psych_runtime.runtime.agent.deps import AgentDeps
from psych_runtime.runtime.conversation import Conversation
from psych_runtime.runtime.journal import Journal
from psych_runtime.runtime.model_call import replace_lone_surrogates
from psych_runtime.runtime.settlement import Ending
from psych_runtime.runtime.settlement import settle as settle_run
from psych_runtime.tools.large_results.reader import OutputReader
from psych_runtime.tools.memory import end_user_of

if TYPE_CHECKING:
    from psych_runtime.runtime.agent.finish import Executed

Execute = Callable[["AttemptContext", ToolCallId, str, JsonObject], Awaitable["Executed"]]
"""Runs one call that passed its checks (``execute.execute``)."""

RunNested = Callable[["AttemptContext", Journal, AgentSpec], Awaitable[None]]
"""Runs a child's loop to its end inside this Attempt, on the child's own Journal."""


async def _no_execute(
    ctx: "AttemptContext", call_id: ToolCallId, name: str, arguments: JsonObject
) -> "Executed":
    raise RuntimeError("this Attempt was opened without an executor")


async def _no_nesting(ctx: "AttemptContext", journal: Journal, spec: AgentSpec) -> None:
    raise RuntimeError("this Attempt was opened without a way to run nested children")


EMPTY_USAGE = Usage()
"""Recorded when a provider reported no usage (``usage_reported`` says so)."""


class Next(Enum):
    """How the loop goes on after a phase: another turn, or stop this Attempt."""

    CONTINUE = "continue"
    STOP = "stop"


@dataclass(slots=True)
class AttemptContext:
    """One Attempt of one agent Run: its log, its Spec, its tools and its outside deps.

    Attributes:
        deps: the model, tools, prices and egress the process runs with.
        journal: the only way the Attempt reads and writes the Run's log.
        spec: the Spec the Run pinned.
        abort: fired by the Worker when the Attempt must stop (deadline, shutdown).
        tools: the tools the Spec grants, resolved against the registry.
        reader: the built-in ``read_tool_output`` for this Run.
        conversation: the model's view of the log, rebuilt incrementally each turn.
        history: what the model is shown of the Runs this one continues, first.
        memory_key: whose facts the memory built-ins read and write; None without a
            MemoryStore.
        missing_end_user: why memory cannot be used although it is configured (no
            end user named), or None.
        memory_prompt: the system prompt's section of recalled facts, filled in when
            the Attempt starts.
        memory_prompt_recorded: the same section as the log keeps it: the facts' ids
            without their text, which only the MemoryStore holds.
        execute: runs a call that passed its checks; a program's calls to host tools
            go through it too. Handed in by the loop, so the phases that need it do not
            import the executor (which imports them).
        run_nested: runs an inline child's loop; handed in by the loop for the same
            reason.
    """

    deps: AgentDeps
    journal: Journal
    spec: AgentSpec
    abort: AbortSignal
    tools: ToolCatalog
    reader: OutputReader
    conversation: Conversation = field(default_factory=Conversation)
    history: tuple[Message, ...] = ()
    memory_key: MemoryKey | None = None
    missing_end_user: str | None = None
    memory_prompt: str = ""
    memory_prompt_recorded: str = ""
    execute: Execute = _no_execute
    run_nested: RunNested = _no_nesting

    @classmethod
    def open(
        cls,
        deps: AgentDeps,
        journal: Journal,
        spec: AgentSpec,
        abort: AbortSignal,
        history: tuple[Message, ...] = (),
        *,
        built_ins: Mapping[str, BuiltIn] | None = None,
        execute: Execute = _no_execute,
        run_nested: RunNested = _no_nesting,
    ) -> "AttemptContext":
        """The context for an Attempt about to run ``spec`` on ``journal``'s Run."""
        key: MemoryKey | None = None
        missing: str | None = None
        if deps.memory is not None:
            end_user = end_user_of(journal.state.run_input, deps.end_user_id)
            try:
                key = MemoryKey.of(journal.scope, end_user)
            except ValueError as error:
                missing = str(error)
        return cls(
            history=history,
            deps=deps,
            journal=journal,
            spec=spec,
            abort=abort,
            tools=ToolCatalog(spec, deps.registry, remembers=key is not None, built_ins=built_ins),
            reader=OutputReader(blob=deps.blob, tenant=journal.scope.tenant, run_id=journal.run_id),
            memory_key=key,
            missing_end_user=missing,
            execute=execute,
            run_nested=run_nested,
        )

    def aborted(self) -> bool:
        """Whether the log holds an abort (an interrupt, or the Worker's deadline)."""
        return self.journal.state.aborted


def failure(kind: str, message: str, *, tb: str | None = None) -> ToolFailure:
    """A failure whose text every store can keep, whatever a tool or provider said.

    A message quotes whatever a tool or provider said, which may hold a lone surrogate;
    the record must stay storable whatever the text.
    """
    return ToolFailure(
        kind=kind,
        message=replace_lone_surrogates(message),
        traceback=replace_lone_surrogates(tb) if tb is not None else None,
    )


def settle(
    ctx: AttemptContext,
    state: TerminalState,
    *,
    output: JsonObject | None = None,
    failure: ToolFailure | None = None,
) -> Next:
    """Stage the Run's settlement; the loop stops once it is written."""
    return end(ctx, Ending(state, failure, output=output))


def end(ctx: AttemptContext, ending: Ending) -> Next:
    """Stage the Run's settlement as ``ending`` says; the loop stops once it is written."""
    settle_run(ctx.journal, ending)
    return Next.STOP
