"""The Runtime: the model, tools and prices every Attempt in a process is executed with."""

import asyncio
import logging
from collections import OrderedDict
from dataclasses import dataclass

from psych_runtime.core.errors import InvalidArgument
from psych_runtime.core.errors import VersionNotFound
from psych_runtime.core.ids import StepId
from psych_runtime.core.ids import VersionHash
from psych_runtime.core.records import JsonObject
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.spec import WorkflowSpec
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.model.port import ModelClient
from psych_runtime.plugins.installed import installed_telemetry
from psych_runtime.plugins.installed import tool_source_factories
from psych_runtime.runtime.abort import AbortSignal
from psych_runtime.runtime.agent import AgentDeps
from psych_runtime.runtime.agent import AgentLoop
from psych_runtime.runtime.history import continuation_history
from psych_runtime.runtime.journal import Journal
from psych_runtime.runtime.settings import RuntimeSettings
from psych_runtime.runtime.settlement import settle_cut_short
from psych_runtime.runtime.workflow.agent_step import replay_source
from psych_runtime.runtime.workflow.agent_step import run_agent_step
from psych_runtime.runtime.workflow.context import AgentOutcome
from psych_runtime.runtime.workflow.context import WorkflowContext
from psych_runtime.runtime.workflow.engine import WorkflowEngine
from psych_runtime.sandbox.port import Sandbox
from psych_runtime.store.port import RunHeader
from psych_runtime.store.port import Store
from psych_runtime.telemetry.port import Telemetry
from psych_runtime.tools.access import PermitAll
from psych_runtime.tools.approval import AllowAll
from psych_runtime.tools.approval import ApprovalRules
from psych_runtime.tools.code import CodeSandboxes
from psych_runtime.tools.registry import ToolRegistry
from psych_runtime.tools.secrets import SecretResolver
from psych_runtime.tools.sources import ToolSource

log = logging.getLogger(__name__)


def _log_outcome(work: "asyncio.Future[None]") -> None:
    """Retrieve an abandoned loop's outcome so a failure is logged, not lost."""
    if work.cancelled():
        return
    error = work.exception()
    if error is not None and isinstance(error, Exception):
        log.error("an abandoned loop ended with %r", error)


_SPEC_CACHE_SIZE = 256


def installed_sources(
    http: HttpTransport | None,
    secrets: SecretResolver | None,
    *,
    skip: frozenset[str] = frozenset(),
    sandbox: Sandbox | None = None,
) -> tuple[ToolSource, ...]:
    """One tool source per installed factory, built with the Runtime's egress and secrets.

    Args:
        http: the Runtime's transport.
        secrets: the Runtime's secret resolver.
        skip: capabilities (``"mcp_servers"``, ``"a2a_peers"``) whose factory is not
            built, because the Runtime was given a source of its own for them.
        sandbox: the Runtime's default sandbox, for factories that start processes.

    Raises:
        TypeError: a factory built something that is not a ``ToolSource``.
    """
    built: list[ToolSource] = []
    for factory in tool_source_factories():
        if factory.capability in skip:
            continue
        if factory.takes_sandbox:
            source = factory.build(http=http, secrets=secrets, sandbox=sandbox)
        else:
            source = factory.build(http=http, secrets=secrets)
        if not isinstance(source, ToolSource):
            raise TypeError(
                f"tool source {factory.name!r} from {factory.package} built "
                f"{type(source).__name__}, which is not a ToolSource"
            )
        built.append(source)
    return tuple(built)


@dataclass(eq=False)
class _Core:
    """The three things a Runtime cannot do without; they come first."""

    store: Store
    model: ModelClient
    registry: ToolRegistry


