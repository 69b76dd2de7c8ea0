"""A first Psych Runtime program: one agent, one code tool, a scripted model.

Run it with ``python main.py``. It needs no API key: FakeModel plays back the model
turns scripted in ``build_model`` instead of calling a provider.
"""

import asyncio

import psych_runtime
from psych_runtime.testing import FakeModel


async def check_stock(sku: str) -> dict[str, int | str]:
    """Count the units of one product left in the warehouse."""
    # Type hints become the tool's argument schema and this docstring its description.
    return {"sku": sku, "units": 42}


spec = psych_runtime.AgentSpec(
    name="storefront",
    instructions="Tell shoppers whether the products they ask about are in stock.",
    model="gpt-4o-mini",  # short for psych_runtime.ModelRef(model="gpt-4o-mini")
    # The Spec refers to the tool by name; session() below supplies the function.
    tools=("check_stock",),
    limits=psych_runtime.Limits(max_turns=6, deadline_seconds=60),
)


def build_model() -> FakeModel:
    """Script two model turns: call the tool, then answer from its result."""
    return (
        FakeModel()
        .turn(tool_calls=[("check_stock", {"sku": "LAMP-7"})])
        .turn(text="Yes: 42 units of LAMP-7 are in stock.")
    )


async def main() -> None:
    """Ask the agent one question and print its answer and what the Run used."""
    # Runs are kept in a SQLite file next to this script, so they outlive the process.
    # Point this at postgresql://... or mysql://... to share Runs between machines;
    # session() opens the store (creating its tables) and closes it on the way out.
    async with psych_runtime.session(
        build_model(), tools=[check_stock], store="sqlite:///storefront.db"
    ) as s:
        reply = await s.ask(spec, "Do you still have the LAMP-7 desk lamp?")
        if not reply.finished:
            raise SystemExit(f"run {reply.run_id} did not finish; s.status() says why")
        print(reply.text)

        spent = await s.report(reply.run_id)
        print(f"usage: {spent.totals.usage}")
        # None: no price table was given, so the cost is unknown (never a made-up 0).
        print(f"cost: {spent.totals.cost}")


if __name__ == "__main__":
    asyncio.run(main())
