"""A Run served as an A2A task: the mapping a consumer mounts in their own ASGI app.

The A2A SDK's server side speaks the protocol (JSON-RPC, HTTP+JSON, SSE, the task
store, resubscription); ``RunExecutor`` is the agent behind it, and the Run's log is
the task's truth:

* ``message/send`` on a new task dispatches a Run of the published Version; the task
  is ``submitted``, then ``working`` once an Attempt starts;
* a Run that suspends on a question (``ask_question``) puts the task in
  ``input-required`` with the questions as its status message; the next message on
  the same task id answers them and resumes the Run; a message on a task whose Run
  has settled meanwhile is answered by a new Run continuing it, one on a Run still
  going is queued into its next turn (``send``); a Run waiting on someone else (an
  approval, an event) leaves the task ``working`` and says why;
* the text the Run writes streams as it is written: each model call's text is a chunk
  of an ``answer`` artifact (artifact updates that append), the same pieces, in the
  same order, as ``stream_text`` reads from the log;
* a settled Run ends the task: ``completed`` (a Run that wrote no text still gets its
  answer as an artifact), ``failed`` with the reason, ``canceled`` when it was
  interrupted;
* ``tasks/cancel`` interrupts the Run;
* a new task in a known context id continues the context's last Run, so the
  conversation carries on;
* streaming (``message/stream``, resubscription) relays the updates as the Run's log
  grows, which ``stream()`` follows.

``A2AMount`` assembles the SDK's request handler, its Starlette routes and an Agent
Card made from the Version (optionally JWS-signed), and sends push notifications only
to URLs the egress policy allows, through an HTTP client that asks it before every
request. The HTTP server itself stays the consumer's.

Where the task's Run is recorded: in the SDK task's ``metadata`` (``psych_run_id``),
so it lives as long as the SDK's task store keeps the task; a Run that continues a
settled one on the same task replaces it there. The context's last Run
is remembered by the executor in memory (bounded), so continuation across contexts
is per process.
"""

import uuid
from collections import OrderedDict
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any

from a2a.helpers.proto_helpers import new_text_message
from a2a.server.agent_execution import AgentExecutor
from a2a.server.agent_execution import RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import AgentCapabilities
from a2a.types import AgentCard
from a2a.types import AgentInterface
from a2a.types import AgentSkill
from a2a.types import Part
from a2a.types import Role
from a2a.types import Task
from a2a.types import TaskState
from a2a.types import TaskStatus

from psych_a2a.cards import KeyMaterial
from psych_a2a.cards import sign_card
from psych_runtime import EgressPolicy
from psych_runtime import RunId
from psych_runtime import Scope
from psych_runtime import Store
from psych_runtime import TerminalState
from psych_runtime import Version
from psych_runtime import answer
from psych_runtime import dispatch
from psych_runtime import interrupt
from psych_runtime import read_log
from psych_runtime import resume
from psych_runtime import send
from psych_runtime import state
from psych_runtime import stream
from psych_runtime.adapters.tools import AnyPolicy
from psych_runtime.adapters.tools import egress_allows
from psych_runtime.adapters.tools import egress_client
from psych_runtime.records import Record

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

RUN_ID_KEY = "psych_run_id"
"""The task metadata entry naming the Run behind the task."""

type ScopeFor = Callable[[ServerCallContext], Scope]
"""Picks the tenant (and principal) a request acts for, from the SDK's call context."""

_SETTLED_STATES = {
    TerminalState.COMPLETED: TaskState.TASK_STATE_COMPLETED,
    TerminalState.ABORTED: TaskState.TASK_STATE_CANCELED,
}


