"""When a failed workflow step is tried again, and after how long."""

from psych_runtime.core.spec.workflow import RetryPolicy

NEVER_RETRIED = frozenset({"denied"})
"""Failure kinds no retry policy retries: a person said no."""

ONLY_WHEN_NAMED = frozenset({"orphaned"})
"""Failure kinds retried only when ``retry_on`` names them: the step may have acted."""


def backoff(policy: RetryPolicy, attempt: int) -> float:
    """Seconds to wait before attempt ``attempt`` (1 is the first, never delayed)."""
    if attempt <= 1 or policy.backoff_seconds == 0:
        return 0.0
    delay = policy.backoff_seconds * policy.multiplier ** (attempt - 2)
    return min(delay, policy.max_backoff_seconds)


def will_retry(policy: RetryPolicy, kind: str, attempts_made: int) -> bool:
    """Whether a step that failed with ``kind`` after ``attempts_made`` tries again."""
    if attempts_made >= policy.max_attempts or kind in NEVER_RETRIED:
        return False
    if kind in ONLY_WHEN_NAMED:
        return kind in policy.retry_on
    return not policy.retry_on or kind in policy.retry_on


__all__ = ["NEVER_RETRIED", "ONLY_WHEN_NAMED", "backoff", "will_retry"]
