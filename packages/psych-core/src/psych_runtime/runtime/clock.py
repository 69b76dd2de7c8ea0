"""The runtime's wall clock. The core never reads it; records carry what it said."""

from datetime import UTC
from datetime import datetime


def utcnow() -> datetime:
    """The current time, timezone-aware, in UTC."""
    return datetime.now(UTC)
