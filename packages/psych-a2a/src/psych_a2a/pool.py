"""``A2APool``: the process's connections to A2A peers, shared by every Run of every tenant.

Build one per process and hand it to every ``A2ATools``. Isolation comes from the key
alone (``A2APoolKey``): the Run's tenant and principal, the peer's name in the Spec,
where its card is read, a digest of the credential sent and the extensions requested.

A connection is an HTTP client whose transport asks the egress policy about every
request (the card fetch, a message, the task's stream, a poll), with no redirects,
plus the peer's Agent Card as last read (reused for ``card_ttl_seconds``, its
signature checked when a ``CardVerifier`` covers the peer) and the SDK client made
from it. A call sends the model's message to the peer over the binding the card
prefers among JSON-RPC and HTTP+JSON and follows the task: by streaming when the
card says the peer streams, else by polling, until it settles or waits for input.
"""

import asyncio
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any
from typing import ClassVar
from urllib.parse import urlsplit

from pydantic import JsonValue

from psych_a2a.cards import CardRefused
from psych_a2a.cards import CardVerifier
from psych_runtime import HttpTransport
from psych_runtime import Scope
from psych_runtime import SecretResolver
from psych_runtime.adapters.tools import AnyPolicy
from psych_runtime.adapters.tools import Catalogue
from psych_runtime.adapters.tools import RemoteError
from psych_runtime.adapters.tools import RemoteFailure
from psych_runtime.adapters.tools import RemotePool
from psych_runtime.adapters.tools import credential_digest
from psych_runtime.adapters.tools import failure_of
from psych_runtime.adapters.tools import failure_of_status
from psych_runtime.spec import A2APeer

if TYPE_CHECKING:
    import httpx
    from a2a.client import Client
    from a2a.types import AgentCard
    from a2a.types import Task

    from psych_runtime.adapters.tools import EgressTransport

WELL_KNOWN_CARD = "/.well-known/agent-card.json"
"""Where a peer publishes its Agent Card, under its base URL."""

BINDINGS = ("JSONRPC", "HTTP+JSON")
"""The protocol bindings spoken, in the order they are preferred."""


@dataclass(frozen=True, slots=True)
class A2APoolKey:
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
    card: "Catalogue[AgentCard]"
    client: "Client | None" = None
    broken: bool = False

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()
        await self.http.aclose()


