"""How the reducer says a log cannot be trusted.

A log that contradicts itself is never repaired: guessing which record is wrong
would let a writer bug silently change what a Run did. The reducer raises
:class:`CorruptLog` naming one :class:`CorruptionReason` instead, and callers decide
what to do (the writer refuses to append, a Worker releases the Run untouched).
"""

from enum import StrEnum

from psych_runtime.core.errors import PsychError
from psych_runtime.core.ids import RunId


class CorruptionReason(StrEnum):
    """The ways a log can contradict itself, one name per family of contradiction."""

    NON_CONSECUTIVE_SEQ = "non_consecutive_seq"
    """A record's position is not the one right after the previous record."""
    UNKNOWN_OPERATION = "unknown_operation"
    """A record belongs to another Run or tenant, or refers to something not open."""
    RECORD_AFTER_FINISH = "record_after_finish"
    """Anything at all after the Run settled, including a second settlement."""
    MULTIPLE_OPEN_OPERATIONS = "multiple_open_operations"
    """Something was opened twice where only one may be open at a time."""
    NON_CONSECUTIVE_ATTEMPT = "non_consecutive_attempt"
    """An attempt, turn or step-attempt number skipped or repeated."""
    QUEUE_AFTER_ABORT = "queue_after_abort"
    """A message for this Run was queued after it was asked to stop."""
    INVALID_QUEUE_CANCELLATION = "invalid_queue_cancellation"
    """A withdrawal of a queue entry that does not exist or is already closed."""
    INCONSISTENT_STEP = "inconsistent_step"
    """A workflow step's start and completion records do not pair up."""
    TOOL_CALL_MISMATCH = "tool_call_mismatch"
    """A tool call ending, or an approval, that names no open call."""
    DUPLICATE_TOOL_INVOCATION = "duplicate_tool_invocation"
    """A call id started a second time."""
    PROVISIONED_ENTRY_MISMATCH = "provisioned_entry_mismatch"
    """A queue entry id reused, or delivered when it cannot be."""
    INVALID_DEFERRED_HANDLE = "invalid_deferred_handle"
    """The model read a result handle the log never issued."""
    INVALID_COMPACTION_REASON = "invalid_compaction_reason"
    """A compaction replaced a range that is empty, inverted or not yet written."""
    INCONSISTENT_COST = "inconsistent_cost"
    """A priced call in a currency other than the Run's running total."""


class CorruptLog(PsychError):
    """A Run's log contradicts itself at one record.

    A ``PsychError`` like every error the library raises on purpose, so a consumer
    catching the library's errors in one place sees it too.

    Attributes:
        reason: which family of contradiction was found.
        run_id: the Run whose log it is.
        seq: the position of the offending record.
        detail: a sentence for the operator reading the error.
    """

    def __init__(self, reason: CorruptionReason, run_id: RunId, seq: int, detail: str) -> None:
        super().__init__(reason, run_id, seq, detail)
        self.reason = reason
        self.run_id = run_id
        self.seq = seq
        self.detail = detail

    def __str__(self) -> str:
        return f"corrupt log for run {self.run_id} at seq {self.seq} ({self.reason}): {self.detail}"


__all__ = ["CorruptLog", "CorruptionReason"]
