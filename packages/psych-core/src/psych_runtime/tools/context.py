"""What a running tool may learn about the call it serves.

A tool opts in by annotating one parameter with ``ToolContext``; that parameter is
hidden from the model and filled by the runtime. The idempotency key lets a tool with a
side effect (a payment, an email) deduplicate when a crashed call is executed again.
"""

import hashlib
from dataclasses import dataclass

from psych_runtime.core.ids import AttemptId
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.scope import Scope

_KEY_PREFIX = "idk_"


def idempotency_key_for(run_id: str, call_id: str) -> str:
    """Derive the idempotency key of one tool call.

    The key depends only on the Run and the call id, both of which survive a reclaim,
    so a tool re-executed by a second Worker presents the same key to the downstream
    service as the first execution did. The run id is length-prefixed before hashing so
    that no two different (run, call) pairs can produce the same input.

    Args:
        run_id: the Run the call belongs to.
        call_id: the tool call's id, as recorded in ``tool_call_started``.

    Returns:
        ``idk_`` followed by the hex SHA-256 digest.
    """
    material = f"{len(run_id)}:{run_id}{call_id}".encode()
    return _KEY_PREFIX + hashlib.sha256(material).hexdigest()


@dataclass(frozen=True, slots=True)
class ToolContext:
    """The identity of one tool call, handed to tools that ask for it.

    Attributes:
        run_id: the Run making the call.
        call_id: the call's id; unchanged when a reclaimed Run executes it again.
        scope: the tenant and principal the call acts for; use it for access checks
            and for choosing per-tenant credentials.
        idempotency_key: stable across reclaims; forward it to services that
            deduplicate requests.
        attempt_id: the Attempt executing the call; differs after a reclaim, which is
            how a tool can tell a re-execution apart in its own logs.
    """

    run_id: RunId
    call_id: ToolCallId
    scope: Scope
    idempotency_key: str
    attempt_id: AttemptId

    @classmethod
    def for_call(
        cls,
        *,
        run_id: RunId,
        call_id: ToolCallId,
        scope: Scope,
        attempt_id: AttemptId,
    ) -> "ToolContext":
        """Build a context whose idempotency key is derived from the run and call ids.

        Prefer this to the constructor so every caller derives the key the same way.
        """
        return cls(
            run_id=run_id,
            call_id=call_id,
            scope=scope,
            idempotency_key=idempotency_key_for(run_id, call_id),
            attempt_id=attempt_id,
        )


__all__ = ["ToolContext", "idempotency_key_for"]
