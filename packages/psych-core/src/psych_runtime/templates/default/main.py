"""A first Psych Runtime program: one agent, one code tool, a scripted model.

Run it with ``python main.py``. It needs no API key: FakeModel plays back the model
turns scripted in ``build_model`` instead of calling a provider.
"""

import asyncio

import psych_runtime
from psych_runtime.testing.fake_model import FakeModel


async def lookup_order(order_id: str) -> dict[str, str]:
    """Return the shipping status of one order."""
    # Type hints become the tool's argument schema and this docstring its description.
    return {"order_id": order_id, "status": "shipped"}


spec = psych_runtime.AgentSpec(
    name="support",
    instructions="You help customers find out where their orders are.",
    model=psych_runtime.ModelRef(model="gpt-4o"),
    # The Spec refers to the tool by name; session() below supplies the function.
    tools=(psych_runtime.CodeTool(name="lookup_order"),),
    limits=psych_runtime.Limits(max_turns=12, deadline_seconds=300),
)


def build_model() -> FakeModel:
    """Script two model turns: call the tool, then answer from its result."""
    return (
        FakeModel()
        .turn(tool_calls=[("lookup_order", {"order_id": "A1"})])
        .turn(text="Order A1 has shipped.")
    )


async def main() -> None:
    """Ask the agent one question and print its answer and what the Run used."""
    async with psych_runtime.session(build_model(), tools=[lookup_order]) as s:
        view = await s.ask(spec, "Where is order A1?")
        if not view.finished:
            raise SystemExit(f"run {view.run_id} did not finish; see psych_runtime.status()")
        print(view.text)

        report = await psych_runtime.report(s.store, view.run_id)
        print(f"usage: {report.totals.usage}")
        print(f"cost: {report.totals.cost}")


if __name__ == "__main__":
    asyncio.run(main())
