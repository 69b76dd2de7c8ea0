"""A Telemetry adapter that keeps everything in lists, to test the runtime alone."""

import types
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import pytest

from psych_runtime.adapters import FinishedSpan
from psych_runtime.adapters import TelemetryBackend
from psych_runtime.adapters import offer_telemetry
from psych_runtime.adapters import reset_plugin_manager


@dataclass
class RecordedSpan:
    """A span the recording telemetry below keeps, as plain data."""

    name: str
    span_id: str
    parent_id: str | None
    carrier_in: dict[str, str] | None
    attributes: dict[str, Any]
    kind: str = "internal"
    start_time: Any = None
    error: str | None = None
    ended: bool = False

    def set_attributes(self, attributes: Any) -> None:
        self.attributes.update(attributes)

    def end(self, *, error: str | None = None) -> None:
        self.error, self.ended = error, True

    def carrier(self) -> dict[str, str]:
        return {"traceparent": f"00-{'1' * 32}-{self.span_id}-01"}


@dataclass
class RecordingTelemetry:
    """A Telemetry adapter that keeps everything in lists, to test the runtime alone."""

    enabled: bool = True
    spans: list[RecordedSpan] = field(default_factory=list)
    measurements: list[tuple[str, float, dict[str, Any]]] = field(default_factory=list)

    def start_span(
        self,
        name: str,
        attributes: Any,
        *,
        parent: Any = None,
        carrier: Any = None,
        kind: str = "internal",
        start_time: Any = None,
    ) -> RecordedSpan:
        span = RecordedSpan(
            name,
            f"{len(self.spans) + 1:016x}",
            parent.span_id if parent is not None else None,
            dict(carrier) if carrier else None,
            dict(attributes),
            kind,
            start_time,
        )
        self.spans.append(span)
        return span

    def current_carrier(self) -> dict[str, str]:
        return {}

    def record(self, metric: str, value: float, attributes: Any) -> None:
        self.measurements.append((metric, value, dict(attributes)))

    def finished(self) -> list[FinishedSpan]:
        return [
            FinishedSpan(
                s.name,
                s.span_id,
                "t",
                s.parent_id,
                s.attributes,
                s.error is not None,
                s.kind,  # type: ignore[arg-type]
                s.start_time,
            )
            for s in self.spans
        ]


def telemetry_plugin(build: Callable[[], Any], name: str = "recording") -> types.ModuleType:
    """A plugin module offering one telemetry backend, ``name``, that ``build`` makes."""
    module = types.ModuleType(f"plugin_{name}")
    module.PSYCH_PLUGIN_API = 1  # type: ignore[attr-defined]
    backend = TelemetryBackend(name=name, build=build, package="tests")
    module.psych_register_telemetry = offer_telemetry(backend)  # type: ignore[attr-defined]
    return module


@pytest.fixture
def fresh_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Only hand-registered plugins count, in a manager built for this test alone."""
    monkeypatch.setenv("PSYCH_DISABLE_PLUGIN_AUTOLOAD", "1")
    reset_plugin_manager()
    yield
    reset_plugin_manager()
