"""A call whose provider reported no usage reads as "unknown" in the report, not as zero."""

from psych_runtime.core.metering import Usage
from psych_runtime.core.projections.report import build_report
from psych_runtime.testing.log_builder import LogBuilder


def test_an_unreported_call_has_no_usage_and_a_reported_one_keeps_it() -> None:
    log = (
        LogBuilder()
        .first_model_call()
        .model_finished(usage=Usage(input=120, output=30))
        .turn()
        .model_started()
        .model_finished(usage=Usage(), usage_reported=False)
    )
    report = build_report(log.build())
    reported, unreported = report.model_calls
    assert (reported.usage, reported.usage_reported) == (Usage(input=120, output=30), True)
    assert (unreported.usage, unreported.usage_reported) == (None, False)
    # The totals add what was reported and say that some is missing.
    assert report.totals.usage == Usage(input=120, output=30)
    assert report.totals.usage_source == "partial"
    assert report.totals.unreported_usage_calls == 1


def test_a_call_still_running_has_neither_usage_nor_a_verdict() -> None:
    report = build_report(LogBuilder().admitted().attempt().turn().model_started().build())
    [call] = report.model_calls
    assert (call.usage, call.usage_reported, call.dangling) == (None, None, True)


def test_a_compaction_without_reported_usage_reads_unknown() -> None:
    log = LogBuilder().admitted().attempt().turn().model_started().model_finished()
    log.compacted(3, 5, model="gpt-test", usage=Usage(), usage_reported=False)
    log.compacted(3, 6, model="")  # a mechanical trim: no call at all
    summarised, trimmed = build_report(log.build()).compactions
    assert (summarised.usage, summarised.usage_reported) == (None, False)
    assert (trimmed.usage, trimmed.usage_reported) == (None, False)
