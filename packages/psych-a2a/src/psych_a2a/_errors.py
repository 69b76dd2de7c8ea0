"""How the package reports a failure: a stable kind, a sentence, and a retry hint.

Free of the A2A SDK, so building an ``A2ATools`` (which every ``Runtime`` without
explicit tool sources does) costs no import of it.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Failure:
    """A failure reduced to what the runtime records.

    Attributes:
        kind: a stable classifier (``unreachable``, ``egress_denied``, ``card_unverified``...).
        message: a sentence for the model and the operator.
        transient: whether trying again later may work.
    """

    kind: str
    message: str
    transient: bool


class A2AFailure(Exception):
    """Talking to a peer failed; ``failure`` says how, in the runtime's kinds.

    Attributes:
        failure: the kind, message and retry hint.
    """

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


__all__ = ["A2AFailure", "Failure"]