class RunExecutor(AgentExecutor):
    """The A2A SDK's agent executor, backed by Runs of one published Version.

    Args:
        store: where the Runs live; a Worker on the same store executes them.
        version: the Version every task runs.
        scope: the tenant every request acts for, unless ``scope_for`` is given; the
            Version must be visible to it.
        scope_for: picks the Scope from the SDK's call context (its user, its
            tenant), for a server that authenticates callers.
        remember_contexts: how many context ids' last Runs are remembered for
            continuation.
    """

    def __init__(
        self,
        store: Store,
        version: Version,
        *,
        scope: Scope,
        scope_for: ScopeFor | None = None,
        remember_contexts: int = 10_000,
    ) -> None:
        if remember_contexts < 1:
            raise ValueError(f"remember_contexts must be at least 1, got {remember_contexts}")
        self._store = store
        self._version = version
        self._scope_for: ScopeFor = scope_for if scope_for is not None else (lambda _: scope)
        self._contexts: OrderedDict[tuple[str, str], RunId] = OrderedDict()
        self._remember = remember_contexts

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Start or continue the task's Run and relay its progress until it pauses or ends."""
        task_id, context_id = context.task_id, context.context_id
        if not task_id or not context_id:
            raise ValueError("the request carries no task or context id")
        scope = self._scope_for(context.call_context)
        updater = TaskUpdater(event_queue, task_id, context_id)
        text = context.get_user_input()
        current = context.current_task
        run_id = _run_of(current)
        after = 0
        if current is None or run_id is None:
            run_id = await self._start(scope, context_id, task_id, text, context)
            await event_queue.enqueue_event(
                Task(
                    id=task_id,
                    context_id=context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[context.message] if context.message is not None else [],
                    metadata={RUN_ID_KEY: run_id},
                )
            )
        else:
            answered = await self._answer(scope, run_id, text, context)
            if answered is None:
                # The Run settled while this message waited its turn: a new Run
                # continues it and answers the message on the same task, which from
                # now on names the new Run (the SDK merges status metadata into the
                # task), so a question that Run asks is answered by resuming it.
                run_id = await self._start(scope, context_id, task_id, text, context)
                await updater.update_status(
                    TaskState.TASK_STATE_WORKING, metadata={RUN_ID_KEY: run_id}
                )
                answered = 0
            after = answered
        await self._relay(scope, run_id, after, updater, context_id, task_id)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Interrupt the task's Run, wait for it to settle, and report the task canceled."""
        task_id, context_id = context.task_id, context.context_id
        run_id = _run_of(context.current_task)
        if not task_id or not context_id or run_id is None:
            raise ValueError("the task has no Run to cancel")
        scope = self._scope_for(context.call_context)
        await interrupt(self._store, run_id, reason="canceled over A2A", scope=scope)
        updater = TaskUpdater(event_queue, task_id, context_id)
        await self._relay(scope, run_id, 0, updater, context_id, task_id, cancelling=True)

    async def _start(
        self, scope: Scope, context_id: str, task_id: str, text: str, context: RequestContext
    ) -> RunId:
        previous = self._contexts.get((scope.tenant, context_id))
        message_id = context.message.message_id if context.message is not None else ""
        dispatched = await dispatch(
            self._store,
            self._version,
            text,
            scope=scope,
            continues=previous,
            idempotency_key=f"a2a:{task_id}:{message_id}"[:256],
        )
        key = (scope.tenant, context_id)
        self._contexts[key] = dispatched.run_id
        self._contexts.move_to_end(key)
        while len(self._contexts) > self._remember:
            self._contexts.popitem(last=False)
        return dispatched.run_id

    async def _answer(
        self, scope: Scope, run_id: RunId, text: str, context: RequestContext
    ) -> int | None:
        """Pass ``text`` to the Run; the seq to relay from, or None when it has settled.

        A Run waiting on a question is resumed with ``text`` as the answer; any other
        Run still going gets ``text`` queued into its next turn.
        """
        log = await read_log(self._store, run_id, scope=scope)
        after = log[-1].seq if log else 0
        view = await state(self._store, run_id, scope=scope)
        if view.settled:
            return None
        if view.suspended and view.suspend_reason == "question":
            by = context.call_context.user.user_name or None
            await resume(
                self._store, run_id, payload={"answer": text}, by=by and by[:256], scope=scope
            )
        else:  # still working, or waiting on someone else: the message joins its next turn
            await send(self._store, run_id, text, scope=scope)
        return after

    async def _relay(
        self,
        scope: Scope,
        run_id: RunId,
        after: int,
        updater: TaskUpdater,
        context_id: str,
        task_id: str,
        *,
        cancelling: bool = False,
    ) -> None:
        """Turn the Run's records from ``after`` on into task updates, until it pauses or ends.

        The text the Run writes streams out as it is written: each model call's text
        is a chunk of one ``answer`` artifact (the first creates it, later ones
        append), the pieces ``stream_text`` yields, in the same order.
        """
        working = False
        streamed = _Answer(updater)
        async for record in stream(self._store, run_id, after=after, scope=scope):
            if record.type == "attempt_started" and not working and not cancelling:
                working = True
                await updater.start_work()
            elif record.type == "model_call_finished" and record.text and not cancelling:
                await streamed.add(record.text)
            elif record.type == "suspended" and not cancelling:
                question = _question_text(record)
                if question is not None:
                    await updater.requires_input(_agent_message(question, context_id, task_id))
                    return
                # Waiting on someone other than the caller (an approval, an event):
                # the task stays working, and says why.
                waiting = f"The run is waiting ({_reason(record)})."
                await updater.update_status(
                    TaskState.TASK_STATE_WORKING, _agent_message(waiting, context_id, task_id)
                )
            elif record.type == "run_settled":
                await self._settle(scope, run_id, record, updater, streamed, context_id, task_id)
                return

    async def _settle(
        self,
        scope: Scope,
        run_id: RunId,
        record: Record,
        updater: TaskUpdater,
        streamed: "_Answer",
        context_id: str,
        task_id: str,
    ) -> None:
        settled: Any = record
        outcome = _SETTLED_STATES.get(settled.state, TaskState.TASK_STATE_FAILED)
        if outcome == TaskState.TASK_STATE_COMPLETED:
            if not streamed.pieces:  # nothing was written as it went: the answer, whole
                view = await answer(self._store, run_id, scope=scope)
                await updater.add_artifact([Part(text=view.text)], name="answer")
            await updater.complete()
        elif outcome == TaskState.TASK_STATE_CANCELED:
            await updater.cancel()
        else:
            reason = settled.failure.message if settled.failure is not None else settled.state
            await updater.failed(
                _agent_message(f"the run ended {settled.state}: {reason}", context_id, task_id)
            )