class A2APool(RemotePool[A2APeer, A2APoolKey, _Connection]):
    """Connections to A2A peers by ``A2APoolKey``; one per process serves every Run.

    Args:
        transport: the Runtime's ``HttpTransport``; its egress policy judges every request.
        secrets: where a peer's ``credential`` name is looked up for the Run's tenant.
        card_ttl_seconds: how long a card is reused before it is read again.
        egress: the policy to use when no ``transport`` is given; ``EgressPolicy()``
            (which refuses private and loopback addresses) when neither is.
        verifier: checks the Agent Cards of the peers it covers; a card that fails is
            refused (the peer is unavailable, ``card_unverified``). None checks none.
        max_connections: how many peer connections stay open at once.
        idle_seconds: how long an unused connection stays open.
        timeout_seconds: how long reading a card, and each call from sending the
            message to the task settling, may take.
        poll_seconds: the pause between two reads of a task that is still working.

    Raises:
        ValueError: a limit is out of range, or both ``transport`` and ``egress``
            are given.
        TypeError: ``transport`` is not an ``HttpTransport``.
    """

    noun: ClassVar[str] = "agent"
    ttl_name: ClassVar[str] = "card_ttl_seconds"

    def __init__(
        self,
        *,
        transport: HttpTransport | None = None,
        secrets: SecretResolver | None = None,
        card_ttl_seconds: float = 300.0,
        egress: AnyPolicy | None = None,
        verifier: CardVerifier | None = None,
        max_connections: int = 64,
        idle_seconds: float = 300.0,
        timeout_seconds: float = 120.0,
        poll_seconds: float = 0.5,
    ) -> None:
        super().__init__(
            transport=transport,
            egress=egress,
            secrets=secrets,
            ttl_seconds=card_ttl_seconds,
            max_connections=max_connections,
            idle_seconds=idle_seconds,
            timeout_seconds=timeout_seconds,
        )
        if isinstance(poll_seconds, bool) or not isinstance(poll_seconds, int | float):
            raise ValueError(f"poll_seconds must be a number of seconds, not {poll_seconds!r}")
        if poll_seconds <= 0:
            raise ValueError(f"poll_seconds must be positive, got {poll_seconds}")
        self._verifier = verifier
        self._poll = float(poll_seconds)

    def key(self, peer: A2APeer, scope: Scope, credential: str | None) -> A2APoolKey:
        """The key of ``peer`` for ``scope``, carrying ``credential`` (a digest of it)."""
        sent = None if credential is None else f"{peer.scheme} {credential}"
        digest = credential_digest(sent)
        return A2APoolKey(*scope.pool_key, peer.name, peer.url, digest, peer.extensions)

    async def card(self, peer: A2APeer, scope: Scope) -> "AgentCard":
        """The peer's Agent Card for ``scope``, read again once ``card_ttl_seconds`` passed.

        Raises:
            RemoteError: the card could not be read, or was refused.
        """

        async def reading(conn: _Connection) -> "AgentCard":
            return await self._fresh_card(peer, conn)

        return await self._leased(peer, scope, reading)

    async def exchange(
        self,
        peer: A2APeer,
        scope: Scope,
        text: str,
        *,
        task_id: str | None,
        context_id: str | None,
        message_id: str,
    ) -> JsonValue:
        """Send ``text`` to the peer and follow the task it starts (or continues).

        Returns:
            The task's state, text and artifacts (``input-required`` is a result too).

        Raises:
            RemoteError: the exchange failed, or the task ended failed, canceled or
                rejected.
        """

        async def exchanging(conn: _Connection) -> JsonValue:
            follow = self._follow(peer, conn, text, task_id, context_id, message_id)
            return await self._http(peer, conn, follow)

        return await self._leased(peer, scope, exchanging)

    # --- cards ----------------------------------------------------------------------

    async def _fresh_card(self, peer: A2APeer, conn: _Connection) -> "AgentCard":
        """The peer's card, read again once ``card_ttl_seconds`` have passed."""
        now = time.monotonic()
        cached = self.fresh(conn.card, now)
        if cached is not None:
            return cached
        card = await self._read_card(peer, conn)
        known = conn.card.value
        if known is None or known.SerializeToString(deterministic=True) != card.SerializeToString(
            deterministic=True
        ):
            if conn.client is not None:
                await conn.client.close()
            conn.client = None
        conn.card.keep(card, now)
        return card

    async def _read_card(self, peer: A2APeer, conn: _Connection) -> "AgentCard":
        from a2a.client.card_resolver import parse_agent_card
        from google.protobuf.json_format import ParseError  # type: ignore[import-untyped]

        url = card_url(peer.url)
        response: httpx.Response = await self._http(peer, conn, conn.http.get(url))
        if response.status_code != 200:
            raise RemoteError(
                failure_of_status(response.status_code, self.label(peer), "reading its Agent Card")
            )
        try:
            card = parse_agent_card(response.json())
        except (ValueError, ParseError) as error:
            message = f"agent {peer.name}: its Agent Card at {url} is not valid ({error})"
            raise RemoteError(RemoteFailure("invalid_card", message, transient=False)) from None
        if self._verifier is not None and self._verifier.applies_to(peer.name):
            try:
                self._verifier.verify(card)
            except CardRefused as refused:
                message = f"agent {peer.name}: {refused}"
                raise RemoteError(RemoteFailure("card_unverified", message, False)) from None
        _check_extensions(peer, card)
        return card

    # --- calling --------------------------------------------------------------------

    async def _client(self, peer: A2APeer, conn: _Connection) -> "Client":
        from a2a.client import ClientConfig
        from a2a.client import ClientFactory

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
                raise RemoteError(RemoteFailure("incompatible", message, False)) from None
        return conn.client

    async def _follow(
        self,
        peer: A2APeer,
        conn: _Connection,
        text: str,
        task_id: str | None,
        context_id: str | None,
        message_id: str,
    ) -> JsonValue:
        from a2a.types import GetTaskRequest
        from a2a.types import Message
        from a2a.types import Part
        from a2a.types import Role
        from a2a.types import SendMessageRequest

        from psych_a2a._mapping import PAUSED
        from psych_a2a._mapping import SETTLED
        from psych_a2a._mapping import message_result

        client = await self._client(peer, conn)
        message = Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)])
        if task_id:
            message.task_id = task_id
        if context_id:
            message.context_id = context_id
        message.extensions.extend(peer.extensions)
        request = SendMessageRequest(message=message, tenant=peer.tenant or "")
        async with asyncio.timeout(self.timeout_seconds):
            task = None
            try:
                async for event in client.send_message(request):
                    if event.WhichOneof("payload") == "message":
                        return message_result(event.message)
                    task = _fold(task, event)
            except Exception as error:
                # A stream cut after the peer took the task on (it named it) is not
                # the task failing: the task goes on at the peer, so it is followed
                # by polling below. Anything else is the exchange failing.
                if task is None or not task.id or not self._cut(peer, conn, error):
                    raise
            if task is None:
                said = f"agent {peer.name} answered with neither a task nor a message"
                raise RemoteError(RemoteFailure("protocol_error", said, transient=False))
            # A stream that ended early, or a send answered at once: poll until done.
            while task.status.state not in SETTLED | PAUSED:
                await asyncio.sleep(self._poll)
                conn.transport.forget()
                task = await client.get_task(GetTaskRequest(id=task.id, tenant=peer.tenant or ""))
        return _settled_result(peer, task)

    def _cut(self, peer: A2APeer, conn: _Connection, error: Exception) -> bool:
        """Whether ``error`` is the connection failing (worth following up), not the peer."""
        failure = failure_of(error, self.label(peer), conn.transport, explain=_sdk_timeout)
        return failure.kind == "unreachable"

    # --- plumbing -------------------------------------------------------------------

    async def _leased[T](self, peer: A2APeer, scope: Scope, work: Any) -> T:
        credential = await self.credential(peer, scope)
        await self.judge(peer, scope, card_url(peer.url))

        async def opening() -> _Connection:
            from psych_runtime.adapters.tools import egress_client

            headers: dict[str, str] = {}  # the SDK adds A2A-Version for the interface chosen
            if credential is not None:
                headers["Authorization"] = f"{peer.scheme} {credential}"
            if peer.extensions:
                headers["A2A-Extensions"] = ",".join(peer.extensions)
            http, transport = egress_client(
                self.policy, scope, timeout=self.timeout_seconds, headers=headers
            )
            return _Connection(http, transport, Catalogue())

        result: T = await self.on_connection(
            self.key(peer, scope, credential),
            opening,
            work,
            discard=lambda error, _: error.failure.transient,
        )
        return result

    async def _http[T](self, peer: A2APeer, conn: _Connection, step: Awaitable[T]) -> T:
        """Await ``step`` (HTTP through ``conn``); what goes wrong as a ``RemoteError``."""
        conn.transport.forget()
        try:
            return await step
        except RemoteError:
            raise
        except TimeoutError:
            message = f"agent {peer.name} did not finish within {self.timeout_seconds:g}s"
            raise RemoteError(RemoteFailure("timeout", message, transient=True)) from None
        except Exception as error:
            raise RemoteError(
                failure_of(error, self.label(peer), conn.transport, explain=_sdk_timeout)
            ) from None


