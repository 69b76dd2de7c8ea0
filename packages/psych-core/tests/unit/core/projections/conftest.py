"""What the projection tests write their logs with."""

from psych_runtime.testing import LogBuilder


def asking_for(log: LogBuilder, *call_ids: str, **answer: object) -> LogBuilder:
    """``log`` with one more turn, whose model call answers by asking for ``call_ids``.

    ``answer`` goes to ``model_finished``: text said alongside the calls, say.
    """
    return (
        log.turn()
        .model_started()
        .model_finished(tool_calls=call_ids, finish_reason="tool_calls", **answer)
    )