class _Answer:
    """The ``answer`` artifact of one relay, sent a chunk at a time as the Run writes."""

    def __init__(self, updater: TaskUpdater) -> None:
        self._updater = updater
        self.artifact_id = uuid.uuid4().hex
        self.pieces = 0

    async def add(self, text: str) -> None:
        """Send ``text`` as the artifact's next chunk (the first one creates it)."""
        await self._updater.add_artifact(
            [Part(text=text)],
            artifact_id=self.artifact_id,
            name="answer",
            append=self.pieces > 0,
        )
        self.pieces += 1


def _run_of(task: Task | None) -> RunId | None:
    if task is None:
        return None
    value = task.metadata.fields.get(RUN_ID_KEY) if task.HasField("metadata") else None
    if value is None or not value.string_value:
        return None
    return RunId(value.string_value)


def _question_text(record: Record) -> str | None:
    suspended: Any = record
    if suspended.reason != "question":
        return None
    if suspended.questions:
        lines = []
        for asked in suspended.questions:
            line = f"{asked.header}: {asked.question}" if asked.header else asked.question
            if asked.options:
                line += " (" + " / ".join(option.label for option in asked.options) + ")"
            lines.append(line)
        return "\n".join(lines)
    return suspended.question or "The agent needs more input."


def _reason(record: Record) -> str:
    suspended: Any = record
    return str(suspended.reason)


def _agent_message(text: str, context_id: str, task_id: str) -> Any:
    return new_text_message(text, context_id=context_id, task_id=task_id, role=Role.ROLE_AGENT)


