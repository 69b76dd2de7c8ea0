"""The Runtime: the model, tools and prices every Attempt in a process is executed with."""

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Mapping, Sequence

from psych_runtime.blob.port import BlobStore
from psych_runtime.core.errors import VersionNotFound
from psych_runtime.core.ids import StepId, VersionHash
from psych_runtime.core.records import JsonObject
from psych_runtime.core.spec import AgentSpec, WorkflowSpec
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.memory.port import MemoryStore
from psych_runtime.model.port import ModelClient
from psych_runtime.model.pricing import CostPolicy, PriceResolver
from psych_runtime.plugins.urls import installed_telemetry, tool_source_factories
from psych_runtime.runtime.abort import AbortSignal
from psych_runtime.runtime.agent import AgentDeps, AgentLoop
from psych_runtime.runtime.history import continuation_history
from psych_runtime.runtime.journal import Journal
from psych_runtime.runtime.settlement import settle_cut_short
from psych_runtime.runtime.workflow.agent_step import replay_source, run_agent_step
from psych_runtime.runtime.workflow.context import AgentOutcome, WorkflowContext
from psych_runtime.runtime.workflow.engine import WorkflowEngine
from psych_runtime.sandbox.port import ResolvedLimits, Sandbox
from psych_runtime.store.port import RunHeader, Store
from psych_runtime.telemetry.port import Telemetry
from psych_runtime.tools.access import PermitAll, TenantAccess
from psych_runtime.tools.approval import AllowAll, ApprovalRules, Policy
from psych_runtime.tools.code import DEFAULT_HARD_LIMITS, CodeSandboxes
from psych_runtime.tools.deferred import DEFAULT_CATALOGUE_BUDGET_CHARS
from psych_runtime.tools.large_results.render import DEFAULT_OFFLOAD_BYTES
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
    http: HttpTransport | None, secrets: SecretResolver | None
) -> tuple[ToolSource, ...]:
    """One tool source per installed factory, built with the Runtime's egress and secrets.

    Raises:
        TypeError: a factory built something that is not a ``ToolSource``.
    """
    built: list[ToolSource] = []
    for factory in tool_source_factories():
        source = factory.build(http=http, secrets=secrets)
        if not isinstance(source, ToolSource):
            raise TypeError(
                f"tool source {factory.name!r} from {factory.package} built "
                f"{type(source).__name__}, which is not a ToolSource"
            )
        built.append(source)
    return tuple(built)


