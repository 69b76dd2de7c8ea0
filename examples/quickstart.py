"""The smallest complete Psych program: one agent, one code tool, a scripted model.

Runs with no API key. The Run is kept in ``courier.db`` (SQLite), so it is still
there, record by record, after the program exits. Swap ``FakeModel`` for
``OpenAICompatibleClient`` to talk to a real model.
"""

import asyncio

import psych_runtime
from psych_runtime.testing import FakeModel


async def track_parcel(tracking_id: str) -> dict[str, str]:
    """Report where a parcel is right now."""
    return {"tracking_id": tracking_id, "state": "out for delivery"}


spec = psych_runtime.AgentSpec(  # an agent is data: a model, tools by name, limits
    name="courier",
    instructions="Answer questions about parcel deliveries.",
    model="gpt-4o-mini",
    tools=("track_parcel",),  # named here, registered with session() below
    limits=psych_runtime.Limits(max_turns=8, deadline_seconds=120),
)
model = (  # a scripted model, so no API key is needed
    FakeModel()
    .turn(tool_calls=[("track_parcel", {"tracking_id": "P-100"})])
    .turn(text="Parcel P-100 is out for delivery.")
)


async def main() -> None:
    async with psych_runtime.session(
        model, tools=[track_parcel], store="sqlite:///courier.db"
    ) as s:
        answer = await s.ask(spec, "Has parcel P-100 left the depot?")
        print(answer.text)
        summary = await s.report(answer.run_id)
        # The cost prints as None: no price table was given, so it is unknown (not 0).
        print(summary.terminal_state, summary.totals.tool_calls, summary.totals.cost)


asyncio.run(main())
