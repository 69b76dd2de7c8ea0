"""The storefront agent answers from its tool; FakeModel stands in for the provider.

pytest-asyncio runs the ``async def`` tests (``asyncio_mode = "auto"`` in
``pyproject.toml``), each in an event loop of its own.
"""

import psych_runtime
from psych_runtime.testing import FakeModel

from main import build_model, check_stock, spec


async def test_the_agent_answers_from_the_stock_tool() -> None:
    # No store URL: the Run is kept in memory, which is all a test needs.
    async with psych_runtime.session(build_model(), tools=[check_stock]) as s:
        reply = await s.ask(spec, "Do you have LAMP-7?")
        report = await s.report(reply.run_id)
    assert reply.finished
    assert reply.text == "Yes: 42 units of LAMP-7 are in stock."
    assert [call.tool for call in report.tool_calls] == ["check_stock"]
    assert report.tool_calls[0].result == {"sku": "LAMP-7", "units": 42}


async def test_a_failing_tool_is_reported_to_the_model_not_raised() -> None:
    async def out_of_service(sku: str) -> dict[str, int | str]:
        """Pretend the warehouse system is down."""
        raise RuntimeError("warehouse offline")

    model = (
        FakeModel()
        .turn(tool_calls=[("check_stock", {"sku": "LAMP-7"})])
        .turn(text="Sorry, I cannot check the stock right now.")
    )
    registry = psych_runtime.ToolRegistry()
    registry.register(out_of_service, name="check_stock")
    async with psych_runtime.session(model, registry=registry) as s:
        reply = await s.ask(spec, "Do you have LAMP-7?")
        report = await s.report(reply.run_id)
    assert reply.text == "Sorry, I cannot check the stock right now."
    assert report.tool_calls[0].outcome is psych_runtime.ToolOutcome.ERROR
