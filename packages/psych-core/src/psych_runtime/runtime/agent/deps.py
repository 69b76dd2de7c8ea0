"""What the agent loop is given to work with, and nothing more.

The loop sees the process's model, tools, prices, blob store and egress through this
one frozen value rather than through the object that built it, so it cannot reach for
anything else and a reader can see in one place every outside thing a turn touches.
"""

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

from psych_runtime.blob.port import BlobStore
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.memory.port import MemoryStore
from psych_runtime.model.port import ModelClient
from psych_runtime.model.pricing import CostPolicy
from psych_runtime.model.pricing import PriceResolver
from psych_runtime.store.port import Store
from psych_runtime.tools.access import PermitAll
from psych_runtime.tools.access import TenantAccess
from psych_runtime.tools.approval import AllowAll
from psych_runtime.tools.approval import ApprovalRules
from psych_runtime.tools.approval import Policy
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
    """The outside things one agent Attempt runs with, as the ``Runtime`` resolved them.

    Each field is the Runtime setting of the same meaning (documented once, on
    ``RuntimeSettings``), resolved: defaults filled in (``approvals``, ``policy``,
    ``access``), the tool sources built (``sources``), the sandbox profiles with their
    ceiling (``sandboxes``), the retry backoff as a function (``retry_delay``). The loop
    is handed this, never the Runtime or the Worker.
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
    memories: tuple[str, ...] = ()