def _check_settings(settings: RuntimeSettings) -> None:
    """Refuse settings no Runtime can run with, before anything is built from them."""
    for name in ("resolver", "executor"):
        if getattr(settings, name) is not None:
            raise InvalidArgument(
                f"Runtime: {name}= is not a seam of this runtime; give tools outside the "
                "process as tool_sources=[...] (or mcp= / a2a=), and which tools a tenant "
                "may use as access= (see docs/migrating.md)",
                argument=name,
            )
    if settings.blob_offload_bytes < 1:
        raise InvalidArgument(
            f"Runtime: blob_offload_bytes must be positive, got {settings.blob_offload_bytes}",
            argument="blob_offload_bytes",
        )
    if settings.recall_limit < 1:
        raise InvalidArgument(
            f"Runtime: recall_limit must be positive, got {settings.recall_limit}",
            argument="recall_limit",
        )
    if settings.approval_selectors and settings.approvals is not None:
        raise InvalidArgument(
            "Runtime: give approval_selectors= or approvals=ApprovalRules(...), not both",
            argument="approval_selectors",
        )
    if isinstance(settings.approval_selectors, str):
        raise InvalidArgument(
            "Runtime: approval_selectors takes a collection of selectors, not one string",
            argument="approval_selectors",
        )
    if settings.sandbox is not None and settings.sandboxes:
        raise InvalidArgument(
            "Runtime: give sandbox= (the default profile) or sandboxes={...}, not both",
            argument="sandbox",
        )
    if isinstance(settings.memories, str) or not all(
        isinstance(fact, str) and fact.strip() for fact in settings.memories
    ):
        raise InvalidArgument(
            "Runtime: memories takes a collection of non-empty strings", argument="memories"
        )


def _sources(runtime: "Runtime") -> tuple[ToolSource, ...]:
    """The tool sources in use: given or installed, with ``mcp`` and ``a2a`` in their place."""
    own = {
        capability: source
        for capability, source in (("mcp_servers", runtime.mcp), ("a2a_peers", runtime.a2a))
        if source is not None
    }
    if runtime.tool_sources is not None:
        given = tuple(runtime.tool_sources)
    else:
        default_sandbox = runtime.sandbox or (runtime.sandboxes or {}).get("default")
        given = installed_sources(
            runtime.http, runtime.secrets, skip=frozenset(own), sandbox=default_sandbox
        )
    return (*given, *(source for source in own.values() if source not in given))