class Runtime:
    """The model, tools, prices and store one process executes Runs with.

    Holds no per-Run state, so one instance serves every Attempt of every Worker in
    the process. It is the ``runner`` a ``Worker`` calls for each claimed Run.

    Args:
        store: where Runs and Versions live.
        model: the model client every agent call goes through.
        registry: the code tools this process can execute.
        prices: a price table; None records every cost as unknown (``None``).
        cost_policy: which figure wins when a provider reports its own cost.
        retry_base_seconds: first delay before retrying a transient model failure;
            doubled per retry up to ``retry_max_seconds`` unless the provider said how
            long to wait.
        retry_max_seconds: ceiling for that delay.
        blob: where tool results too large for a log record are kept. Without one, a
            result above ``blob_offload_bytes`` fails its call with
            ``blob_store_required`` rather than bloating the log.
        blob_offload_bytes: results whose rendered size is strictly above this go to
            ``blob``. The default, 300 000, stays under DynamoDB's 400 KB item cap
            with room for the rest of the record; raise it only if every store you use
            holds bigger records. Separate from the Spec's ``large_result_bytes``,
            which decides what the model is shown rather than where bytes live.
        http: the transport every Spec ``HttpTool`` call is sent through, with the
            Run's Scope, so its ``EgressPolicy`` judges each request. Without one, an
            HTTP tool call fails with ``http_transport_required`` (the Run goes on).
            The Runtime does not close it; whoever built it does.
        secrets: where an HTTP tool's ``credential`` name is turned into the secret
            sent as ``Authorization: Bearer ...``. Without one (or when it finds
            nothing), such a call fails with ``missing_credential`` and is not sent.
        approvals: which tool calls wait for a person (``resume()`` decides them);
            by default none do.
        policy: the consumer's allow / deny / ask judgement of each call, asked
            before the approval rules; ``AllowAll`` by default.
        access: which tools each tenant may use, asked every turn (patterns, or None
            for everything); ``PermitAll`` by default. A lookup that raises permits
            nothing.
        memory: where facts about end users are kept between Runs. With one, every
            agent Run needs an end user (``dispatch(..., end_user_id=...)`` or
            ``end_user_id`` here); its facts are shown in the system prompt and the
            model may ``remember`` and ``forget`` them. A Run without an end user is
            settled ``failed`` (``end_user_required``) before its first turn.
        end_user_id: the end user of Runs whose input names none (a single-user
            application); leave it None when Runs serve different people.
        recall_limit: how many of an end user's newest facts the prompt shows.
        tool_sources: where tools outside the process (MCP servers, A2A peers) are
            resolved every turn and called. None builds one of each installed kind
            (``psych-mcp`` offers MCP servers) with this Runtime's ``http`` transport
            and ``secrets``; pass a list to configure them yourself, or ``()`` for none.
        sandboxes: where ``run_code`` programs run, by the Spec's ``profile`` name
            (``default`` when it names none); a backend from ``psych-sandbox``. Without
            one, a ``run_code`` call fails ``sandbox_unavailable`` as data.
        code_limits: the most any Spec's programs may use; a Spec asking for more
            gets these.
        catalogue_budget_chars: characters of remote tool descriptions above which
            the tools of servers that allow it are deferred behind ``list_tools``,
            ``get_tool_info`` and ``call_tool`` instead of described every turn.
        telemetry: where the spans and metrics of every Run go (a ``Worker`` running
            this Runtime uses it). None uses the installed adapter (``psych-otel``),
            or records nothing when there is none.

    Raises:
        ValueError: ``blob_offload_bytes`` or ``recall_limit`` is not positive.
    """

    def __init__(
        self,
        store: Store,
        model: ModelClient,
        registry: ToolRegistry,
        *,
        prices: PriceResolver | None = None,
        cost_policy: CostPolicy = "prefer_provider",
        retry_base_seconds: float = 0.5,
        retry_max_seconds: float = 30.0,
        blob: BlobStore | None = None,
        blob_offload_bytes: int = DEFAULT_OFFLOAD_BYTES,
        http: HttpTransport | None = None,
        secrets: SecretResolver | None = None,
        approvals: ApprovalRules | None = None,
        policy: Policy | None = None,
        access: TenantAccess | None = None,
        memory: MemoryStore | None = None,
        end_user_id: str | None = None,
        recall_limit: int = 50,
        tool_sources: Sequence[ToolSource] | None = None,
        catalogue_budget_chars: int = DEFAULT_CATALOGUE_BUDGET_CHARS,
        sandboxes: Mapping[str, Sandbox] | None = None,
        code_limits: ResolvedLimits = DEFAULT_HARD_LIMITS,
        telemetry: Telemetry | None = None,
    ) -> None:
        if blob_offload_bytes < 1:
            raise ValueError(f"blob_offload_bytes must be positive, got {blob_offload_bytes}")
        if recall_limit < 1:
            raise ValueError(f"recall_limit must be positive, got {recall_limit}")
        self.store = store
        self.model = model
        self.registry = registry
        self.prices = prices
        self.cost_policy: CostPolicy = cost_policy
        self.retry_base_seconds = retry_base_seconds
        self.retry_max_seconds = retry_max_seconds
        self.blob = blob
        self.blob_offload_bytes = blob_offload_bytes
        self.http = http
        self.secrets = secrets
        self.approvals = approvals if approvals is not None else ApprovalRules()
        self.policy: Policy = policy if policy is not None else AllowAll()
        self.access: TenantAccess = access if access is not None else PermitAll()
        self.memory = memory
        self.end_user_id = end_user_id
        self.recall_limit = recall_limit
        self.catalogue_budget_chars = catalogue_budget_chars
        self.sandboxes = CodeSandboxes(dict(sandboxes or {}), code_limits)
        self.tool_sources: tuple[ToolSource, ...] = (
            tuple(tool_sources) if tool_sources is not None else installed_sources(http, secrets)
        )
        self._specs: OrderedDict[str, AgentSpec | WorkflowSpec] = OrderedDict()
        self.telemetry: Telemetry = telemetry if telemetry is not None else installed_telemetry()

    def retry_delay(self, retries_used: int, retry_after: float | None) -> float:
        """How long to wait before the next retry of a transient model failure."""
        if retry_after is not None:
            return max(0.0, min(retry_after, self.retry_max_seconds))
        return min(self.retry_base_seconds * 2.0**retries_used, self.retry_max_seconds)

    def _agent_deps(self) -> AgentDeps:
        """What the agent loop runs an Attempt with, as this Runtime holds it now."""
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
            sources=self.tool_sources,
            catalogue_budget=self.catalogue_budget_chars,
            sandboxes=self.sandboxes,
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
