"""The smallest complete Psych program: one agent, one code tool, a scripted model.

Runs with no API key. Swap ``FakeModel`` for ``OpenAICompatibleClient`` to talk to a
real model.
"""

import asyncio

import psych_runtime
from psych_runtime.testing.fake_model import FakeModel


async def lookup_order(order_id: str) -> dict[str, str]:
    """Look up an order by its id."""
    return {"order_id": order_id, "status": "shipped"}


spec = psych_runtime.AgentSpec(
    name="support",
    instructions="Help the customer with their order.",
    model=psych_runtime.ModelRef(model="gpt-4o"),
    tools=(psych_runtime.CodeTool(name="lookup_order"),),  # the tool's name, not the function
    limits=psych_runtime.Limits(max_turns=12, deadline_seconds=300),
)


async def main() -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[("lookup_order", {"order_id": "A1"})])
        .turn(text="A1 has shipped.")
    )
    async with psych_runtime.session(model, tools=[lookup_order]) as s:
        view = await s.ask(spec, "where is order A1?")
        print(view.text)

        report = await psych_runtime.report(s.store, view.run_id)
        print(report.terminal_state, report.totals.usage, report.totals.cost)


if __name__ == "__main__":
    asyncio.run(main())
