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


spec = psych_runtime.AgentSpec(
    name="courier",
    instructions="Answer questions about parcel deliveries.",
    model=psych_runtime.ModelRef(model="gpt-4o-mini"),
    tools=(psych_runtime.CodeTool(name="track_parcel"),),  # named here, registered below
    limits=psych_runtime.Limits(max_turns=8, deadline_seconds=120),
)


async def main() -> None:
    store = await psych_runtime.open_store("sqlite:///courier.db", migrate=True)
    model = (
        FakeModel()
        .turn(tool_calls=[("track_parcel", {"tracking_id": "P-100"})])
        .turn(text="Parcel P-100 is out for delivery.")
    )
    async with psych_runtime.session(model, tools=[track_parcel], store=store) as s:
        answer = await s.ask(spec, "Has parcel P-100 left the depot?")
        print(answer.text)

        summary = await psych_runtime.report(s.store, answer.run_id)
        print(summary.terminal_state, summary.totals.tool_calls, summary.totals.cost)
    await store.close()


if __name__ == "__main__":
    asyncio.run(main())
