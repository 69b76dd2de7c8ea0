"""One vocabulary of failures for every remote tool source.

An MCP server and an A2A peer fail in the same ways: the secret is missing, the
egress policy refuses the address, nobody answers, the answer makes no sense, the
tool itself says no. A source reports each such event with the same kind, so a
model, a retry rule or a dashboard reading ``ToolFailure.kind`` never needs to know
which protocol was behind a tool. ``FAILURE_KINDS`` lists the shared words and
what each means; a source may add kinds of its own for events only it has (an A2A
task that ended ``rejected``, say), but never a second word for a shared event.

The classifiers here read what an SDK raised together with the notes of the
connection's ``GatedTransport``, because SDKs often wrap the real cause (a refused
connection, an egress refusal) into something generic.
"""

from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final
from typing import Protocol

from psych_runtime.egress.gated import RedirectRefusal
from psych_runtime.egress.policy import EgressDenied

FAILURE_KINDS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "excluded": "the Spec's allow rules or the tenant's plane do not admit the tool",
        "invalid_arguments": "the arguments are not what the tool takes",
        "missing_credential": "the named secret does not exist for the tenant "
        "(transient when the secret resolver itself failed)",
        "egress_denied": "the egress policy refuses the address",
        "redirect_refused": "the server answered with a redirect, which is never followed",
        "unauthorized": "the server refused the credential, or a person must authorize first",
        "unreachable": "nobody answered, the connection was lost, or the server is "
        "failing for now (HTTP 5xx or 429); transient",
        "timeout": "the server did not answer in time; transient",
        "protocol_error": "the server answered something that cannot be used",
        "incompatible": "the server speaks no protocol version or binding this client knows",
        "tool_error": "the server ran the request and it failed, or refused it",
    }
)
"""The kinds every remote tool source reports shared events with, and what each means."""


@dataclass(frozen=True, slots=True)
class RemoteFailure:
    """A failure reduced to what the runtime records.

    Attributes:
        kind: one of ``FAILURE_KINDS``, or a kind only this source has.
        message: a sentence for the model and the operator.
        transient: whether trying again later may work.
    """

    kind: str
    message: str
    transient: bool


class RemoteError(Exception):
    """Talking to a server or peer failed; ``failure`` says how.

    Attributes:
        failure: the kind, message and retry hint.
        challenge: for an ``unauthorized`` failure, the refusing answer's status (401
            or 403) and its ``WWW-Authenticate`` header (None when absent), when the
            transport saw one; None otherwise.
    """

    def __init__(
        self, failure: RemoteFailure, *, challenge: tuple[int, str | None] | None = None
    ) -> None:
        super().__init__(failure.message)
        self.failure = failure
        self.challenge = challenge


class TransportNotes(Protocol):
    """What a ``GatedTransport`` remembers of the requests it sent."""

    @property
    def timeout_errors(self) -> tuple[type[BaseException], ...]:
        """Errors of its HTTP library that mean no answer came in time."""
        ...

    @property
    def transport_errors(self) -> tuple[type[BaseException], ...]:
        """Errors of its HTTP library that mean the other side could not be reached."""
        ...

    @property
    def failure(self) -> BaseException | None:
        """The last error a request ended with."""
        ...

    @property
    def error_status(self) -> int | None:
        """The last HTTP status of 400 or above."""
        ...


def leaves(error: BaseException) -> Iterator[BaseException]:
    """Every exception inside ``error``'s groups and causes, outermost first."""
    seen: set[int] = set()
    pending = [error]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        if current.__cause__ is not None:
            pending.append(current.__cause__)


def failure_of_error(
    error: BaseException, label: str, notes: TransportNotes | None = None
) -> RemoteFailure | None:
    """What one exception says by itself, or None when it says nothing specific.

    Args:
        error: one exception (see ``leaves`` for groups).
        label: who was talked to, for the message (``MCP server crm``).
        notes: the transport whose library's timeout and connection errors count.
    """
    timeouts: tuple[type[BaseException], ...] = (TimeoutError,)
    unreachable: tuple[type[BaseException], ...] = (OSError,)
    if notes is not None:
        timeouts += notes.timeout_errors
        unreachable += notes.transport_errors
    if isinstance(error, EgressDenied):
        return RemoteFailure("egress_denied", f"{label}: {error}", transient=False)
    if isinstance(error, RedirectRefusal):
        return RemoteFailure("redirect_refused", f"{label}: {error}", transient=False)
    if isinstance(error, timeouts):
        return RemoteFailure("timeout", f"{label} did not answer in time", transient=True)
    if isinstance(error, unreachable):
        detail = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        return RemoteFailure("unreachable", f"{label} is unreachable ({detail})", True)
    return None


def failure_of_status(status: int, label: str, doing: str) -> RemoteFailure:
    """What an HTTP error status means while ``doing`` something with ``label``."""
    if status in (401, 403):
        return RemoteFailure("unauthorized", f"{label} refused {doing} (HTTP {status})", False)
    transient = status >= 500 or status == 429
    kind = "unreachable" if transient else "protocol_error"
    return RemoteFailure(kind, f"{label} answered HTTP {status} while {doing}", transient)


def failure_of(
    error: BaseException,
    label: str,
    notes: TransportNotes | None,
    *,
    explain: Callable[[BaseException], RemoteFailure | None] | None = None,
) -> RemoteFailure:
    """Classify ``error``: its own leaves first, then the transport's notes.

    The order: an exception among the leaves that says what happened by itself (an
    egress refusal, a timeout, a failed connection); the transport's last failure; a
    401 or 403 it saw; ``explain`` over the leaves; any other error status; and
    ``protocol_error`` for what nothing explains.

    Args:
        error: what the SDK raised.
        label: who was talked to, for the message.
        notes: the connection's transport, when there is one.
        explain: reads an SDK's own errors (a JSON-RPC error, a client timeout).
    """
    found = list(leaves(error))
    for leaf in found:
        specific = failure_of_error(leaf, label, notes)
        if specific is not None:
            return specific
    if notes is not None and notes.failure is not None:
        specific = failure_of_error(notes.failure, label, notes)
        if specific is not None:
            return specific
    status = notes.error_status if notes is not None else None
    if status in (401, 403):
        message = f"{label} refused the credential (HTTP {status})"
        return RemoteFailure("unauthorized", message, transient=False)
    if explain is not None:
        for leaf in found:
            explained = explain(leaf)
            if explained is not None:
                return explained
    if status is not None:
        return failure_of_status(status, label, "sending a request")
    detail = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return RemoteFailure("protocol_error", f"{label} failed: {detail}"[:2000], transient=False)


__all__ = [
    "FAILURE_KINDS",
    "RemoteError",
    "RemoteFailure",
    "TransportNotes",
    "failure_of",
    "failure_of_error",
    "failure_of_status",
    "leaves",
]
