"""How every part of the package reports a failure: a kind, a message, a retry hint.

Kept free of the MCP SDK so that building an ``McpTools`` (which every ``Runtime``
without explicit tool sources does) costs no import of it.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Failure:
    """A failure reduced to what the runtime records.

    Attributes:
        kind: a stable classifier (``unreachable``, ``egress_denied``...).
        message: a sentence for the model and the operator.
        transient: whether trying again later may work.
    """

    kind: str
    message: str
    transient: bool


class McpFailure(Exception):
    """Talking to a server failed; ``failure`` says how, in the runtime's kinds.

    Attributes:
        failure: the kind, message and retry hint.
        challenge: for an ``unauthorized`` failure, the refusing answer's status (401
            or 403) and its ``WWW-Authenticate`` header (None when absent), as the
            connection's transport saw them; None otherwise.
    """

    def __init__(
        self, failure: Failure, *, challenge: tuple[int, str | None] | None = None
    ) -> None:
        super().__init__(failure.message)
        self.failure = failure
        self.challenge = challenge


__all__ = ["Failure", "McpFailure"]
