"""Everything one Run did, rebuilt from its log for an operator to read.

A report is recomputed on every read and never stored, so it cannot drift from the
log. Building one folds the log with the reducer first: a log that contradicts itself
raises :class:`~psych_runtime.core.corruption.CorruptLog` here too, instead of being
reported as if it made sense, and the Run totals are the very figures the runtime
decided with.

Money stays a :class:`~decimal.Decimal` throughout, and a call nobody could price keeps
``cost=None`` and is counted as unpriced; it is never added in as zero.
"""

from collections.abc import Sequence

from psych_runtime.core.corruption import CorruptionReason
from psych_runtime.core.corruption import CorruptLog
from psych_runtime.core.projections.latency import measure_latency
from psych_runtime.core.projections.report_rows import compaction_reports
from psych_runtime.core.projections.report_rows import failure_streak_trips
from psych_runtime.core.projections.report_rows import model_call_reports
from psych_runtime.core.projections.report_rows import step_reports
from psych_runtime.core.projections.report_rows import subagent_reports
from psych_runtime.core.projections.report_rows import suspension_reports
from psych_runtime.core.projections.report_rows import tool_call_reports
from psych_runtime.core.projections.report_types import RunReport
from psych_runtime.core.projections.report_types import SubtreeTotals
from psych_runtime.core.projections.report_types import TotalsReport
from psych_runtime.core.projections.report_types import UsageSource
from psych_runtime.core.records import CompactionApplied
from psych_runtime.core.records import ModelCallStarted
from psych_runtime.core.records import Record
from psych_runtime.core.records import RunAdmitted
from psych_runtime.core.records import RunSettled
from psych_runtime.core.reducer import reduce
from psych_runtime.core.state import RunStateView


def _usage_source(unreported: int, metered: int) -> UsageSource:
    if unreported == 0:
        return "provider"
    if unreported >= metered:
        return "unknown"
    return "partial"


def _totals(state: RunStateView, records: Sequence[Record]) -> TotalsReport:
    """Run totals, taken from the fold so they match what the runtime saw."""
    summarising_calls = sum(
        1 for record in records if isinstance(record, CompactionApplied) and record.model
    )
    metered = state.model_calls + summarising_calls
    return TotalsReport(
        usage=state.usage,
        usage_source=_usage_source(state.unreported_usage_calls, metered),
        unreported_usage_calls=state.unreported_usage_calls,
        cost=state.cost,
        unpriced_model_calls=state.unpriced_model_calls,
        cost_is_incomplete=state.unpriced_model_calls > 0,
        provider_reported_costs=state.provider_reported_costs,
        model_calls=state.model_calls,
        failed_model_calls=state.failed_model_calls,
        tool_calls=len(state.tool_results),
        latency=measure_latency(records),
        compaction_calls=state.compaction_calls,
    )


def subtree_totals(state: RunStateView, own_seconds: float) -> SubtreeTotals:
    """Add every finished child's reported consumption to the Run's own.

    A child still running has reported nothing yet, so the subtree is marked
    incomplete rather than quietly short.

    Args:
        state: the Run's fold.
        own_seconds: the Run's own wall clock, first record to last.
    """
    usage = state.usage
    seconds = own_seconds
    unreported = state.unreported_usage_calls
    unpriced = state.unpriced_model_calls
    cost = state.cost
    runs = 1
    finished = sorted(
        (child for child in state.children.values() if not child.alive),
        key=lambda child: child.finished_seq or 0,
    )
    for child in finished:
        runs += child.runs
        seconds += child.run_seconds
        usage = usage + child.usage
        unreported += child.unreported_usage_calls
        unpriced += child.unpriced_model_calls
        if child.cost is None:
            continue
        if cost is not None and cost.currency != child.cost.currency:
            raise CorruptLog(
                CorruptionReason.INCONSISTENT_COST,
                state.run_id,
                child.finished_seq or state.head_seq,
                f"subagent {child.name!r} cost {child.cost.currency}, "
                f"but the subtree total is kept in {cost.currency}",
            )
        cost = child.cost if cost is None else cost + child.cost
    complete = not state.live_children
    return SubtreeTotals(
        usage=usage,
        unreported_usage_calls=unreported,
        cost=cost,
        unpriced_model_calls=unpriced,
        cost_is_incomplete=unpriced > 0 or not complete,
        runs=runs,
        run_seconds=round(seconds, 6),
        complete=complete,
    )


def _last_system_prompt(records: Sequence[Record]) -> str:
    for record in reversed(records):
        if isinstance(record, ModelCallStarted) and record.system_prompt:
            return record.system_prompt
    return ""


def build_report(
    records: Sequence[Record],
    *,
    spec_name: str = "",
    failure_streak_threshold: int = 3,
) -> RunReport:
    """Build the report of one Run from its whole log.

    Args:
        records: the Run's records in log order, starting at its admission.
        spec_name: the name of the Spec behind the pinned Version (the log does not
            carry it).
        failure_streak_threshold: the Version's ``Limits.failure_streak_threshold``,
            used to mark where a tool's failures made the runtime withhold it.

    Returns:
        The report. Nested reports of children and delegated steps are left empty;
        the runtime fills them when asked to walk deeper.

    Raises:
        CorruptLog: when the log contradicts itself, including costs in two
            currencies across the Run and its finished subagents.
        ValueError: when ``records`` is empty.
    """
    if failure_streak_threshold < 1:
        raise ValueError("failure_streak_threshold must be at least 1")
    state = reduce(records)
    admitted = next((r for r in records if isinstance(r, RunAdmitted)), None)
    settled = next((r for r in reversed(records) if isinstance(r, RunSettled)), None)
    totals = _totals(state, records)
    return RunReport(
        run_id=state.run_id,
        scope=state.scope,
        version_hash=state.version_hash,
        spec_name=spec_name,
        system_prompt=_last_system_prompt(records),
        steps=step_reports(state.step_starts),
        tool_calls=tool_call_reports(records),
        model_calls=model_call_reports(records),
        suspensions=suspension_reports(records),
        failure_streak_trips=failure_streak_trips(records, failure_streak_threshold),
        terminal_state=state.terminal_state,
        output=state.output,
        failure=state.failure,
        orphaned_attempt_id=None if settled is None else settled.orphaned_attempt_id,
        admitted_at=None if admitted is None else admitted.at,
        settled_at=None if settled is None else settled.at,
        totals=totals,
        components=tuple(state.components),
        subagents=subagent_reports(records),
        subtree=subtree_totals(state, totals.latency.wall_clock_seconds),
        tasks=state.tasks,
        compactions=compaction_reports(records),
        continues_run_id=state.continues_run_id,
    )


__all__ = ["build_report", "subtree_totals"]
