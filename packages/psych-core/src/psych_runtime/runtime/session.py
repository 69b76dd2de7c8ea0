"""``session()``: everything needed to run agents in a few lines, started and stopped together.

The smallest correct program should fit on a screen, and the hardest thing to get
right in a small program is the Worker's lifecycle: start it, never forget it is
there, stop it on the way out. ``session()`` does exactly that and nothing more; every
object it builds is exposed, so a program can outgrow it piece by piece.
"""

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from psych_runtime.blob.port import BlobStore
from psych_runtime.core.ids import RunId
from psych_runtime.core.projections.answer import AnswerView
from psych_runtime.core.records import JsonObject, Record
from psych_runtime.core.scope import DEFAULT_SCOPE, Scope
from psych_runtime.core.spec import AgentSpec, WorkflowSpec
from psych_runtime.core.validation import ValidationContext
from psych_runtime.core.version import Version
from psych_runtime.model.port import ModelClient
from psych_runtime.model.pricing import CostPolicy, PriceResolver
from psych_runtime.model.transport import HttpTransport
from psych_runtime.runtime import reads
from psych_runtime.runtime.dispatch import Dispatched, dispatch, publish
from psych_runtime.runtime.runtime import Runtime
from psych_runtime.runtime.worker import Worker
from psych_runtime.store.port import Store
from psych_runtime.tools.large_results import DEFAULT_OFFLOAD_BYTES
from psych_runtime.tools.registry import ToolRegistry
from psych_runtime.tools.secrets import SecretResolver


@dataclass
class Session:
    """The objects ``session()`` assembled, plus shortcuts that publish, dispatch and wait.

    Built by ``session()``. The fields are the real objects rather than wrappers, so a
    program that needs a second Worker or a store transaction reaches through them.

    Attributes:
        store: where Versions and Runs live.
        registry: the code tools this process executes.
        runtime: what the Worker executes Runs with.
        worker: the Worker running in the background for the life of the block.
        scope: the tenant every call of this Session acts for.
    """

    store: Store
    registry: ToolRegistry
    runtime: Runtime
    worker: Worker
    scope: Scope
    _versions: dict[int, tuple[AgentSpec | WorkflowSpec, Version]] = field(default_factory=dict)

    async def publish(self, spec: AgentSpec | WorkflowSpec | JsonObject) -> Version:
        """Validate against the registered tools and known models, then publish.

        The Version belongs to this Session's tenant.

        Raises:
            SpecValidationError: the Spec names an unregistered tool, an unknown model,
                or breaks any other publish-time rule.
        """
        context = ValidationContext(
            registered_tools=self.registry.names,
            registry_is_complete=True,
            known_models=await self.runtime.model.known_models(),
        )
        return await publish(self.store, spec, scope=self.scope, context=context)

    async def _version(self, spec: AgentSpec | WorkflowSpec | Version) -> Version:
        if isinstance(spec, Version):
            return spec
        cached = self._versions.get(id(spec))
        if cached is not None and cached[0] is spec:
            return cached[1]
        version = await self.publish(spec)
        self._versions[id(spec)] = (spec, version)
        return version

    async def dispatch(
        self,
        spec: AgentSpec | WorkflowSpec | Version,
        message: str | None = None,
        *,
        input: JsonObject | None = None,
        idempotency_key: str | None = None,
        continues: RunId | None = None,
    ) -> Dispatched:
        """Publish (once per Spec object) and admit a Run; returns without waiting."""
        version = await self._version(spec)
        return await dispatch(
            self.store,
            version,
            message,
            input=input,
            scope=self.scope,
            idempotency_key=idempotency_key,
            continues=continues,
        )

    async def wait(self, run_id: RunId, *, timeout: float | None = None) -> None:
        """Wait until the Run settles or suspends.

        While this session's own Worker is executing the Run, the wait sleeps until
        that Attempt ends rather than re-reading the log after every append; for a
        Run executed elsewhere it follows the store's notifier (or polls).

        Raises:
            TimeoutError: ``timeout`` seconds passed first.
        """
        await reads.checked_header(self.store, run_id, self.scope)
        ended = self.worker.attempts_ended
        notifier = self.store.notifier
        async with asyncio.timeout(timeout):
            while True:
                local = ended.generation(run_id)
                generation = notifier.generation(run_id) if notifier is not None else 0
                state = (await reads.FOLDS.fold(self.store, run_id)).state
                if state.settled or state.suspended:
                    return
                if run_id in self.worker.active:
                    await ended.wait(run_id, local, 1.0)
                elif notifier is not None:
                    await notifier.wait(run_id, generation, 1.0)
                else:
                    await asyncio.sleep(0.05)

    async def ask(
        self,
        spec: AgentSpec | WorkflowSpec | Version,
        message: str,
        *,
        continues: RunId | None = None,
        timeout: float | None = None,
    ) -> AnswerView:
        """Dispatch a Run with ``message``, wait for it, and return its answer.

        A failed Run is reported, not raised: the view has ``finished=False`` and
        ``status()`` says why.
        """
        dispatched = await self.dispatch(spec, message, continues=continues)
        await self.wait(dispatched.run_id, timeout=timeout)
        return await reads.answer(self.store, dispatched.run_id, scope=self.scope)

    def stream(self, run_id: RunId, *, after: int = 0) -> AsyncIterator[Record]:
        """The Run's records from ``after`` on, tailing until it settles."""
        return reads.stream(self.store, run_id, after=after, scope=self.scope)


