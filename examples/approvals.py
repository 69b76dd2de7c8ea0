"""A refund waits for a person: the Run suspends, someone approves, the Run goes on.

Runs with no API key. The approval comes from the same program here; in production it
comes from another process (an admin screen calling ``psych_runtime.resume``) while no
Worker holds the Run.
"""

import asyncio

import psych_runtime
from psych_runtime.testing import FakeModel

registry = psych_runtime.ToolRegistry()


@registry.tool(annotations=["destructive"])  # the class approval rules select on
async def refund(order_id: str) -> str:
    """Refund an order in full."""
    return f"refunded {order_id}"


spec = psych_runtime.AgentSpec(name="refunds", model="gpt-4o-mini", tools=("refund",))
model = FakeModel().turn(tool_calls=[("refund", {"order_id": "A-1"})]).turn(text="Done.")
rules = psych_runtime.ApprovalRules(selectors=("@destructive",))


async def main() -> None:
    settings = psych_runtime.RuntimeSettings(approvals=rules)
    async with psych_runtime.session(model, registry=registry, runtime=settings) as s:
        run = await s.dispatch(spec, "Please refund order A-1")
        await s.wait(run.run_id)  # returns once the Run settles or suspends
        pending = (await s.status(run.run_id)).pending_approval
        assert pending is not None  # suspended on exactly this call
        print("waiting for:", pending.tool, pending.arguments)
        await s.resume(run.run_id, approved=True, by="alice@example.com")
        await s.wait(run.run_id)
        print((await s.answer(run.run_id)).text)


asyncio.run(main())
