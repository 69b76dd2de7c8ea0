"""The tools one Run may call, and what the loop needs to know about each.

A Spec grants code tools (executed from the process's registry) and HTTP tools (data
in the Spec, sent through the egress seam); the built-in ``read_tool_output`` joins
them once the Run has issued a result handle, ``ask_question`` when the Spec lets the
model ask the user, ``load_skill`` when the Spec has skills, and ``update_tasks`` and
``show_component`` when it enables them, ``delegate`` when it has a roster of subagents
and the spawning built-ins when it has a spawn envelope. The catalog answers
every question the phases ask about a tool by name: is it offered this turn, how is it
described to the model, may it run through a cancellation, may it be run again after a
crash.
"""

from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Mapping

from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.narrowing import narrow
from psych_runtime.core.records import JsonObject
from psych_runtime.core.reducer import READ_TOOL_OUTPUT
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.spec import HttpTool
from psych_runtime.core.state import RunStateView
from psych_runtime.runtime.agent.built_in import BuiltIn
from psych_runtime.runtime.agent.built_in import TurnView
from psych_runtime.runtime.prompt import withheld_advisory
from psych_runtime.tools.approval import ToolClass
from psych_runtime.tools.approval import classify
from psych_runtime.tools.deferred import CALL_TOOL
from psych_runtime.tools.http.request import http_tool_definition
from psych_runtime.tools.registry import ToolRegistry
from psych_runtime.tools.skills import load_skill_definition
from psych_runtime.tools.skills import skills_section
from psych_runtime.tools.sources import SourceTool
from psych_runtime.tools.sources import ToolSource
from psych_runtime.tools.subagents import delegate_definition
from psych_runtime.tools.subagents import spawn_definitions


