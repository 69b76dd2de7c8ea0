"""The smallest complete Psych program: one agent, one code tool, a scripted model.

Runs with no API key. Swap ``FakeModel`` for ``OpenAICompatibleClient`` to talk to a
real model.
"""

import asyncio

import psych_runtime
from psych_runtime.testing import FakeModel


async def track_parcel(tracking_id: str) -> dict[str, str]:
    """Report where a parcel is right now."""
    return {"tracking_id": tracking_id, "state": "out for delivery"}


spec = psych_runtime.AgentSpec(
    name="courier",
    instructions="Answer questions about parcel deliveries.",
    model=psych_runtime.ModelRef(model="gpt-4o-mini"),
    tools=(psych_runtime.CodeTool(name="track_parcel"),),  # named here, registered below
    limits=psych_runtime.Limits(max_turns=8, deadline_seconds=120),
)


async def main() -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[("track_parcel", {"tracking_id": "P-100"})])
        .turn(text="Parcel P-100 is out for delivery.")
    )
    async with psych_runtime.session(model, tools=[track_parcel]) as s:
        answer = await s.ask(spec, "Has parcel P-100 left the depot?")
        print(answer.text)

        summary = await psych_runtime.report(s.store, answer.run_id)
        print(summary.terminal_state, summary.totals.tool_calls, summary.totals.cost)


if __name__ == "__main__":
    asyncio.run(main())
