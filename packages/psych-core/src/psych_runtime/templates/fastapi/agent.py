"""The agent, its tools and its model: shared by the web app and the Worker process.

The web app only needs ``spec`` (to publish and dispatch it). The Worker needs the
tools and the model too, because it is the process that executes Runs.
"""

import os

import psych_runtime
from psych_runtime.models import ModelClient
from psych_runtime.testing import FakeModel

STORE_URL = os.environ.get("PSYCH_STORE_URL", "sqlite:///{{project_name}}.db")
"""Both processes open this store; use postgresql://... to run them on several machines."""

TENANT = psych_runtime.Scope(tenant="default")
"""One tenant for the whole app; derive it from the signed-in account in a real one."""

registry = psych_runtime.ToolRegistry()


@registry.tool()
async def weather(city: str) -> dict[str, str | int]:
    """Today's weather in a city."""
    return {"city": city, "sky": "sunny", "high_c": 24}


spec = psych_runtime.AgentSpec(
    name="{{project_name}}",
    instructions="Answer questions about the weather, using the weather tool.",
    model="gpt-4o-mini",
    tools=("weather",),
    limits=psych_runtime.Limits(max_turns=6, deadline_seconds=120),
)


def build_model(conversations: int = 1000) -> ModelClient:
    """A scripted model, so the project runs with no API key.

    It plays the same two turns (call the tool, then answer) for each Run. Replace it
    with ``psych_runtime.OpenAICompatibleClient(...)`` to use a real model.
    """
    model = FakeModel()
    for _ in range(conversations):
        model.turn(tool_calls=[("weather", {"city": "Lisbon"})])
        model.turn(text="It is sunny in Lisbon today, with a high of 24 C.")
    return model
