"""``session()``: everything needed to run agents in a few lines, started and stopped together.

The smallest correct program should fit on a screen, and the hardest thing to get
right in a small program is the Worker's lifecycle: start it, never forget it is
there, stop it on the way out. ``session()`` does exactly that and nothing more; every
object it builds is exposed, so a program can outgrow it piece by piece.
"""

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import fields
from typing import Any

from psych_runtime.core.ids import EntryId
from psych_runtime.core.ids import RunId
from psych_runtime.core.projections.answer import AnswerView
from psych_runtime.core.projections.report_types import RunReport
from psych_runtime.core.projections.status import RunStatus
from psych_runtime.core.projections.thread import ThreadView
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import QueueKind
from psych_runtime.core.records import Record
from psych_runtime.core.scope import DEFAULT_SCOPE
from psych_runtime.core.scope import Scope
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.spec import WorkflowSpec
from psych_runtime.core.state import RunStateView
from psych_runtime.core.validation import ValidationContext
from psych_runtime.core.version import Version
from psych_runtime.model.port import ModelClient
from psych_runtime.plugins.urls import open_store
from psych_runtime.runtime import reads
from psych_runtime.runtime.admission import Dispatched
from psych_runtime.runtime.admission import dispatch
from psych_runtime.runtime.control import interrupt
from psych_runtime.runtime.control import send
from psych_runtime.runtime.publish import publish
from psych_runtime.runtime.resume import resume
from psych_runtime.runtime.runtime import Runtime
from psych_runtime.runtime.settings import RuntimeSettings
from psych_runtime.runtime.settings import WorkerSettings
from psych_runtime.runtime.worker import Worker
from psych_runtime.store.port import Store
from psych_runtime.tools.registry import ToolRegistry


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
        deadline_seconds: float | None = None,
        replay_of: RunId | None = None,
        replay_from: str | None = None,
        breakpoints: Sequence[str] = (),
        step_mode: bool = False,
        end_user_id: str | None = None,
        trace_context: Mapping[str, str] | None = None,
    ) -> Dispatched:
        """Publish (once per Spec object) and admit a Run; returns without waiting.

        Every keyword is ``psych_runtime.dispatch``'s; the scope is the session's.
        """
        version = await self._version(spec)
        return await dispatch(
            self.store,
            version,
            message,
            input=input,
            scope=self.scope,
            idempotency_key=idempotency_key,
            continues=continues,
            deadline_seconds=deadline_seconds,
            replay_of=replay_of,
            replay_from=replay_from,
            breakpoints=breakpoints,
            step_mode=step_mode,
            end_user_id=end_user_id,
            trace_context=trace_context,
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
        end_user_id: str | None = None,
    ) -> AnswerView:
        """Dispatch a Run with ``message``, wait for it, and return its answer.

        A failed Run is reported, not raised: the view has ``finished=False`` and
        ``status()`` says why. ``end_user_id`` names the person served (see
        ``psych_runtime.dispatch``).
        """
        dispatched = await self.dispatch(
            spec, message, continues=continues, end_user_id=end_user_id
        )
        await self.wait(dispatched.run_id, timeout=timeout)
        return await reads.answer(self.store, dispatched.run_id, scope=self.scope)

    # The reads and controls below are the module-level functions of the same names,
    # with this Session's store and tenant filled in.

    async def status(self, run_id: RunId) -> RunStatus:
        """Where the Run stands; see ``psych_runtime.status``."""
        return await reads.status(self.store, run_id, scope=self.scope)

    async def answer(self, run_id: RunId) -> AnswerView:
        """The Run's answer so far; see ``psych_runtime.answer``."""
        return await reads.answer(self.store, run_id, scope=self.scope)

    async def thread(self, run_id: RunId, *, limit: int | None = None) -> ThreadView:
        """The conversation up to this Run; see ``psych_runtime.thread``."""
        return await reads.thread(self.store, run_id, scope=self.scope, limit=limit)

    async def report(self, run_id: RunId, *, child_depth: int = 0) -> RunReport:
        """What the Run did, used and cost; see ``psych_runtime.report``."""
        return await reads.report(self.store, run_id, child_depth=child_depth, scope=self.scope)

    async def read_log(
        self, run_id: RunId, *, after: int = 0, limit: int | None = None
    ) -> list[Record]:
        """The Run's records after ``after``; see ``psych_runtime.read_log``."""
        return await reads.read_log(self.store, run_id, after=after, limit=limit, scope=self.scope)

    async def state(self, run_id: RunId) -> RunStateView:
        """The folded state of the Run; see ``psych_runtime.state``."""
        return await reads.state(self.store, run_id, scope=self.scope)

    def stream(self, run_id: RunId, *, after: int = 0) -> AsyncGenerator[Record]:
        """The Run's records from ``after`` on, tailing until it settles."""
        return reads.stream(self.store, run_id, after=after, scope=self.scope)

    def stream_text(self, run_id: RunId, *, after: int = 0) -> AsyncGenerator[str]:
        """The assistant's words as they are recorded; see ``psych_runtime.stream_text``."""
        return reads.stream_text(self.store, run_id, after=after, scope=self.scope)

    async def interrupt(self, run_id: RunId, *, reason: str = "", by: str | None = None) -> bool:
        """Ask the Run to stop; see ``psych_runtime.interrupt``."""
        return await interrupt(self.store, run_id, reason=reason, by=by, scope=self.scope)

    async def send(
        self,
        run_id: RunId,
        message: str | JsonObject,
        *,
        queue: QueueKind = QueueKind.STEER,
    ) -> EntryId:
        """Queue a message for the Run; see ``psych_runtime.send``."""
        return await send(self.store, run_id, message, queue=queue, scope=self.scope)

    async def resume(
        self,
        run_id: RunId,
        *,
        approved: bool | None = None,
        payload: JsonObject | None = None,
        by: str | None = None,
    ) -> None:
        """End the Run's suspension; see ``psych_runtime.resume``."""
        await resume(
            self.store, run_id, approved=approved, payload=payload, by=by, scope=self.scope
        )


