"""Each stop of the tour, checked on an in-memory store (pytest-asyncio runs the tests)."""

import psych_runtime

from main import tour


async def test_the_tour_streams_waits_for_approval_and_prices_the_run() -> None:
    report = await tour(store=None)

    assert report.terminal_state is psych_runtime.TerminalState.COMPLETED
    [booking] = report.tool_calls
    assert booking.tool == "book_flight"
    assert booking.result == {
        "flight": "PS207",
        "passenger": "Ada Lovelace",
        "booking": "BK-5521",
    }
    [approval] = report.suspensions
    assert approval.approved is True
    assert approval.resumed_by == "supervisor@example.com"
    assert report.continues_run_id is not None
    assert report.totals.cost is not None and report.totals.cost.amount > 0


async def test_a_denied_booking_is_not_made() -> None:
    from main import APPROVALS, build_model, registry, spec

    settings = psych_runtime.RuntimeSettings(approvals=APPROVALS)
    model = build_model()
    async with psych_runtime.session(model, registry=registry, runtime=settings) as s:
        first = await s.ask(spec, "Which flight is cheapest?")
        run = await s.dispatch(spec, "Book PS207.", continues=first.run_id)
        await s.wait(run.run_id)
        await s.resume(run.run_id, approved=False, by="supervisor@example.com")
        await s.wait(run.run_id)
        report = await s.report(run.run_id)
    [call] = report.tool_calls
    assert call.outcome is psych_runtime.ToolOutcome.ERROR
    assert call.failure is not None and call.failure.kind == "denied"
    assert call.result is None
