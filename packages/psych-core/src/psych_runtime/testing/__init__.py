"""Helpers for testing code built on Psych Runtime, shipped so users get them too.

``FakeModel`` (a scriptable model client), ``crash_and_recover`` (kill an Attempt
at a chosen record and watch another Worker recover it) ``settled_log`` (wait for a
Run to end and read its log), ``worker_in_background`` (a Worker that runs for the
length of a block) and ``FAST_WORKER`` (Worker settings that reclaim a lost Run within
a second) are importable from here, and
so is ``LogBuilder``, which builds a log record by record for folding::

    from psych_runtime.core.reducer import reduce
    from psych_runtime.testing import LogBuilder

    log = LogBuilder().admitted().attempt().turn().model_started().model_finished()
    assert reduce(log.build()).model_calls == 1
"""

from typing import TYPE_CHECKING

from psych_runtime.plugins.offer import lazy_exports
from psych_runtime.testing.log_builder import LogBuilder

if TYPE_CHECKING:
    from psych_runtime.testing.background import FAST_WORKER
    from psych_runtime.testing.background import worker_in_background
    from psych_runtime.testing.crash import CrashingStore
    from psych_runtime.testing.crash import CrashRecovery
    from psych_runtime.testing.crash import crash_and_recover
    from psych_runtime.testing.fake_model import FakeModel
    from psych_runtime.testing.fake_model import ToolCallScript
    from psych_runtime.testing.forwarding import ForwardingStore
    from psych_runtime.testing.models_by_name import ModelsByName
    from psych_runtime.testing.settled import settled_log

_LAZY = {
    "FAST_WORKER": "psych_runtime.testing.background",
    "FakeModel": "psych_runtime.testing.fake_model",
    "ToolCallScript": "psych_runtime.testing.fake_model",
    "CrashRecovery": "psych_runtime.testing.crash",
    "CrashingStore": "psych_runtime.testing.crash",
    "crash_and_recover": "psych_runtime.testing.crash",
    "ForwardingStore": "psych_runtime.testing.forwarding",
    "ModelsByName": "psych_runtime.testing.models_by_name",
    "settled_log": "psych_runtime.testing.settled",
    "worker_in_background": "psych_runtime.testing.background",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "FAST_WORKER",
    "CrashRecovery",
    "CrashingStore",
    "FakeModel",
    "ForwardingStore",
    "LogBuilder",
    "ModelsByName",
    "ToolCallScript",
    "crash_and_recover",
    "settled_log",
    "worker_in_background",
]
