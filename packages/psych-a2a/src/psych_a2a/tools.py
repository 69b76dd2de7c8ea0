"""``A2ATools``: the skills of the A2A peers a Spec names, offered as tools every turn.

At the start of each turn the runtime asks ``resolve`` what the Spec's peers offer;
each peer's Agent Card is read (from its well-known path under the peer's URL, or
from the URL itself when that names the card), its signature checked when a
``CardVerifier`` covers the peer, and its skills offered as ``<peer>__<skill>``
after narrowing by the peer's ``allow`` list and the tenant's plane. A call sends
the model's ``message`` to the peer as an A2A message over the binding the card
prefers among JSON-RPC and HTTP+JSON, follows the task by streaming (when the card
says the peer streams) or by polling until it settles or waits for input, and
returns its state and artifacts as the tool result.

Everything acts for the Run's Scope:

* the peer's ``credential`` (a secret's name) is looked up for that tenant and sent
  as ``Authorization: <scheme> <secret>``;
* every request goes through an HTTP client whose transport asks the egress policy
  first (the policy of the Runtime's ``HttpTransport``), with no redirects;
* connections (an HTTP client and the card it read) are pooled per tenant,
  principal, peer, URL and credential, so nothing opened for one tenant carries
  another's request; the pool is bounded and idle ones are closed.

A required peer that cannot be reached fails the turn (``ToolSourceUnavailable``);
an optional one is left out and the model is told in an advisory.
"""

import asyncio
import hashlib
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit

from pydantic import JsonValue

from psych_a2a._errors import A2AFailure, Failure
from psych_a2a._names import admitted, offerable, qualified
from psych_a2a.cards import CardRefused, CardVerifier
from psych_runtime import EgressDenied, EgressPolicy, HttpTransport, Scope, SecretResolver
from psych_runtime.adapters import (
    ConnectionPool,
    SourceCallFailed,
    SourceTool,
    SourceTools,
    ToolContext,
    ToolSourceUnavailable,
)
from psych_runtime.spec import A2APeer, AgentSpec

if TYPE_CHECKING:
    import httpx
    from a2a.client import Client
    from a2a.types import AgentCard

    from psych_a2a._egress import AnyPolicy, EgressTransport

WELL_KNOWN_CARD = "/.well-known/agent-card.json"
"""Where a peer publishes its Agent Card, under its base URL."""

BINDINGS = ("JSONRPC", "HTTP+JSON")
"""The protocol bindings spoken, in the order they are preferred."""


@dataclass(frozen=True, slots=True)
class PoolKey:
    """Who may share a connection: one tenant and principal, one peer, one credential.

    Attributes:
        tenant: the Scope's tenant.
        principal: the Scope's principal, when known.
        peer: the peer's name in the Spec.
        url: where its card is read.
        credential: a SHA-256 digest of the credential sent (never the secret), or None.
        extensions: the A2A extensions requested on every request.
    """

    tenant: str
    principal: str | None
    peer: str
    url: str
    credential: str | None
    extensions: tuple[str, ...] = ()


@dataclass(slots=True)
class _Connection:
    """An HTTP client for one pool key, and the peer's card as last read."""

    http: "httpx.AsyncClient"
    transport: "EgressTransport"
    card: "AgentCard | None" = None
    card_read_at: float = 0.0
    client: "Client | None" = None
    broken: bool = False

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()
        await self.http.aclose()


@dataclass(slots=True)
class _Offer:
    peer: A2APeer
    tools: list[SourceTool] = field(default_factory=list)
    advisories: list[str] = field(default_factory=list)
    failure: Failure | None = None