@contextlib.asynccontextmanager
async def session(
    model: ModelClient,
    *,
    tools: Iterable[Callable[..., Any]] = (),
    store: Store | None = None,
    registry: ToolRegistry | None = None,
    scope: Scope | None = None,
    prices: PriceResolver | None = None,
    cost_policy: CostPolicy = "prefer_provider",
    concurrency: int = 4,
    lease_seconds: float = 30.0,
    heartbeat_seconds: float = 10.0,
    blob: BlobStore | None = None,
    blob_offload_bytes: int = DEFAULT_OFFLOAD_BYTES,
    http: HttpTransport | None = None,
    secrets: SecretResolver | None = None,
) -> AsyncIterator[Session]:
    """Build what a program needs to run agents, start a Worker, and stop it on exit.

    Args:
        model: the model client (``FakeModel`` in tests, ``OpenAICompatibleClient``
            in production).
        tools: Python functions to register as code tools.
        store: defaults to a fresh ``InMemoryStore``.
        registry: an existing registry to add ``tools`` to.
        scope: the tenant the session acts for; defaults to tenant ``default``.
        prices: a price table; without one every cost is recorded as unknown.
        cost_policy: which figure wins when a provider reports its own cost.
        concurrency: Runs the Worker executes at once.
        lease_seconds: the Worker's lease.
        heartbeat_seconds: how often the Worker renews it.
        blob: where tool results too large for a log record are kept (for example
            ``InMemoryBlobStore()`` or ``await open_blob_store("file:///...")``).
        blob_offload_bytes: results above this many bytes go to ``blob``; see
            ``Runtime``.
        http: the transport HTTP tools are sent through (its ``EgressPolicy``
            decides where they may go); not closed on exit.
        secrets: resolves the credential names HTTP tools declare.
    """
    if store is None:
        from psych_runtime.store.memory import InMemoryStore

        store = InMemoryStore()
    registry = registry if registry is not None else ToolRegistry()
    for function in tools:
        registry.register(function)
    runtime = Runtime(
        store,
        model,
        registry,
        prices=prices,
        cost_policy=cost_policy,
        blob=blob,
        blob_offload_bytes=blob_offload_bytes,
        http=http,
        secrets=secrets,
    )
    worker = Worker(
        store,
        runtime,
        concurrency=concurrency,
        lease_seconds=lease_seconds,
        heartbeat_seconds=heartbeat_seconds,
    )
    task = asyncio.create_task(worker.run(), name="psych-session-worker")
    try:
        yield Session(
            store=store,
            registry=registry,
            runtime=runtime,
            worker=worker,
            scope=scope or DEFAULT_SCOPE,
        )
    finally:
        worker.request_stop()
        await task
