"""A refund review as a workflow: fetch, branch, an agent per order, a person decides.

Runs with no API key (FakeModel writes the agent's notes). Every step is memoised in
the Run's log: kill the process at any point and a Worker elsewhere carries on from
the last completed step.
"""

import asyncio

import psych_runtime
from psych_runtime.spec import AgentStep
from psych_runtime.spec import BranchCase
from psych_runtime.spec import BranchStep
from psych_runtime.spec import Condition
from psych_runtime.spec import ForeachStep
from psych_runtime.spec import HumanStep
from psych_runtime.spec import MapStep
from psych_runtime.spec import ToolStep
from psych_runtime.spec import ValuePath
from psych_runtime.spec import WorkflowSpec
from psych_runtime.testing import FakeModel


async def fetch_orders(customer: str) -> dict[str, object]:
    """List a customer's disputed orders."""
    return {"orders": ["A-1", "A-2"], "count": 2}


async def refund(orders: list[str]) -> str:
    """Refund the given orders."""
    return f"refunded {', '.join(orders)}"


note = psych_runtime.AgentSpec(name="note", model="gpt-4o-mini")
spec = WorkflowSpec(
    name="refund-review",
    tools=(psych_runtime.CodeTool(name="fetch_orders"), psych_runtime.CodeTool(name="refund")),
    steps=(
        ToolStep(
            name="fetch",
            tool="fetch_orders",
            arguments_from={"customer": ValuePath(path="input.customer")},
        ),
        BranchStep(
            name="triage",
            cases=(
                BranchCase(
                    name="disputes",
                    when=Condition(path="steps.fetch.output.count", op="gt", value=0),
                    step=ForeachStep(
                        name="notes",
                        items=ValuePath(path="steps.fetch.output.orders"),
                        concurrency=2,
                        body=AgentStep(
                            name="note", spec=note, input={"message": ValuePath(path="item")}
                        ),
                    ),
                ),
            ),
            otherwise=MapStep(name="nothing", output={"done": ValuePath(path="input.customer")}),
        ),
        HumanStep(name="approve", prompt="Refund the disputed orders?"),
        ToolStep(
            name="pay_back",
            tool="refund",
            arguments_from={"orders": ValuePath(path="steps.fetch.output.orders")},
            when=Condition(path="steps.approve.output.approved", op="eq", value=True),
        ),
    ),
    output={
        "notes": ValuePath(path="steps.triage.output.disputes.items"),
        "refund": ValuePath(path="steps.pay_back.output.result"),
    },
)
model = FakeModel().turn(text="Arrived damaged.").turn(text="Never delivered.")


async def main() -> None:
    async with psych_runtime.session(model, tools=[fetch_orders, refund]) as s:
        run = await s.dispatch(spec, input={"customer": "C-7"})
        await s.wait(run.run_id)  # returns once the workflow waits for the person
        question = (await s.status(run.run_id)).pending_question
        assert question is not None  # the human step is waiting
        print("asked:", question.summary)
        await s.resume(run.run_id, payload={"approved": True}, by="lead@example.com")
        await s.wait(run.run_id)
        print((await s.status(run.run_id)).output)


asyncio.run(main())