@contextlib.asynccontextmanager
async def session(
    model: ModelClient,
    *,
    tools: Iterable[Callable[..., Any]] = (),
    store: Store | str | None = None,
    registry: ToolRegistry | None = None,
    scope: Scope | None = None,
    runtime: RuntimeSettings | None = None,
    worker: WorkerSettings | None = None,
) -> AsyncIterator[Session]:
    """Build what a program needs to run agents, start a Worker, and stop it on exit.

    Args:
        model: the model client (``FakeModel`` in tests, ``OpenAICompatibleClient``
            in production).
        tools: Python functions to register as code tools.
        store: a store URL (``"sqlite:///runs.db"``), which the session opens, migrates
            and closes when the block ends; or a ``Store`` you opened, which stays
            yours to close; or None for a fresh ``InMemoryStore``.
        registry: an existing registry to add ``tools`` to.
        scope: the tenant the session acts for; defaults to tenant ``default``.
        runtime: how Runs are executed (prices, blob offload, HTTP egress...).
        worker: how the background Worker claims Runs (concurrency, lease...).
    """
    if isinstance(store, str):
        opened = await open_store(store, migrate=True)
        try:
            async with _session(model, tools, opened, registry, scope, runtime, worker) as s:
                yield s
        finally:
            await opened.close()
        return
    if store is None:
        from psych_runtime.store.memory import InMemoryStore

        store = InMemoryStore()
    async with _session(model, tools, store, registry, scope, runtime, worker) as s:
        yield s


@contextlib.asynccontextmanager
async def _session(
    model: ModelClient,
    tools: Iterable[Callable[..., Any]],
    store: Store,
    registry: ToolRegistry | None,
    scope: Scope | None,
    runtime_settings: RuntimeSettings | None,
    worker_settings: WorkerSettings | None,
) -> AsyncIterator[Session]:
    registry = registry if registry is not None else ToolRegistry()
    for function in tools:
        registry.register(function)
    rs = runtime_settings or RuntimeSettings()
    # Every setting is the Runtime keyword of the same name (a test pins that).
    runtime = Runtime(store, model, registry, **{f.name: getattr(rs, f.name) for f in fields(rs)})
    ws = worker_settings or WorkerSettings()
    worker = Worker(store, runtime, **{f.name: getattr(ws, f.name) for f in fields(ws)})
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