class A2ATools:
    """A ``ToolSource`` for the A2A peers named in a Spec (``AgentSpec.a2a_peers``).

    Args:
        http: the Runtime's ``HttpTransport``; its egress policy judges every request.
        egress: the policy to use when no ``http`` is given; ``EgressPolicy()``
            (which refuses private and loopback addresses) when neither is.
        secrets: where a peer's ``credential`` name is looked up for the Run's tenant.
        verifier: checks the Agent Cards of the peers it covers; a card that fails is
            refused (the peer is unavailable, ``card_unverified``). None checks none.
        max_connections: how many peer connections stay open at once.
        idle_seconds: how long an unused connection stays open.
        card_ttl_seconds: how long a card is reused before it is read again.
        timeout_seconds: how long reading a card, and each call from sending the
            message to the task settling, may take.
        poll_seconds: the pause between two reads of a task that is still working.

    Raises:
        ValueError: a limit is out of range.
    """

    def __init__(
        self,
        *,
        http: HttpTransport | None = None,
        egress: "AnyPolicy | None" = None,
        secrets: SecretResolver | None = None,
        verifier: CardVerifier | None = None,
        max_connections: int = 64,
        idle_seconds: float = 300.0,
        card_ttl_seconds: float = 30.0,
        timeout_seconds: float = 120.0,
        poll_seconds: float = 0.5,
    ) -> None:
        if card_ttl_seconds < 0:
            raise ValueError(f"card_ttl_seconds may not be negative: {card_ttl_seconds}")
        if timeout_seconds <= 0:
            raise ValueError(f"timeout_seconds must be positive, got {timeout_seconds}")
        if poll_seconds <= 0:
            raise ValueError(f"poll_seconds must be positive, got {poll_seconds}")
        self._policy: AnyPolicy = (
            http.policy if http is not None else egress if egress is not None else EgressPolicy()
        )
        self._secrets = secrets
        self._verifier = verifier
        self._ttl = card_ttl_seconds
        self._timeout = timeout_seconds
        self._poll = poll_seconds
        self._pool: ConnectionPool[PoolKey, _Connection] = ConnectionPool(
            max_connections=max_connections, idle_seconds=idle_seconds
        )

    @property
    def open_connections(self) -> tuple[PoolKey, ...]:
        """The keys of the connections open now, least recently used first."""
        return self._pool.keys()

    def serves(self, spec: AgentSpec) -> bool:
        """Whether ``spec`` names any A2A peer."""
        return bool(spec.a2a_peers)

    async def resolve(
        self, spec: AgentSpec, scope: Scope, *, permitted: Collection[str] | None
    ) -> SourceTools:
        """The skills ``spec``'s peers offer ``scope`` this turn, narrowed, as tools.

        Raises:
            ToolSourceUnavailable: a required peer could not be used (the first in
                the Spec's order when several could not).
        """
        offers = await asyncio.gather(
            *(self._offer(peer, scope, permitted) for peer in spec.a2a_peers)
        )
        tools: list[SourceTool] = []
        advisories: list[str] = []
        for offer in offers:
            if offer.failure is not None and not offer.peer.optional:
                raise ToolSourceUnavailable(
                    offer.peer.name, offer.failure.message, transient=offer.failure.transient
                )
            tools.extend(offer.tools)
            advisories.extend(offer.advisories)
        return SourceTools(tuple(tools), tuple(advisories))

    async def call(
        self,
        spec: AgentSpec,
        tool: SourceTool,
        arguments: dict[str, JsonValue],
        context: ToolContext,
        *,
        permitted: Collection[str] | None,
    ) -> JsonValue:
        """Send the model's message to the peer and follow the task it starts.

        The call is narrowed again first, however the model came by the name. The
        result is the task's state, text and artifacts; a task left waiting for
        input (``input-required``) is a result too, with its ``task_id`` so the
        model can answer it in a later call.

        Raises:
            SourceCallFailed: ``excluded``, ``invalid_arguments``,
                ``missing_credential``, ``egress_denied``, ``card_unverified``,
                ``unreachable`` and ``timeout`` (transient), ``unauthorized``,
                ``incompatible``, ``peer_error``, ``task_failed``, ``task_canceled``,
                ``task_rejected``.
        """
        peer = next((p for p in spec.a2a_peers if p.name == tool.owner), None)
        if peer is None or not admitted(peer, tool.remote_name, permitted):
            raise SourceCallFailed("excluded", f"{tool.name} is not available to this agent")
        text, task_id, context_id = _arguments(tool.name, arguments)
        try:
            return await self._exchange(
                peer, context.scope, text, task_id, context_id, context.idempotency_key
            )
        except A2AFailure as error:
            failed = error.failure
            raise SourceCallFailed(
                failed.kind, failed.message, transient=failed.transient
            ) from None

    async def close(self) -> None:
        """Close every open connection; the source stays usable and reconnects on demand."""
        await self._pool.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # --- offering -------------------------------------------------------------------

    async def _offer(
        self, peer: A2APeer, scope: Scope, permitted: Collection[str] | None
    ) -> _Offer:
        from psych_a2a._mapping import skill_definition  # deferred: the SDK's types

        offer = _Offer(peer)
        try:
            card = await self._card(peer, scope)
        except A2AFailure as error:
            offer.failure = error.failure
            offer.advisories.append(
                f"The agent {peer.name} is unavailable this turn ({error.failure.message})."
            )
            return offer
        for skill in card.skills:
            if not admitted(peer, skill.id, permitted):
                continue
            name = qualified(peer.name, skill.id)
            if not offerable(name):
                offer.advisories.append(
                    f"The agent {peer.name} offers a skill with id {skill.id!r}, which cannot "
                    "be named to the model; it was left out."
                )
                continue
            offer.tools.append(
                SourceTool(skill_definition(name, peer.name, skill), peer.name, skill.id)
            )
        return offer

    async def _card(self, peer: A2APeer, scope: Scope) -> "AgentCard":
        async def reading(conn: _Connection) -> "AgentCard":
            return await self._fresh_card(peer, conn)

        return await self._leased(peer, scope, reading)

    async def _fresh_card(self, peer: A2APeer, conn: _Connection) -> "AgentCard":
        """The peer's card, read again once ``card_ttl_seconds`` have passed."""
        now = time.monotonic()
        if conn.card is not None and self._ttl and now - conn.card_read_at <= self._ttl:
            return conn.card
        card = await self._read_card(peer, conn)
        if conn.card is None or conn.card.SerializeToString(
            deterministic=True
        ) != card.SerializeToString(deterministic=True):
            if conn.client is not None:
                await conn.client.close()
            conn.client = None
        conn.card, conn.card_read_at = card, now
        return card

    async def _read_card(self, peer: A2APeer, conn: _Connection) -> "AgentCard":
        from a2a.client.card_resolver import parse_agent_card
        from google.protobuf.json_format import ParseError  # type: ignore[import-untyped]

        url = card_url(peer.url)
        response: httpx.Response = await self._http(peer, conn, conn.http.get(url))
        if response.status_code != 200:
            raise A2AFailure(_status_failure(peer, response.status_code, "reading its Agent Card"))
        try:
            card = parse_agent_card(response.json())
        except (ValueError, ParseError) as error:
            message = f"agent {peer.name}: its Agent Card at {url} is not valid ({error})"
            raise A2AFailure(Failure("invalid_card", message, transient=False)) from None
        if self._verifier is not None and self._verifier.applies_to(peer.name):
            try:
                self._verifier.verify(card)
            except CardRefused as refused:
                message = f"agent {peer.name}: {refused}"
                raise A2AFailure(Failure("card_unverified", message, transient=False)) from None
        _check_extensions(peer, card)
        return card

    # --- calling --------------------------------------------------------------------

    async def _exchange(
        self,
        peer: A2APeer,
        scope: Scope,
        text: str,
        task_id: str | None,
        context_id: str | None,
        message_id: str,
    ) -> JsonValue:
        async def exchanging(conn: _Connection) -> JsonValue:
            client = await self._client(peer, conn)
            return await self._http(
                peer, conn, self._follow(peer, client, text, task_id, context_id, message_id)
            )

        return await self._leased(peer, scope, exchanging)

    async def _client(self, peer: A2APeer, conn: _Connection) -> "Client":
        from a2a.client import ClientConfig, ClientFactory

        card = await self._fresh_card(peer, conn)
        if conn.client is None:
            config = ClientConfig(
                streaming=card.capabilities.streaming,
                polling=not card.capabilities.streaming,
                httpx_client=conn.http,
                supported_protocol_bindings=list(BINDINGS),
            )
            try:
                conn.client = ClientFactory(config).create(card)
            except ValueError as error:
                message = (
                    f"agent {peer.name}: none of its interfaces speaks JSON-RPC or HTTP+JSON "
                    f"in a protocol version this client knows ({error})"
                )
                raise A2AFailure(Failure("incompatible", message, transient=False)) from None
        return conn.client

    async def _follow(
        self,
        peer: A2APeer,
        client: "Client",
        text: str,
        task_id: str | None,
        context_id: str | None,
        message_id: str,
    ) -> JsonValue:
        from a2a.types import (
            GetTaskRequest,
            Message,
            Part,
            Role,
            SendMessageRequest,
            Task,
        )

        from psych_a2a._mapping import PAUSED, SETTLED, merge_artifact, message_result

        message = Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)])
        if task_id:
            message.task_id = task_id
        if context_id:
            message.context_id = context_id
        message.extensions.extend(peer.extensions)
        request = SendMessageRequest(message=message, tenant=peer.tenant or "")
        task: Task | None = None
        async with asyncio.timeout(self._timeout):
            async for event in client.send_message(request):
                kind = event.WhichOneof("payload")
                if kind == "message":
                    return message_result(event.message)
                if kind == "task":
                    task = Task()
                    task.CopyFrom(event.task)
                elif kind == "status_update":
                    update = event.status_update
                    task = task or Task(id=update.task_id, context_id=update.context_id)
                    task.status.CopyFrom(update.status)
                elif kind == "artifact_update":
                    chunk = event.artifact_update
                    task = task or Task(id=chunk.task_id, context_id=chunk.context_id)
                    merge_artifact(task, chunk.artifact, append=chunk.append)
            if task is None:
                message_text = f"agent {peer.name} answered with neither a task nor a message"
                raise A2AFailure(Failure("peer_error", message_text, transient=False))
            # A stream that ended early, or a send answered at once: poll until done.
            while task.status.state not in SETTLED | PAUSED:
                await asyncio.sleep(self._poll)
                task = await client.get_task(GetTaskRequest(id=task.id, tenant=peer.tenant or ""))
        return _settled_result(peer, task)

    # --- plumbing -------------------------------------------------------------------

    async def _leased[T](self, peer: A2APeer, scope: Scope, work: Any) -> T:
        credential = await self._credential(peer, scope)
        await self._judge(peer, scope)
        key = _key(peer, scope, credential)

        async def opening() -> _Connection:
            from psych_a2a._egress import egress_client

            headers: dict[str, str] = {}  # the SDK adds A2A-Version for the interface chosen
            if credential is not None:
                headers["Authorization"] = f"{peer.scheme} {credential}"
            if peer.extensions:
                headers["A2A-Extensions"] = ",".join(peer.extensions)
            http, transport = egress_client(
                self._policy, scope, timeout=self._timeout, headers=headers
            )
            return _Connection(http, transport)

        async with self._pool.lease(key, opening) as conn:
            try:
                result: T = await work(conn)
            except A2AFailure as error:
                if error.failure.transient:
                    self._pool.discard(key, conn)
                raise
            return result

    async def _http[T](self, peer: A2APeer, conn: _Connection, step: Any) -> T:
        """Await ``step`` (HTTP through ``conn``); what goes wrong as an ``A2AFailure``."""
        conn.transport.failure = None
        conn.transport.error_status = None
        try:
            result: T = await step
        except A2AFailure:
            raise
        except TimeoutError:
            message = f"agent {peer.name} did not finish within {self._timeout:g}s"
            raise A2AFailure(Failure("timeout", message, transient=True)) from None
        except Exception as error:
            raise A2AFailure(_classify(peer, conn, error)) from None
        return result

    async def _judge(self, peer: A2APeer, scope: Scope) -> None:
        from psych_a2a._egress import judge

        try:
            await judge(self._policy, scope, card_url(peer.url))
        except EgressDenied as denied:
            message = f"agent {peer.name}: {denied}"
            raise A2AFailure(Failure("egress_denied", message, transient=False)) from None
        except Exception as error:  # a policy that fails refuses
            message = f"agent {peer.name}: the egress policy failed ({error!r})"
            raise A2AFailure(Failure("egress_denied", message, transient=False)) from None

    async def _credential(self, peer: A2APeer, scope: Scope) -> str | None:
        if peer.credential is None:
            return None
        resolved = None
        if self._secrets is not None:
            try:
                resolved = await self._secrets.resolve(scope, peer.credential)
            except Exception as error:  # the application's resolver: report, never crash
                message = (
                    f"agent {peer.name}: looking up the secret {peer.credential!r} failed "
                    f"({type(error).__name__})"
                )
                raise A2AFailure(Failure("missing_credential", message, transient=True)) from None
        if resolved is None:
            message = (
                f"agent {peer.name}: no secret {peer.credential!r} for tenant {scope.tenant!r}"
            )
            raise A2AFailure(Failure("missing_credential", message, transient=False))
        return resolved.secret.get_secret_value()


