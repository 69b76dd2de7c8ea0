"""Deterministic step ids: the same Run and step path always give the same id.

A step's path is the workflow's name, the step's index and name, and, inside a
composite step, the child's own elements (a branch's case, an item's index, a loop's
iteration). Hashing the Run id with the path means a Worker that replays the log after
a crash finds each completed step under the id it computes, and reads its output back
instead of running it again.
"""

import hashlib
from collections.abc import Sequence

from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import StepId

_SEPARATOR = b"\x1f"


def step_id(run_id: RunId, path: Sequence[str | int]) -> StepId:
    """The id of the step at ``path`` in ``run_id``: ``stp_`` and 32 hex digits.

    Each element is tagged with its type, so the index 1 and the name "1" never
    collide.
    """
    digest = hashlib.sha256(run_id.encode())
    for element in path:
        digest.update(_SEPARATOR)
        digest.update(b"i" if isinstance(element, int) else b"s")
        digest.update(str(element).encode())
    return StepId("stp_" + digest.hexdigest()[:32])


__all__ = ["step_id"]
