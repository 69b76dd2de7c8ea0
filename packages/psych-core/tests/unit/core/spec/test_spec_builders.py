"""Builders produce the same Spec, and so the same Version hash, as Python and dicts."""

import pytest
from pydantic import ValidationError

from psych_runtime import AgentBuilder
from psych_runtime import WorkflowBuilder
from psych_runtime.spec import AgentSpec
from psych_runtime.spec import AgentStep
from psych_runtime.spec import CodeTool
from psych_runtime.spec import Limits
from psych_runtime.spec import LiteralValue
from psych_runtime.spec import ModelRef
from psych_runtime.spec import SetStateStep
from psych_runtime.spec import Skill
from psych_runtime.spec import SubagentRef
from psych_runtime.spec import SuspensionPolicy
from psych_runtime.spec import ToolStep
from psych_runtime.spec import ValuePath
from psych_runtime.spec import WorkflowSpec
from psych_runtime.spec import spec_hash


def _hash(spec: AgentSpec | WorkflowSpec) -> str:
    return spec_hash(spec)


def test_an_agent_built_fluently_equals_python_and_dict_forms() -> None:
    child = AgentSpec(name="researcher", model=ModelRef(model="m-small"))
    built = (
        AgentBuilder("lead")
        .model("m-large", temperature=0.2)
        .describe("Plans research and writes the summary.")
        .instructions("Delegate the digging.")
        .tools("search", CodeTool(name="summarise"))
        .skill("citations", "How to cite a source.", "Cite as [n] with the URL.")
        .subagent("digger", "Digs one topic out of the web in depth.", child)
        .limits(max_turns=12)
        .limits(max_steps=20)
        .suspension(question_expires_seconds=60.0)
        .tasks()
        .answer_style("concise")
        .build()
    )
    python = AgentSpec(
        name="lead",
        model=ModelRef(model="m-large", temperature=0.2),
        description="Plans research and writes the summary.",
        instructions="Delegate the digging.",
        tools=(CodeTool(name="search"), CodeTool(name="summarise")),
        skills=(
            Skill(
                name="citations",
                description="How to cite a source.",
                body="Cite as [n] with the URL.",
            ),
        ),
        subagents=(
            SubagentRef(
                name="digger", description="Digs one topic out of the web in depth.", spec=child
            ),
        ),
        limits=Limits(max_turns=12, max_steps=20),
        suspension=SuspensionPolicy(question_expires_seconds=60.0),
        tasks_enabled=True,
        answer_style="concise",
    )
    as_dict = AgentSpec.model_validate(python.model_dump(mode="json"))
    assert built == python == as_dict
    assert _hash(built) == _hash(python) == _hash(as_dict)


def test_a_workflow_built_fluently_equals_python_and_dict_forms() -> None:
    agent = AgentBuilder("writer", model="m").instructions("Write it up.")
    built = (
        WorkflowBuilder("report")
        .describe("Fetch, then write.")
        .tools("fetch_orders")
        .input_schema({"type": "object", "required": ["customer"]})
        .initial_state(count=0)
        .tool_step("fetch", "fetch_orders", arguments_from={"customer": "input.customer"})
        .agent_step("write", agent, input={"orders": "steps.fetch.output"})
        .step(SetStateStep(name="mark", values={"done": LiteralValue(value=True)}))
        .output({"report": "steps.write.output"})
        .retry(max_attempts=3)
        .limits(max_steps=10)
        .build()
    )
    python = WorkflowSpec(
        name="report",
        description="Fetch, then write.",
        tools=(CodeTool(name="fetch_orders"),),
        input_schema={"type": "object", "required": ["customer"]},
        initial_state={"count": 0},
        steps=(
            ToolStep(
                name="fetch",
                tool="fetch_orders",
                arguments_from={"customer": ValuePath(path="input.customer")},
            ),
            AgentStep(
                name="write",
                spec=AgentSpec(
                    name="writer", model=ModelRef(model="m"), instructions="Write it up."
                ),
                input={"orders": ValuePath(path="steps.fetch.output")},
            ),
            SetStateStep(name="mark", values={"done": LiteralValue(value=True)}),
        ),
        output={"report": ValuePath(path="steps.write.output")},
        retry={"max_attempts": 3},
        limits=Limits(max_steps=10),
    )
    as_dict = WorkflowSpec.model_validate(python.model_dump(mode="json", by_alias=True))
    assert built == python == as_dict
    assert _hash(built) == _hash(python) == _hash(as_dict)


def test_every_call_returns_a_new_builder() -> None:
    base = AgentBuilder("a", model="m").tools("one")
    left = base.tools("two")
    right = base.instructions("other")
    assert [t.name for t in base.build().tools] == ["one"]
    assert [t.name for t in left.build().tools] == ["one", "two"]
    assert right.build().instructions == "other" and len(right.build().tools) == 1
    assert base.fields() == {"name": "a", "model": "m", "tools": ("one",)}


def test_a_model_ref_can_be_adjusted_by_keyword() -> None:
    ref = ModelRef(model="m", temperature=0.5)
    spec = AgentBuilder("a").model(ref, max_output_tokens=100).build()
    assert spec.model == ModelRef(model="m", temperature=0.5, max_output_tokens=100)
    assert AgentBuilder("a").model(ref).build().model is ref


def test_bad_fields_fail_at_build_naming_the_field() -> None:
    with pytest.raises(ValidationError, match="model"):
        AgentBuilder("a").build()
    with pytest.raises(ValidationError, match="max_turns"):
        AgentBuilder("a", model="m").limits(max_turns=-1)
    with pytest.raises(ValidationError, match="steps"):
        WorkflowBuilder("w").build()
    with pytest.raises(ValidationError, match="not a data path"):
        WorkflowBuilder("w").tool_step("t", "x", arguments_from={"a": "nowhere.at.all"})


async def _lookup_order(order_id: str) -> dict[str, str]:
    """Look up an order."""
    return {"order_id": order_id}


def test_a_builder_registers_a_function_and_the_spec_keeps_only_its_name() -> None:
    import psych_runtime

    registry = psych_runtime.ToolRegistry()
    spec = AgentBuilder("support", model="gpt-4o").tools(_lookup_order, registry=registry).build()
    assert [tool.name for tool in spec.tools] == ["_lookup_order"]
    assert registry.names == frozenset({"_lookup_order"})
    # Given again (another agent of the same process), it is not registered twice.
    again = AgentBuilder("other", model="gpt-4o").tools(_lookup_order, registry=registry).build()
    assert [tool.name for tool in again.tools] == ["_lookup_order"]
    # The Spec holds no callable: it hashes like the one written by name.
    by_name = AgentBuilder("support", model="gpt-4o").tools("_lookup_order").build()
    assert spec == by_name


def test_a_function_without_a_registry_is_refused_with_what_to_do() -> None:
    from psych_runtime.spec import LiveObjectInSpec

    with pytest.raises(LiveObjectInSpec, match="registry="):
        AgentBuilder("support", model="gpt-4o").tools(_lookup_order)


def test_a_scope_contributes_tenant_and_principal_to_a_pool_key() -> None:
    import psych_runtime

    scope = psych_runtime.Scope(tenant="acme", principal="alice", labels={"plan": "pro"})
    assert scope.pool_key == ("acme", "alice")
    assert psych_runtime.Scope(tenant="acme").pool_key != scope.pool_key