@dataclass(eq=False)
class Runtime(RuntimeSettings, _Core):
    """The model, tools, prices and store one process executes Runs with.

    Holds no per-Run state, so one instance serves every Attempt of every Worker in
    the process. It is the ``runner`` a ``Worker`` calls for each claimed Run.

    Args:
        store: where Runs and Versions live.
        model: the model client every agent call goes through.
        registry: the code tools this process can execute.

    Every other argument is a setting, documented once on ``RuntimeSettings``.

    Raises:
        InvalidArgument: a setting is out of range (``blob_offload_bytes`` or
            ``recall_limit`` not positive), two spellings of one setting are given
            (``approval_selectors`` with ``approvals``, ``sandbox`` with
            ``sandboxes``), or ``resolver`` / ``executor`` is anything but None.
    """

    def __post_init__(self) -> None:
        _check_settings(self)
        # Resolved once: what the agent loop is handed for every Attempt.
        if self.approvals is None:
            self.approvals = ApprovalRules(selectors=tuple(self.approval_selectors))
        if self.policy is None:
            self.policy = AllowAll()
        if self.access is None:
            self.access = PermitAll()
        profiles = dict(self.sandboxes or {})
        if self.sandbox is not None:
            profiles["default"] = self.sandbox
        self._code_sandboxes = CodeSandboxes(profiles, self.code_limits)
        self.tool_sources = _sources(self)
        self.memories = tuple(self.memories)
        self._specs: OrderedDict[str, AgentSpec | WorkflowSpec] = OrderedDict()
        self._telemetry: Telemetry = (
            self.telemetry if self.telemetry is not None else installed_telemetry()
        )
        self.telemetry = self._telemetry

    def retry_delay(self, retries_used: int, retry_after: float | None) -> float:
        """How long to wait before the next retry of a transient model failure."""
        if retry_after is not None:
            return max(0.0, min(retry_after, self.retry_max_seconds))
        return min(self.retry_base_seconds * 2.0**retries_used, self.retry_max_seconds)

    def _agent_deps(self) -> AgentDeps:
        """What the agent loop runs an Attempt with, as this Runtime holds it now."""
        assert self.approvals is not None and self.policy is not None
        assert self.access is not None and self.tool_sources is not None
        return AgentDeps(
            registry=self.registry,
            model=self.model,
            prices=self.prices,
            cost_policy=self.cost_policy,
            retry_delay=self.retry_delay,
            blob=self.blob,
            blob_offload_bytes=self.blob_offload_bytes,
            http=self.http,
            secrets=self.secrets,
            store=self.store,
            approvals=self.approvals,
            policy=self.policy,
            access=self.access,
            memory=self.memory,
            end_user_id=self.end_user_id,
            recall_limit=self.recall_limit,
            sources=tuple(self.tool_sources),
            catalogue_budget=self.catalogue_budget_chars,
            sandboxes=self._code_sandboxes,
            memories=tuple(self.memories),
        )

    async def load_spec(self, version_hash: VersionHash) -> AgentSpec | WorkflowSpec:
        """The Spec a Run pinned; Versions are immutable, so they are cached freely."""
        cached = self._specs.get(version_hash)
        if cached is not None:
            self._specs.move_to_end(version_hash)
            return cached
        version = await self.store.get_version(version_hash)
        if version is None:
            raise VersionNotFound(version_hash)
        self._specs[version_hash] = version.spec
        if len(self._specs) > _SPEC_CACHE_SIZE:
            self._specs.popitem(last=False)
        return version.spec

    async def __call__(self, journal: Journal, header: RunHeader, abort: AbortSignal) -> None:
        """Execute one Attempt of the Run ``journal`` writes to."""
        spec = await self.load_spec(header.version_hash)
        if isinstance(spec, WorkflowSpec):
            engine = await self._workflow(journal, spec, abort)
            work = asyncio.ensure_future(engine.run())
        else:
            history = await continuation_history(
                self.store,
                journal.state.continues_run_id,
                journal.scope.tenant,
                spec.limits.max_history_records,
            )
            loop = AgentLoop(self._agent_deps(), journal, spec, abort, history)
            work = asyncio.ensure_future(loop.run())
        stopper = asyncio.ensure_future(abort.wait())
        try:
            await asyncio.wait({work, stopper}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            work.cancel()
            work.add_done_callback(_log_outcome)
            raise
        finally:
            stopper.cancel()
        if work.done():
            work.result()
        else:
            # The abort fired while the loop was still working: cancel it and let it
            # unwind (an uninterruptible tool call finishes first; the supervisor's grace
            # period bounds how long that may take).
            work.cancel()
            try:
                await work
            except asyncio.CancelledError:
                pass
            except Exception:
                log.exception("run %s: the loop failed while unwinding", journal.run_id)
        reason = abort.reason
        if reason is not None and reason.ends_run and not journal.state.settled:
            await settle_cut_short(journal, reason)

    async def _workflow(
        self, journal: Journal, spec: WorkflowSpec, abort: AbortSignal
    ) -> WorkflowEngine:
        """The engine for one Attempt of a workflow Run."""
        deps = self._agent_deps()

        async def run_agent(
            agent: AgentSpec, sid: StepId, message: str, data: JsonObject
        ) -> AgentOutcome:
            return await run_agent_step(self.store, deps, journal, abort, agent, sid, message, data)

        replay = await replay_source(self.store, journal.state, spec)
        return WorkflowEngine(WorkflowContext(deps, journal, spec, abort, run_agent, replay=replay))