def card_url(url: str) -> str:
    """Where the Agent Card of the peer at ``url`` is read.

    A URL whose path ends in ``.json`` names the card itself; any other is the
    peer's base URL, under which the card sits at the well-known path.
    """
    if urlsplit(url).path.endswith(".json"):
        return url
    return url.rstrip("/") + WELL_KNOWN_CARD


def _fold(task: "Task | None", event: Any) -> "Task":
    """``task`` with one streamed event (the task, a status or an artifact update) applied."""
    from a2a.types import Task

    from psych_a2a._mapping import merge_artifact

    kind = event.WhichOneof("payload")
    if kind == "task":
        folded = Task()
        folded.CopyFrom(event.task)
        return folded
    if kind == "status_update":
        update = event.status_update
        folded = task or Task(id=update.task_id, context_id=update.context_id)
        folded.status.CopyFrom(update.status)
        return folded
    if kind == "artifact_update":
        chunk = event.artifact_update
        folded = task or Task(id=chunk.task_id, context_id=chunk.context_id)
        merge_artifact(folded, chunk.artifact, append=chunk.append)
        return folded
    return task if task is not None else Task()


def _sdk_timeout(error: BaseException) -> RemoteFailure | None:
    from a2a.client import A2AClientTimeoutError

    if isinstance(error, A2AClientTimeoutError):
        return RemoteFailure("timeout", "the agent did not answer in time", transient=True)
    return None


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
        raise RemoteError(RemoteFailure("incompatible", message, transient=False))


def _settled_result(peer: A2APeer, task: Any) -> JsonValue:
    from a2a.types import TaskState

    from psych_a2a._mapping import task_result

    result = task_result(task)
    state = task.status.state
    if state == TaskState.TASK_STATE_AUTH_REQUIRED:
        message = f"agent {peer.name} needs the caller to authenticate before it goes on"
        raise RemoteError(RemoteFailure("unauthorized", message, transient=False))
    failed = {
        TaskState.TASK_STATE_FAILED: "task_failed",
        TaskState.TASK_STATE_CANCELED: "task_canceled",
        TaskState.TASK_STATE_REJECTED: "task_rejected",
    }.get(state)
    if failed is not None:
        said = result.get("text") or "no reason given"
        message = f"agent {peer.name}: the task ended {result['state']}: {said}"
        raise RemoteError(RemoteFailure(failed, message, transient=False))
    return result


__all__ = ["BINDINGS", "WELL_KNOWN_CARD", "A2APool", "A2APoolKey", "card_url"]