def card_url(url: str) -> str:
    """Where the Agent Card of the peer at ``url`` is read.

    A URL whose path ends in ``.json`` names the card itself; any other is the
    peer's base URL, under which the card sits at the well-known path.
    """
    if urlsplit(url).path.endswith(".json"):
        return url
    return url.rstrip("/") + WELL_KNOWN_CARD


def _arguments(name: str, arguments: dict[str, JsonValue]) -> tuple[str, str | None, str | None]:
    text = arguments.get("message")
    if not isinstance(text, str) or not text.strip():
        raise SourceCallFailed("invalid_arguments", f"{name} needs a non-empty 'message' string")
    ids: list[str | None] = []
    for field_name in ("task_id", "context_id"):
        value = arguments.get(field_name)
        if value is not None and (not isinstance(value, str) or len(value) > 256):
            raise SourceCallFailed(
                "invalid_arguments", f"{name}: '{field_name}' must be a string id"
            )
        ids.append(value or None)
    unknown = set(arguments) - {"message", "task_id", "context_id"}
    if unknown:
        raise SourceCallFailed("invalid_arguments", f"{name} takes no {', '.join(sorted(unknown))}")
    return text, ids[0], ids[1]


def _key(peer: A2APeer, scope: Scope, credential: str | None) -> PoolKey:
    digest = None
    if credential is not None:
        digest = hashlib.sha256(f"{peer.scheme} {credential}".encode()).hexdigest()
    return PoolKey(scope.tenant, scope.principal, peer.name, peer.url, digest, peer.extensions)