class ToolCatalog:
    """The granted tools of one Spec, resolved against the process's registry.

    Args:
        spec: the Spec whose tools are granted.
        registry: the code tools this process can execute.
        remembers: offer ``remember`` and ``forget`` (a MemoryStore is configured and
            the Run's end user is known).
        built_ins: the runtime's own tools (``built_ins.BUILT_INS``), in the order a
            turn offers them; the catalog reads what each entry says of itself.
    """

    __slots__ = (
        "_built_ins",
        "_http_definitions",
        "_interruptible",
        "_registry",
        "_subagent_definitions",
        "asks_questions",
        "code_execution",
        "deferred",
        "granted",
        "http_tools",
        "offered_now",
        "permitted",
        "prompt_sections",
        "remembers",
        "remote",
        "remote_advisories",
        "shows_components",
        "skill_definition",
        "skills",
        "tracks_tasks",
    )

    def __init__(
        self,
        spec: AgentSpec,
        registry: ToolRegistry,
        *,
        remembers: bool = False,
        built_ins: Mapping[str, BuiltIn] | None = None,
    ) -> None:
        self._registry = registry
        self._built_ins: Mapping[str, BuiltIn] = built_ins or {}
        self._interruptible = {tool.name: tool.interruptible for tool in spec.tools}
        code_tools = tuple(tool.name for tool in spec.tools if tool.kind == "code")
        self.http_tools: dict[str, HttpTool] = {
            tool.name: tool for tool in spec.tools if tool.kind == "http"
        }
        self._http_definitions = {
            name: http_tool_definition(tool) for name, tool in self.http_tools.items()
        }
        self.granted: tuple[str, ...] = (*code_tools, *self.http_tools)
        self.asks_questions = spec.suspension.may_ask_questions
        self.skills = spec.skills
        self.skill_definition = load_skill_definition(spec.skills) if spec.skills else None
        # Fixed for the whole Run, so built once, not every turn.
        self.prompt_sections: tuple[str, ...] = (skills_section(spec.skills),)
        self.tracks_tasks = spec.tasks_enabled
        self.shows_components = spec.components_enabled
        subagent_definitions: tuple[ToolDefinition, ...] = (
            (delegate_definition(spec),) if spec.subagents else ()
        )
        if spec.spawn is not None:
            subagent_definitions += spawn_definitions(spec.spawn, spec)
        # Asked for by name several times a turn, so looked up, not searched.
        self._subagent_definitions = {d.name: d for d in reversed(subagent_definitions)}
        self.remembers = remembers
        execution = spec.code_execution
        self.code_execution = execution if execution is not None and execution.enabled else None
        self.offered_now: frozenset[str] = frozenset()
        """What the latest turn offered; a program's bindings are narrowed to it."""
        self.remote: dict[str, tuple[ToolSource, SourceTool]] = {}
        """This turn's tools from remote sources, by qualified name."""
        self.remote_advisories: tuple[str, ...] = ()
        self.deferred: dict[str, SourceTool] = {}
        """This turn's remote tools reached through ``call_tool`` rather than described."""
        self.permitted: Collection[str] | None = None
        """The tenant's plane as this turn read it; remote calls are narrowed by it again."""

    def interruptible(self, name: str) -> bool:
        """Whether a call may be abandoned half way when the Attempt is cancelled."""
        remote = self.remote.get(name)
        if remote is not None:
            return remote[1].interruptible
        built_in = self._built_ins.get(name)
        if built_in is not None:
            return built_in.interruptible
        return self._interruptible.get(name, True)

    def executable(self, name: str) -> bool:
        """Whether this process can execute ``name`` (registered code, HTTP, or remote)."""
        return (
            self._registry.get(name) is not None or name in self.http_tools or name in self.remote
        )

    def safe_to_retry(self, name: str, arguments: JsonObject | None = None) -> bool:
        """Whether a call left in doubt by a crash may simply be executed again.

        Reading a result back changes nothing; an HTTP GET is taken at its word as
        HTTP's safe method; a code tool must have been registered idempotent. Any
        other HTTP method may have taken effect and is reported ``unknown`` instead.
        """
        http = self.http_tools.get(name)
        if http is not None:
            return http.method == "GET"
        target = self._call_target(name, arguments)
        if target is not None:
            return target.safe_to_retry
        remote = self.remote.get(name)
        if remote is not None:
            return remote[1].safe_to_retry
        built_in = self._built_ins.get(name)
        if built_in is not None:
            return built_in.safe_to_retry
        registered = self._registry.get(name)
        return registered is not None and registered.idempotent

    def _call_target(self, name: str, arguments: JsonObject | None) -> SourceTool | None:
        """The deferred tool a ``call_tool`` names, when it names one this turn."""
        if name != CALL_TOOL or arguments is None:
            return None
        target = arguments.get("name")
        return self.deferred.get(target) if isinstance(target, str) else None

    def tool_class(self, name: str) -> ToolClass:
        """How much harm a call of ``name`` could do, for the approval rules.

        An HTTP tool's class follows its method (GET read-only, DELETE destructive,
        the rest write); a code tool is what its registration annotations say
        (nothing said means write); reading a result back is read-only.
        """
        built_in = self._built_ins.get(name)
        if built_in is not None:
            return built_in.tool_class
        http = self._http_definitions.get(name)
        if http is not None:
            return classify(http.annotations)
        remote = self.remote.get(name)
        if remote is not None:
            return classify(remote[1].definition.annotations)
        registered = self._registry.get(name)
        return classify(registered.annotations if registered is not None else ())

    def withheld_by_streak(self, name: str, state: RunStateView, threshold: int) -> int | None:
        """The failure streak that took ``name`` away, or None when it was not withheld.

        Only a tool the model was once offered can have been withheld; any other name
        is simply unknown.
        """
        streak = state.failure_streaks.get(name, 0)
        known = name in self.granted or name in self.remote or name == READ_TOOL_OUTPUT
        if streak >= threshold and known:
            return streak
        return None

    def offered(
        self,
        state: RunStateView,
        threshold: int,
        *,
        permitted: Collection[str] | None = None,
    ) -> tuple[tuple[ToolDefinition, ...], list[str]]:
        """The tools offered this turn, and the advisories about those withheld.

        A tool that failed ``threshold`` times in a row is withheld, and the model is
        told so in the system prompt. ``permitted`` is the tenant's plane (patterns;
        None permits everything); the built-ins are the runtime's own and always pass.
        """
        withheld = {t for t, n in state.failure_streaks.items() if n >= threshold}
        names = narrow(
            self._registry.names.union(self._http_definitions),
            granted=self.granted,
            permitted=permitted,
            withheld=withheld,
        )
        reader_offered = bool(state.result_handles)
        advisories = [
            withheld_advisory(tool, state.failure_streaks[tool])
            for tool in sorted(withheld)
            if tool in self.granted
            or tool in self.remote
            or (reader_offered and tool == READ_TOOL_OUTPUT)
        ]
        advisories.extend(self.remote_advisories)
        definitions = list(self._definitions(names))
        definitions += (
            tool.definition
            for _, tool in self.remote.values()
            if tool.name not in withheld and tool.name not in self.deferred
        )
        held = frozenset(withheld)
        for built_in in self._built_ins.values():
            if not built_in.available(self):
                continue
            definition = built_in.offer(TurnView(self, state, held, tuple(definitions)))
            if definition is not None:
                definitions.append(definition)
        self.offered_now = frozenset(d.name for d in definitions)
        return tuple(definitions), advisories

    def built_in(self, name: str) -> bool:
        """Whether ``name`` is one of the runtime's own tools this Run has."""
        built_in = self._built_ins.get(name)
        return built_in is not None and built_in.available(self)

    def subagent_definition(self, name: str) -> ToolDefinition | None:
        """How the Spec's roster or spawn envelope describes ``name``, if it gives it."""
        return self._subagent_definitions.get(name)

    def _definitions(self, names: Iterable[str]) -> Iterable[ToolDefinition]:
        for name in names:
            # The Spec allows one tool per name, so an HTTP tool's name is never also
            # a granted code tool.
            http = self._http_definitions.get(name)
            if http is not None:
                yield http
                continue
            registered = self._registry.get(name)
            if registered is not None:
                yield registered.definition()
