"""Every setting of a ``Runtime`` and of a ``Worker``, declared and documented once.

``Runtime`` and ``Worker`` are dataclasses that extend these: their own fields (the
store, the model and the registry; the store and the runner) come first, then every
setting here in the same order and of the same kind (the Runtime's first seventeen
may be passed by position, as the reference API allows; the rest by keyword only).
``session()`` takes the same settings grouped in a ``RuntimeSettings`` and a
``WorkerSettings`` and hands each field on as the keyword of the same name. Nothing
else declares them, so the three can never disagree.
"""

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import KW_ONLY
from dataclasses import dataclass

from psych_runtime.blob.port import BlobStore
from psych_runtime.core.ids import WorkerId
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.memory.port import MemoryStore
from psych_runtime.model.pricing import CostPolicy
from psych_runtime.model.pricing import PriceResolver
from psych_runtime.sandbox.port import ResolvedLimits
from psych_runtime.sandbox.port import Sandbox
from psych_runtime.telemetry.port import Telemetry
from psych_runtime.tools.access import TenantAccess
from psych_runtime.tools.approval import ApprovalRules
from psych_runtime.tools.approval import Policy
from psych_runtime.tools.code import DEFAULT_HARD_LIMITS
from psych_runtime.tools.deferred import DEFAULT_CATALOGUE_BUDGET_CHARS
from psych_runtime.tools.large_results.render import DEFAULT_OFFLOAD_BYTES
from psych_runtime.tools.secrets import SecretResolver
from psych_runtime.tools.sources import ToolSource


