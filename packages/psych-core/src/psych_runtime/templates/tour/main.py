"""A tour of Psych Runtime in one program: tools, streaming, approvals, threads, cost.

Run it with ``python main.py``. FakeModel plays the model's part, so no API key is
needed; every Run is kept in ``tour.db`` beside this file. Each ``step_*`` function is
one stop of the tour and returns what it shows, so ``tests/`` can check it.
"""

import asyncio
from decimal import Decimal

import psych_runtime
from psych_runtime.models import ModelPrice, StaticPriceTable
from psych_runtime.records import Usage
from psych_runtime.testing import FakeModel

registry = psych_runtime.ToolRegistry()


@registry.tool()
async def find_flights(origin: str, destination: str) -> list[dict[str, str | int]]:
    """List tomorrow's flights between two airports."""
    return [
        {"flight": "PS101", "departs": "08:15", "price_eur": 129},
        {"flight": "PS207", "departs": "17:40", "price_eur": 99},
    ]


@registry.tool(annotations=["destructive"])
async def book_flight(flight: str, passenger: str) -> dict[str, str]:
    """Book a seat on a flight; it charges the passenger's card."""
    return {"flight": flight, "passenger": passenger, "booking": "BK-5521"}


spec = psych_runtime.AgentSpec(
    name="travel-desk",
    instructions="Help travellers find and book flights. Ask before booking anything.",
    model="gpt-4o-mini",
    tools=("find_flights", "book_flight"),
    limits=psych_runtime.Limits(max_turns=8, deadline_seconds=120),
)

# Prices per million tokens: reports then carry a cost, not just token counts.
PRICES = StaticPriceTable(
    {
        "gpt-4o-mini": ModelPrice(
            input=Decimal("0.15"),
            output=Decimal("0.60"),
            cache_read=Decimal("0.075"),  # cached input has its own rate: give it
            cache_write=Decimal("0.15"),
        )
    }
)
# Any call to a tool annotated "destructive" waits for a person to approve it.
APPROVALS = psych_runtime.ApprovalRules(selectors=("@destructive",))


def build_model() -> FakeModel:
    """The model's turns for the whole tour, in the order the Runs will ask for them."""
    return (
        FakeModel()
        # Run 1: look flights up, then answer (the answer is streamed word by word).
        .turn(
            tool_calls=[("find_flights", {"origin": "AMS", "destination": "LIS"})],
            usage=Usage(input=420, output=25),
        )
        .turn(
            text="PS207 at 17:40 is the cheapest flight, at 99 EUR.",
            usage=Usage(input=610, output=18),
        )
        # Run 2 continues the conversation: booking needs an approval first.
        .turn(
            tool_calls=[("book_flight", {"flight": "PS207", "passenger": "Ada Lovelace"})],
            usage=Usage(input=700, output=22),
        )
        .turn(text="Booked: PS207, booking BK-5521.", usage=Usage(input=760, output=12))
    )


async def step_stream(s: psych_runtime.Session) -> tuple[psych_runtime.RunId, list[str]]:
    """Dispatch a Run and print its answer as it is written; returns (run id, chunks)."""
    run = await s.dispatch(spec, "Which flight from AMS to LIS is cheapest tomorrow?")
    chunks = [chunk async for chunk in s.stream_text(run.run_id)]
    print("answer:", "".join(chunks))
    return run.run_id, chunks


async def step_approve(
    s: psych_runtime.Session, previous: psych_runtime.RunId
) -> psych_runtime.RunId:
    """Continue the thread; the booking waits until someone approves it."""
    run = await s.dispatch(spec, "Book PS207 for Ada Lovelace.", continues=previous)
    await s.wait(run.run_id)  # returns when the Run settles or, here, suspends
    pending = (await s.status(run.run_id)).pending_approval
    assert pending is not None, "the booking should be waiting for approval"
    print(f"waiting for approval: {pending.tool}({pending.arguments})")
    await s.resume(run.run_id, approved=True, by="supervisor@example.com")
    await s.wait(run.run_id)
    answer = await s.answer(run.run_id)
    print("answer:", answer.text)
    return run.run_id


async def step_report(
    s: psych_runtime.Session, run_id: psych_runtime.RunId
) -> psych_runtime.RunReport:
    """Print the conversation so far and what the last Run cost."""
    thread = await s.thread(run_id)
    print(f"the thread spans {len(thread.run_ids)} Runs and {len(thread.messages)} messages")
    report = await s.report(run_id)
    print(f"tokens: {report.totals.usage.input} in, {report.totals.usage.output} out")
    cost = report.totals.cost
    print(f"cost: {cost.currency} {cost.amount}" if cost else "cost: unknown")
    return report


async def tour(store: str | None = "sqlite:///tour.db") -> psych_runtime.RunReport:
    """Run every stop of the tour on ``store`` (None: an in-memory store)."""
    settings = psych_runtime.RuntimeSettings(prices=PRICES, approvals=APPROVALS)
    async with psych_runtime.session(
        build_model(), registry=registry, store=store, runtime=settings
    ) as s:
        first, _ = await step_stream(s)
        second = await step_approve(s, first)
        report = await step_report(s, second)
    print("\nSee what the Runs did:")
    print("  psych runs --store sqlite:///tour.db")
    print(f"  psych show {second} --store sqlite:///tour.db")
    return report


if __name__ == "__main__":
    asyncio.run(tour())