def _check_extensions(peer: A2APeer, card: "AgentCard") -> None:
    """Refuse a peer whose card requires an extension the Spec does not request."""
    missing = sorted(
        ext.uri
        for ext in card.capabilities.extensions
        if ext.required and ext.uri not in peer.extensions
    )
    if missing:
        message = (
            f"agent {peer.name} requires the A2A extension(s) {', '.join(missing)}, which the "
            "Spec does not request"
        )
        raise A2AFailure(Failure("incompatible", message, transient=False))


def _settled_result(peer: A2APeer, task: Any) -> JsonValue:
    from a2a.types import TaskState

    from psych_a2a._mapping import task_result

    result = task_result(task)
    state = task.status.state
    if state == TaskState.TASK_STATE_AUTH_REQUIRED:
        message = f"agent {peer.name} needs the caller to authenticate before it goes on"
        raise A2AFailure(Failure("unauthorized", message, transient=False))
    failed = {
        TaskState.TASK_STATE_FAILED: "task_failed",
        TaskState.TASK_STATE_CANCELED: "task_canceled",
        TaskState.TASK_STATE_REJECTED: "task_rejected",
    }.get(state)
    if failed is not None:
        said = result.get("text") or "no reason given"
        message = f"agent {peer.name}: the task ended {result['state']}: {said}"
        raise A2AFailure(Failure(failed, message, transient=False))
    return result


