"""Logs that more than one reading of a Run's history is tested against."""

from psych_runtime.core.records import ToolOutcome
from psych_runtime.testing.log_builder import LogBuilder

FIRST_SUMMARY = "FIRST"
SECOND_SUMMARY = "SECOND, which covers FIRST"


def twice_compacted() -> LogBuilder:
    """Three turns answering "one", "two" and "three", compacted after each of the first two.

    The first compaction replaces the first turn with ``FIRST_SUMMARY``; the second
    replaces everything after it up to the end of the second turn with ``SECOND_SUMMARY``.
    """
    log = LogBuilder().first_model_call(input={"message": "start"}).model_finished(text="one")
    first_end = len(log.records)
    log.compacted(1, first_end, summary=FIRST_SUMMARY)
    log.turn().model_started().model_finished(text="two")
    log.compacted(first_end + 1, len(log.records), summary=SECOND_SUMMARY)
    log.turn().model_started().model_finished(text="three")
    return log


def cut_short_turn() -> LogBuilder:
    """A turn a crash cut short: the model asked for c1 and c2; only c1 had started.

    The next Attempt settled c1 with an unknown outcome; c2 never started.
    """
    return (
        LogBuilder()
        .first_model_call(input={"message": "charge and email"})
        .model_finished(tool_calls=("c1", "c2"), finish_reason="tool_calls")
        .tool_started("c1", tool="charge", arguments={"amount": 5})
        .attempt(reclaimed=True)
        .tool_finished("c1", outcome=ToolOutcome.UNKNOWN)
    )