def agent_card(
    version: Version,
    *,
    url: str,
    rest_url: str | None = None,
    name: str | None = None,
    description: str | None = None,
    skills: Sequence[AgentSkill] = (),
    streaming: bool = True,
    push_notifications: bool = False,
    provider_version: str | None = None,
) -> AgentCard:
    """An Agent Card describing the agent of ``version``, reached at ``url`` (JSON-RPC).

    Args:
        version: the published Version of an agent.
        url: where the JSON-RPC endpoint is mounted, as callers reach it.
        rest_url: where the HTTP+JSON routes are mounted, when they are.
        name: the card's name; the Spec's name by default.
        description: the card's description; the Spec's description by default.
        skills: what to advertise; by default one skill named after the agent.
        streaming: whether the server streams task updates.
        push_notifications: whether the server sends push notifications.
        provider_version: the card's ``version``; the Version's hash by default.

    Raises:
        ValueError: ``version`` is a workflow, or ``url`` is empty.
    """
    spec = version.spec
    if spec.kind != "agent":
        raise ValueError("an Agent Card describes an agent, not a workflow")
    if not url:
        raise ValueError("an Agent Card needs the URL callers reach the agent at")
    text = description or spec.description or f"The {spec.name} agent."
    interfaces = [AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")]
    if rest_url:
        interfaces.append(
            AgentInterface(url=rest_url, protocol_binding="HTTP+JSON", protocol_version="1.0")
        )
    advertised = list(skills) or [
        AgentSkill(id=spec.name, name=spec.name, description=text, tags=["psych"])
    ]
    return AgentCard(
        name=name or spec.name,
        description=text,
        version=provider_version or str(version.hash),
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(streaming=streaming, push_notifications=push_notifications),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=advertised,
    )


def push_url_check(policy: AnyPolicy, scope: Scope) -> Callable[[str], Awaitable[bool]]:
    """A check for push notification URLs: True when the egress policy allows the URL."""

    async def allowed(url: str) -> bool:
        return await egress_allows(policy, scope, url)

    return allowed


class A2AMount:
    """Everything a consumer's ASGI app mounts to serve one agent over A2A.

    Build it, add ``routes`` to a Starlette (or FastAPI) app, and run a Worker on the
    same store. The card is served at ``/.well-known/agent-card.json``, JSON-RPC at
    ``rpc_path`` and HTTP+JSON under ``rest_prefix``; the URLs in the card are made
    from ``base_url``.

    Args:
        store: where the Runs live.
        version: the published agent every task runs.
        base_url: the URL callers reach the app at (no trailing slash).
        scope: the tenant requests act for (and push notifications are judged for).
        scope_for: picks the Scope per request instead.
        egress: judges push notification URLs, when they are registered and again
            before each delivery; ``EgressPolicy()`` (no private or loopback
            addresses) by default.
        push_notifications: whether clients may register push notification URLs.
        signing_key: a private key to sign the card with (PEM or JWK); unsigned when None.
        signing_kid: the key id the signature names (required with ``signing_key``).
        signing_algorithm: the JWS algorithm of the signature.
        rpc_path: where the JSON-RPC endpoint is mounted.
        rest_prefix: where the HTTP+JSON routes are mounted ("" for the root).
        card: a card to serve instead of the generated one (signed if a key is given).

    Raises:
        ValueError: ``signing_key`` without ``signing_kid``, or a bad card setting.
    """

    def __init__(
        self,
        store: Store,
        version: Version,
        *,
        base_url: str,
        scope: Scope,
        scope_for: ScopeFor | None = None,
        egress: AnyPolicy | None = None,
        push_notifications: bool = True,
        signing_key: KeyMaterial | None = None,
        signing_kid: str | None = None,
        signing_algorithm: str = "ES256",
        rpc_path: str = "/rpc",
        rest_prefix: str = "",
        card: AgentCard | None = None,
    ) -> None:
        from a2a.server.request_handlers import DefaultRequestHandlerV2
        from a2a.server.tasks import BasePushNotificationSender
        from a2a.server.tasks import InMemoryPushNotificationConfigStore
        from a2a.server.tasks import InMemoryTaskStore

        if signing_key is not None and not signing_kid:
            raise ValueError("signing_key needs signing_kid, the key id the signature names")
        base = base_url.rstrip("/")
        fixed = scope
        self.policy: AnyPolicy = egress if egress is not None else EgressPolicy()
        self.executor = RunExecutor(store, version, scope=fixed, scope_for=scope_for)
        self.card = card or agent_card(
            version,
            url=base + rpc_path,
            rest_url=base + rest_prefix,
            push_notifications=push_notifications,
        )
        if signing_key is not None and signing_kid:
            self.card = sign_card(
                self.card, signing_key, kid=signing_kid, algorithm=signing_algorithm
            )
        self._http = None
        push_store = None
        sender = None
        check = push_url_check(self.policy, fixed)
        if push_notifications:
            push_store = InMemoryPushNotificationConfigStore()
            self._http, _ = egress_client(self.policy, fixed, timeout=30.0)
            sender = BasePushNotificationSender(self._http, push_store, push_url_validator=check)
        self.handler: DefaultRequestHandlerV2 = DefaultRequestHandlerV2(
            self.executor,
            InMemoryTaskStore(),
            self.card,
            push_config_store=push_store,
            push_sender=sender,
            push_url_validator=check,
        )
        self._rpc_path = rpc_path
        self._rest_prefix = rest_prefix

    @property
    def routes(self) -> "list[BaseRoute]":
        """The Starlette routes: the card, JSON-RPC and HTTP+JSON."""
        from a2a.server.routes import create_agent_card_routes
        from a2a.server.routes import create_jsonrpc_routes
        from a2a.server.routes import create_rest_routes

        return [
            *create_agent_card_routes(self.card),
            *create_jsonrpc_routes(self.handler, self._rpc_path),
            *create_rest_routes(self.handler, path_prefix=self._rest_prefix),
        ]

    async def aclose(self) -> None:
        """Stop the tasks in flight and close the push notification client."""
        await self.handler.aclose()
        if self._http is not None:
            await self._http.aclose()


__all__ = ["RUN_ID_KEY", "A2AMount", "RunExecutor", "ScopeFor", "agent_card", "push_url_check"]
