"""A Worker refuses settings it could never run with, when it is built."""

import pytest

from psych_runtime.runtime.runtime import Runtime
from psych_runtime.runtime.worker import Worker
from psych_runtime.store.memory import InMemoryStore
from psych_runtime.testing import FakeModel
from psych_runtime.tools.registry import ToolRegistry


def _worker(**options: float) -> Worker:
    store = InMemoryStore()
    return Worker(store, Runtime(store, FakeModel(), ToolRegistry()), **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"concurrency": 0}, "concurrency must be at least 1"),
        ({"max_attempts": 0}, "max_attempts must be at least 1"),
        ({"lease_seconds": 5, "heartbeat_seconds": 5}, "heartbeat_seconds must be shorter"),
    ],
)
def test_impossible_settings_are_refused(options: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _worker(**options)


def test_sensible_settings_are_kept() -> None:
    worker = _worker(concurrency=2, max_attempts=1, lease_seconds=5, heartbeat_seconds=1)
    assert (worker.concurrency, worker.max_attempts) == (2, 1)