@dataclass(eq=False)
class RuntimeSettings:
    """How Runs are executed: prices, approvals, memory, tools outside the process...

    Every field is also the ``Runtime`` keyword of the same name, with this meaning.

    Attributes:
        resolver: accepted for code written against the reference API only as None;
            a tool resolver of one's own is not a seam here. Tools outside the process
            come from ``tool_sources`` (or ``mcp`` / ``a2a``); which tools a tenant may
            use, from ``access``.
        executor: likewise only None; calls are executed by the registry (code
            tools), the ``http`` transport (HTTP tools) and the tool sources.
        prices: a price table; without one every cost is recorded as unknown (None).
        cost_policy: which figure wins when a provider reports its own cost.
        memories: facts every Run of this process is shown in its system prompt
            (process-wide knowledge, no end user needed); an end user's own facts come
            from ``memory``.
        policy: the consumer's allow / deny / ask judgement of each call, asked before
            the approval rules; ``AllowAll`` by default.
        approval_selectors: shorthand for ``approvals=ApprovalRules(selectors=...)``:
            ``@read-only``, ``@write``, ``@destructive`` or tool names whose calls wait
            for a person. Give this or ``approvals``, not both.
        telemetry: where the spans and metrics of every Run go (a ``Worker`` running
            this Runtime uses it). None uses the installed adapter (``psych-otel``),
            or records nothing when there is none.
        sandbox: shorthand for ``sandboxes={"default": sandbox}``: where ``run_code``
            programs run. Give this or ``sandboxes``, not both.
        memory: where facts about end users are kept between Runs. With one, every
            agent Run needs an end user (``dispatch(..., end_user_id=...)`` or
            ``end_user_id`` here); its facts are shown in the system prompt and the
            model may ``remember`` and ``forget`` them. A Run without an end user is
            settled ``failed`` (``end_user_required``) before its first turn.
        end_user_id: the end user of Runs whose input names none (a single-user
            application); leave it None when Runs serve different people.
        mcp: the MCP tool source (``psych_mcp.McpTools`` over one process-wide
            ``McpPool``); it takes the place of the one ``psych-mcp`` would build.
        a2a: the A2A tool source (``psych_a2a.A2ATools``); it takes the place of the
            one ``psych-a2a`` would build.
        blob: where tool results too large for a log record are kept. Without one, a
            result above ``blob_offload_bytes`` fails its call with
            ``blob_store_required`` rather than bloating the log.
        catalogue_budget_chars: characters of remote tool descriptions above which the
            tools of servers that allow it are deferred behind ``list_tools``,
            ``get_tool_info`` and ``call_tool`` instead of described every turn.
        blob_offload_bytes: results whose rendered size is strictly above this go to
            ``blob``. The default, 300 000, stays under DynamoDB's 400 KB item cap with
            room for the rest of the record; raise it only if every store you use holds
            bigger records. Separate from the Spec's ``large_result_bytes``, which
            decides what the model is shown rather than where bytes live.
        http: the transport every Spec ``HttpTool`` call is sent through, with the
            Run's Scope, so its ``EgressPolicy`` judges each request. Without one, an
            HTTP tool call fails with ``http_transport_required`` (the Run goes on).
            It is not closed by the Runtime; whoever built it does.
        retry_base_seconds: first delay before retrying a transient model failure;
            doubled per retry up to ``retry_max_seconds`` unless the provider said how
            long to wait.
        retry_max_seconds: ceiling for that delay.
        secrets: where an HTTP tool's ``credential`` name is turned into the secret
            sent as ``Authorization: Bearer ...``. Without one (or when it finds
            nothing), such a call fails with ``missing_credential`` and is not sent.
        approvals: which tool calls wait for a person (``resume()`` decides them); by
            default none do.
        access: which tools each tenant may use, asked every turn (patterns, or None
            for everything); ``PermitAll`` by default. A lookup that raises permits
            nothing.
        recall_limit: how many of an end user's newest facts the prompt shows.
        tool_sources: where tools outside the process (MCP servers, A2A peers) are
            resolved every turn and called. None builds one of each installed kind
            (``psych-mcp`` offers MCP servers) with this Runtime's ``http`` transport
            and ``secrets``; pass a list to configure them yourself, or ``()`` for
            none. ``mcp`` and ``a2a`` are added to it.
        sandboxes: where ``run_code`` programs run, by the Spec's ``profile`` name
            (``default`` when it names none); a backend from ``psych-sandbox``.
            Without one, a ``run_code`` call fails ``sandbox_unavailable`` as data.
        code_limits: the most any Spec's programs may use; a Spec asking for more gets
            these.
    """

    resolver: None = None
    executor: None = None
    prices: PriceResolver | None = None
    cost_policy: CostPolicy = "prefer_provider"
    memories: Sequence[str] = ()
    policy: Policy | None = None
    approval_selectors: Sequence[str] = ()
    telemetry: Telemetry | None = None
    sandbox: Sandbox | None = None
    memory: MemoryStore | None = None
    end_user_id: str | None = None
    mcp: ToolSource | None = None
    a2a: ToolSource | None = None
    blob: BlobStore | None = None
    catalogue_budget_chars: int = DEFAULT_CATALOGUE_BUDGET_CHARS
    blob_offload_bytes: int = DEFAULT_OFFLOAD_BYTES
    http: HttpTransport | None = None
    _: KW_ONLY
    retry_base_seconds: float = 0.5
    retry_max_seconds: float = 30.0
    secrets: SecretResolver | None = None
    approvals: ApprovalRules | None = None
    access: TenantAccess | None = None
    recall_limit: int = 50
    tool_sources: Sequence[ToolSource] | None = None
    sandboxes: Mapping[str, Sandbox] | None = None
    code_limits: ResolvedLimits = DEFAULT_HARD_LIMITS


@dataclass(kw_only=True, eq=False)
class WorkerSettings:
    """How a Worker claims and supervises Runs.

    Every field is also the ``Worker`` keyword of the same name, with this meaning.

    Attributes:
        worker_id: this Worker's identity in leases and records; minted if omitted.
        lease_seconds: how long a claim is honoured without a heartbeat.
        heartbeat_seconds: how often the lease is renewed; shorter than the lease.
        grace_seconds: how long an aborted Attempt may take to unwind before the
            supervisor settles it by force.
        supervisor_interval: how often deadlines are checked.
        poll_interval: how long an idle Worker waits between claims when no notifier
            wakes it sooner; also how often an Attempt in flight looks for an interrupt
            when the store's notifier does not hear other processes.
        concurrency: Attempts executed at once.
        max_attempts: claims after which a Run is failed instead of retried, so a Run
            that kills every Worker that touches it eventually stops.
        telemetry: where each Attempt's spans and metrics go. None takes the runner's
            (``Runtime(telemetry=...)``), else the installed adapter's (``psych-otel``),
            else nothing is recorded.
    """

    worker_id: WorkerId | None = None
    lease_seconds: float = 30.0
    heartbeat_seconds: float = 10.0
    grace_seconds: float = 60.0
    supervisor_interval: float = 5.0
    poll_interval: float = 0.5
    concurrency: int = 4
    max_attempts: int = 10
    telemetry: Telemetry | None = None


__all__ = ["RuntimeSettings", "WorkerSettings"]
