"""A researcher that splits a question between two subagents and combines their answers.

Runs with no API key: every agent has its own scripted model (``ModelsByName`` routes by
model id). Each subagent is a Run of its own, with its own log; the researcher's
report rolls their usage up into one total.
"""

import asyncio

import psych_runtime
from psych_runtime.spec import SubagentRef
from psych_runtime.testing import FakeModel
from psych_runtime.testing import ModelsByName


async def search_archive(query: str) -> list[str]:
    """Search the newspaper archive."""
    return [f"1953 feature on {query}", f"1987 letters page on {query}"]


async def search_papers(query: str) -> list[str]:
    """Search the research literature."""
    return [f"2021 survey of {query}"]


historian = psych_runtime.AgentSpec(
    name="historian", model="historian-model", tools=("search_archive",)
)
scientist = psych_runtime.AgentSpec(
    name="scientist", model="scientist-model", tools=("search_papers",)
)
researcher = psych_runtime.AgentSpec(
    name="researcher",
    model="researcher-model",
    instructions="Split the question between your subagents, then combine their answers.",
    tools=("search_archive", "search_papers"),  # a child holds only what its parent holds
    subagents=(  # embedded: the researcher's Version hash pins both children
        SubagentRef(
            name="historian",
            description="Finds what newspapers said over the years.",
            spec=historian,
        ),
        SubagentRef(
            name="scientist",
            description="Finds what the research literature says.",
            spec=scientist,
        ),
    ),
)
tokens = {"input": 120, "output": 30}
model = ModelsByName(
    {
        "researcher-model": FakeModel()
        .turn(
            tool_calls=[
                ("delegate", {"agent": "historian", "task": "What did newspapers say of tides?"}),
                ("delegate", {"agent": "scientist", "task": "What does research say of tides?"}),
            ],
            usage=tokens,
        )
        .turn(text="Newspapers covered tides since 1953; a 2021 survey models them.", usage=tokens),
        "historian-model": FakeModel()
        .turn(tool_calls=[("search_archive", {"query": "tides"})], usage=tokens)
        .turn(text="Covered since a 1953 feature.", usage=tokens),
        "scientist-model": FakeModel()
        .turn(tool_calls=[("search_papers", {"query": "tides"})], usage=tokens)
        .turn(text="A 2021 survey models them.", usage=tokens),
    }
)


async def main() -> None:
    async with psych_runtime.session(model, tools=[search_archive, search_papers]) as s:
        answer = await s.ask(researcher, "What do we know about tides?")
        print(answer.text)
        report = await s.report(answer.run_id, child_depth=1)
        for child in report.subagents:
            assert child.report is not None
            print(child.name, child.terminal_state, child.report.totals.tool_calls, "call")
        print("runs", report.subtree.runs, "input tokens", report.subtree.usage.input)


asyncio.run(main())
