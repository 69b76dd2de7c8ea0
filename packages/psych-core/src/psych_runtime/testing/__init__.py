"""Helpers for testing code built on Psych Runtime, shipped so users get them too.

Build a log record by record and fold it::

    from psych_runtime.core.reducer import reduce
    from psych_runtime.testing import LogBuilder

    log = LogBuilder().admitted().attempt().turn().model_started().model_finished()
    assert reduce(log.build()).model_calls == 1
"""

from psych_runtime.testing.log_builder import LogBuilder

__all__ = ["LogBuilder"]