def _status_failure(peer: A2APeer, status: int, doing: str) -> Failure:
    if status in (401, 403):
        return Failure("unauthorized", f"agent {peer.name} refused {doing} ({status})", False)
    transient = status >= 500 or status == 429
    kind = "unreachable" if transient else "peer_error"
    return Failure(kind, f"agent {peer.name} answered {status} when {doing}", transient)


def _classify(peer: A2APeer, conn: _Connection, error: BaseException) -> Failure:
    """What went wrong talking to ``peer``, from the error and the transport's notes."""
    import httpx

    from psych_a2a._egress import RedirectRefused

    cause = conn.transport.failure or error
    if isinstance(cause, EgressDenied):
        return Failure("egress_denied", f"agent {peer.name}: {cause}", transient=False)
    if isinstance(cause, RedirectRefused):
        return Failure("redirected", f"agent {peer.name}: {cause}", transient=False)
    if isinstance(cause, httpx.TimeoutException):
        return Failure("timeout", f"agent {peer.name} did not answer in time", transient=True)
    if isinstance(cause, httpx.TransportError):
        message = f"agent {peer.name} cannot be reached ({type(cause).__name__}: {cause})"
        return Failure("unreachable", message, transient=True)
    status = conn.transport.error_status
    if status is not None:
        return _status_failure(peer, status, "a request")
    from a2a.client import A2AClientTimeoutError

    if isinstance(error, A2AClientTimeoutError):
        return Failure("timeout", f"agent {peer.name} did not answer in time", transient=True)
    message = f"agent {peer.name}: {type(error).__name__}: {error}"
    return Failure("peer_error", message[:2000], transient=False)


__all__ = ["BINDINGS", "WELL_KNOWN_CARD", "A2ATools", "PoolKey", "card_url"]
