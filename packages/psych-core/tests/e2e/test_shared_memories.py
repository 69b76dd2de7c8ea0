"""``Runtime(memories=...)``: facts every Run of the process is shown, no end user needed."""

import pytest

import psych_runtime
from psych_runtime.testing import FakeModel


async def test_every_run_sees_the_processes_memories_in_its_system_prompt() -> None:
    model = FakeModel().turn(text="Oslo.").turn(text="Still Oslo.")
    spec = psych_runtime.AgentSpec(name="a", model="m", instructions="Be brief.")
    settings = psych_runtime.RuntimeSettings(memories=("Orders ship from the Oslo warehouse.",))
    async with psych_runtime.session(model, runtime=settings) as s:
        first = await s.ask(spec, "Where do orders ship from?")
        await s.ask(spec, "And this one?")
        log = await s.read_log(first.run_id)
    for request in model.requests:
        system = request.messages[0]
        assert system.role == "system"
        assert "Orders ship from the Oslo warehouse." in str(system.content)
    started = next(r for r in log if r.type == "model_call_started")
    assert "Orders ship from the Oslo warehouse." in started.system_prompt


@pytest.mark.parametrize("bad", ["one string", ("",), (3,)])
async def test_memories_must_be_a_collection_of_texts(bad: object) -> None:
    store = psych_runtime.InMemoryStore()
    registry = psych_runtime.ToolRegistry()
    with pytest.raises(psych_runtime.InvalidArgument) as refused:
        psych_runtime.Runtime(store, FakeModel(), registry, memories=bad)  # type: ignore[arg-type]
    assert refused.value.argument == "memories"
