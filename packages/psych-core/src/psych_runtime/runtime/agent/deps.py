"""What the agent loop is given to work with, and nothing more.

The loop sees the process's model, tools, prices, blob store and egress through this
one frozen value rather than through the object that built it, so it cannot reach for
anything else and a reader can see in one place every outside thing a turn touches.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from psych_runtime.blob.port import BlobStore
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.memory.port import MemoryStore
from psych_runtime.model.port import ModelClient
from psych_runtime.model.pricing import CostPolicy, PriceResolver
from psych_runtime.store.port import Store
from psych_runtime.tools.access import PermitAll, TenantAccess
from psych_runtime.tools.approval import AllowAll, ApprovalRules, Policy
from psych_runtime.tools.code import CodeSandboxes
from psych_runtime.tools.deferred import DEFAULT_CATALOGUE_BUDGET_CHARS
from psych_runtime.tools.registry import ToolRegistry
from psych_runtime.tools.secrets import SecretResolver
from psych_runtime.tools.sources import ToolSource

RetryDelay = Callable[[int, float | None], float]
"""Seconds to wait before retrying a transient model failure, given the retries already
used and the delay the provider asked for (None when it named none)."""


@dataclass(frozen=True, slots=True)
class AgentDeps:
    """The outside things one agent Attempt runs with.

    Attributes:
        registry: the code tools this process can execute.
        model: the client every model call goes through.
        prices: the price table; None records every cost as unknown.
        cost_policy: which figure wins when a provider reports its own cost.
        retry_delay: the backoff before retrying a transient model failure.
        blob: where results too large for a log record are kept; None when there is
            nowhere (such a result then fails its call).
        blob_offload_bytes: results whose rendered size is strictly above this go to
            ``blob``.
        http: the transport HTTP tool calls are sent through; None fails them.
        secrets: where an HTTP tool's credential name is turned into its secret.
        store: where Runs live: child Runs are admitted into it, and its notifier
            ends a retry pause early when a record lands.
        approvals: which calls wait for a person before they run.
        policy: the consumer's allow / deny / ask judgement of each call.
        access: which tools each tenant may use (the narrowing's tenant plane).
        memory: where facts about end users are kept between Runs; None offers no
            memory tools.
        end_user_id: the end user a Run's facts belong to when its input names none.
        recall_limit: how many of an end user's newest facts the prompt shows.
        sources: where tools outside the process (MCP servers, A2A peers) are
            resolved every turn and called.
        catalogue_budget: characters of remote tool descriptions above which a
            server's tools are deferred behind ``list_tools`` / ``call_tool``.
        sandboxes: where ``run_code`` programs run, by profile, and the limits no
            Spec may exceed.
    """

    registry: ToolRegistry
    model: ModelClient
    prices: PriceResolver | None
    cost_policy: CostPolicy
    retry_delay: RetryDelay
    blob: BlobStore | None
    blob_offload_bytes: int
    http: HttpTransport | None
    secrets: SecretResolver | None
    store: Store
    approvals: ApprovalRules = field(default_factory=ApprovalRules)
    policy: Policy = field(default_factory=AllowAll)
    access: TenantAccess = field(default_factory=PermitAll)
    memory: MemoryStore | None = None
    end_user_id: str | None = None
    recall_limit: int = 50
    sources: tuple[ToolSource, ...] = ()
    catalogue_budget: int = DEFAULT_CATALOGUE_BUDGET_CHARS
    sandboxes: CodeSandboxes = field(default_factory=CodeSandboxes)
