"""The trace a Run belongs to, fixed at admission and kept in its log.

Every Attempt of a Run opens its spans under the W3C trace context stored in the
Run's ``run_admitted`` record, so all of them, in whichever process runs them, land in
one trace. The context is the caller's active span when there is one. When there is
none, admission makes one up:

- with telemetry enabled in the dispatching process, it opens a ``psych.dispatch``
  span (kind PRODUCER) as the root of a new trace, so the sampler decides there, once
  for the whole Run, and tools show a real root;
- otherwise it mints a fresh trace id and span id (marked sampled). No process ever
  exports that parent, so tools show the Run's first spans as the roots of the trace.

A child Run started by a process without telemetry joins its parent's stored trace.
"""

import logging
import secrets
from types import TracebackType

from psych_runtime.telemetry import schema as s
from psych_runtime.telemetry.port import Telemetry
from psych_runtime.telemetry.port import TelemetrySpan

log = logging.getLogger(__name__)

TRACEPARENT = "traceparent"


def mint_trace_context() -> dict[str, str]:
    """A fresh W3C trace context (version 00, sampled) naming no exported span."""
    trace_id = secrets.token_hex(16)
    span_id = secrets.token_hex(8)
    # All zeros is the one invalid value of each; it has a 2**-128 (2**-64) chance.
    if trace_id == "0" * 32:
        trace_id = "0" * 31 + "1"
    if span_id == "0" * 16:
        span_id = "0" * 15 + "1"
    return {TRACEPARENT: f"00-{trace_id}-{span_id}-01"}


class AdmissionTrace:
    """The trace context a Run is admitted with, and the dispatch span that rooted it.

    Used as a context manager around the store write: the ``psych.dispatch`` span (when
    one was opened) ends with it, as ERROR if the write raised.

    Attributes:
        carrier: the trace context to store in the ``run_admitted`` record.
    """

    __slots__ = ("_span", "carrier")

    def __init__(self, carrier: dict[str, str], span: TelemetrySpan | None) -> None:
        self.carrier = carrier
        self._span = span

    def admitted(self, run_id: str) -> None:
        """Name the Run the store answered with (an earlier one, for a repeated key)."""
        if self._span is not None:
            try:
                self._span.set_attributes({s.RUN_ID: run_id})
            except Exception:
                log.warning("telemetry could not annotate the dispatch span", exc_info=True)

    def __enter__(self) -> "AdmissionTrace":
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._span is None:
            return
        try:
            self._span.end(error=f"{kind.__name__}: {error}" if kind is not None else None)
        except Exception:
            log.warning("telemetry could not end the dispatch span", exc_info=True)


def admission_trace(
    telemetry: Telemetry,
    carried: dict[str, str],
    *,
    run_id: str,
    tenant: str,
    version_hash: str,
) -> AdmissionTrace:
    """The trace a Run being admitted joins: ``carried`` when set, else a new one.

    Never raises: an adapter that fails costs the Run only its dispatch span.

    Args:
        telemetry: the dispatching process's adapter.
        carried: the trace context the caller gave, or its active span's; may be empty.
        run_id: the Run being admitted.
        tenant: its tenant.
        version_hash: the Version it pins.
    """
    if carried:
        return AdmissionTrace(carried, None)
    try:
        if telemetry.enabled:
            span = telemetry.start_span(
                s.DISPATCH,
                {s.RUN_ID: run_id, s.TENANT: tenant, s.VERSION_HASH: version_hash},
                kind="producer",
            )
            carrier = span.carrier()
            if carrier.get(TRACEPARENT):
                return AdmissionTrace(dict(carrier), span)
            span.end()
    except Exception:
        log.warning("telemetry could not open the dispatch span", exc_info=True)
    return AdmissionTrace(mint_trace_context(), None)


def child_trace_context(given: dict[str, str] | None, parent: dict[str, str]) -> dict[str, str]:
    """The trace context of a child Run: its starting call's span, else its parent's trace.

    A parent admitted before trace contexts were kept has none; the child then gets a
    minted one, so its own Attempts at least share a trace.
    """
    if given:
        return given
    if parent:
        return dict(parent)
    return mint_trace_context()


__all__ = [
    "TRACEPARENT",
    "AdmissionTrace",
    "admission_trace",
    "child_trace_context",
    "mint_trace_context",
]
