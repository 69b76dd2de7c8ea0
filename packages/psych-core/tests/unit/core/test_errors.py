"""The error hierarchy: everything the library raises on purpose is a PsychError."""

from psych_runtime.core.corruption import CorruptionReason
from psych_runtime.core.corruption import CorruptLog
from psych_runtime.core.errors import PsychError
from psych_runtime.core.ids import RunId


def test_corrupt_log_is_caught_with_the_library_errors() -> None:
    error = CorruptLog(CorruptionReason.RECORD_AFTER_FINISH, RunId("r-1"), 7, "late record")
    assert isinstance(error, PsychError)
    assert str(error) == ("corrupt log for run r-1 at seq 7 (record_after_finish): late record")
