"""Publish-time validation: one test per check, plus how issues are reported."""

from datetime import UTC
from datetime import datetime
from typing import Any

import pytest

from psych_runtime.core.spec import A2APeer
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.spec import AgentStep
from psych_runtime.core.spec import BranchCase
from psych_runtime.core.spec import BranchStep
from psych_runtime.core.spec import CodeExecution
from psych_runtime.core.spec import CodeTool
from psych_runtime.core.spec import CompactionPolicy
from psych_runtime.core.spec import Condition
from psych_runtime.core.spec import HttpTool
from psych_runtime.core.spec import Limits
from psych_runtime.core.spec import LiteralValue
from psych_runtime.core.spec import LoopStep
from psych_runtime.core.spec import MapStep
from psych_runtime.core.spec import McpServer
from psych_runtime.core.spec import ModelRef
from psych_runtime.core.spec import ParallelStep
from psych_runtime.core.spec import Skill
from psych_runtime.core.spec import SpawnEnvelope
from psych_runtime.core.spec import SubagentRef
from psych_runtime.core.spec import SuspensionPolicy
from psych_runtime.core.spec import ToolStep
from psych_runtime.core.spec import WorkflowSpec
from psych_runtime.core.spec import WorkflowStepRef
from psych_runtime.core.validation import MAX_NESTING
from psych_runtime.core.validation import SpecValidationError
from psych_runtime.core.validation import ValidationContext
from psych_runtime.core.validation import ValidationIssue
from psych_runtime.core.validation import collect_issues
from psych_runtime.core.validation import validate
from psych_runtime.core.version import Version

DESCRIPTION = "does one careful thing for its parent"
WHEN = datetime(2025, 1, 1, tzinfo=UTC)


def agent(name: str = "a", **fields: Any) -> AgentSpec:
    fields.setdefault("model", ModelRef(model="m"))
    return AgentSpec(name=name, **fields)


def noop(name: str = "n") -> MapStep:
    return MapStep(name=name, output={"x": LiteralValue(value=1)})


def workflow(*steps: Any, name: str = "w", **fields: Any) -> WorkflowSpec:
    return WorkflowSpec(name=name, steps=steps, **fields)


def paths(spec: AgentSpec | WorkflowSpec, **context: Any) -> list[str]:
    return [issue.path for issue in collect_issues(spec, ValidationContext(**context))]


def http(name: str, schema: dict[str, Any]) -> HttpTool:
    return HttpTool(name=name, description="d", url="https://x.example", input_schema=schema)


# 1. nesting ---------------------------------------------------------------------------


def nested_workflows(levels: int) -> WorkflowSpec:
    spec = workflow(noop(), name="w0")
    for level in range(1, levels + 1):
        spec = workflow(WorkflowStepRef(name="inner", spec=spec), name=f"w{level}")
    return spec


def test_nesting_up_to_the_limit_is_fine() -> None:
    assert collect_issues(nested_workflows(MAX_NESTING)) == ()


def test_nesting_beyond_the_limit_is_an_issue() -> None:
    issues = collect_issues(nested_workflows(MAX_NESTING + 1))
    assert len(issues) == 1
    assert "nested more than 16" in issues[0].message
    assert issues[0].path == ".".join(["steps.0.spec"] * (MAX_NESTING + 1))


# 2. self-containment ------------------------------------------------------------------


def test_a_spec_containing_itself_is_an_issue() -> None:
    looped = agent("loop")
    ref = SubagentRef.model_construct(name="again", description=DESCRIPTION, spec=looped)
    object.__setattr__(looped, "subagents", (ref,))
    issues = collect_issues(looped)
    assert [(i.path, "contains itself" in i.message) for i in issues] == [
        ("subagents.0.spec", True)
    ]


def test_the_same_spec_in_two_siblings_is_not_a_cycle() -> None:
    child = agent("child")
    parent = agent(
        subagents=(
            SubagentRef(name="one", description=DESCRIPTION, spec=child),
            SubagentRef(name="two", description=DESCRIPTION, spec=child),
        )
    )
    assert collect_issues(parent) == ()


# 3. models ----------------------------------------------------------------------------


def test_known_models_cover_model_fallbacks_compaction_and_spawn() -> None:
    spec = agent(
        model=ModelRef(model="gpt", fallbacks=("ok", "gone")),
        compaction=CompactionPolicy(trigger_tokens=1000, model="summariser"),
        spawn=SpawnEnvelope(models=("ok", "mystery")),
    )
    assert paths(spec, known_models={"gpt", "ok", "summariser"}) == [
        "model.fallbacks.1",
        "spawn.models.0",  # the envelope's models are a sorted set: ("mystery", "ok")
    ]
    assert paths(spec, known_models={"ok"}) == [
        "model.model",
        "model.fallbacks.1",
        "compaction.model",
        "spawn.models.0",
    ]
    assert paths(spec, known_models={"gpt", "ok", "gone", "summariser", "mystery"}) == []
    assert paths(spec) == []  # empty = not checked


# 4. tools -----------------------------------------------------------------------------


def test_code_tools_must_be_registered_when_a_registry_is_given() -> None:
    spec = agent(tools=(CodeTool(name="lookup"), CodeTool(name="refund")))
    assert paths(spec, registered_tools=["lookup"]) == ["tools.1"]
    issue = collect_issues(spec, ValidationContext(registered_tools=["lookup"]))[0]
    assert "'refund'" in issue.message
    assert "not registered" in issue.message
    assert paths(spec, registered_tools=["lookup", "refund", "other"]) == []
    assert paths(spec) == []


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        ({"properties": {}}, "no root 'type'"),
        ({"type": "dict"}, "not a JSON Schema type"),
        ({"type": ["string", "nothing"]}, "not a JSON Schema type"),
        ({"type": "object", "properties": []}, "'properties' must be an object"),
        ({"type": "object", "properties": {}, "required": "a"}, "'required' must be a list"),
        ({"type": "object", "properties": {"a": {}}, "required": ["a", "b"]}, "'b' is not in"),
        ({"type": "object", "required": ["a"]}, "'a' is not in"),
    ],
)
def test_http_input_schema_shallow_check(schema: dict[str, Any], fragment: str) -> None:
    issues = collect_issues(agent(tools=(http("h", schema),)))
    assert [i.path for i in issues] == ["tools.0.input_schema"]
    assert fragment in issues[0].message


@pytest.mark.parametrize(
    "schema",
    [
        {},
        {"type": "string"},
        {"type": ["string", "null"]},
        {"type": "object"},
        {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
    ],
)
def test_http_input_schema_accepted(schema: dict[str, Any]) -> None:
    assert collect_issues(agent(tools=(http("h", schema),))) == ()


# 5. MCP -------------------------------------------------------------------------------


def test_required_mcp_servers_must_be_reachable() -> None:
    servers = (
        McpServer(name="crm", url="https://crm.example.com"),
        McpServer(name="wiki", url="https://wiki.example.com", optional=True),
    )
    spec = agent(mcp_servers=servers)
    assert paths(spec, reachable_mcp_servers={"other"}) == ["mcp_servers.0"]
    assert paths(spec, reachable_mcp_servers={"crm"}) == []
    assert paths(spec) == []
    wf = workflow(noop(), mcp_servers=servers)
    assert paths(wf, reachable_mcp_servers={"other"}) == ["mcp_servers.0"]


# 6. skill links -----------------------------------------------------------------------


def test_skill_links_must_resolve() -> None:
    skills = (
        Skill(name="refunds", description="d", body="See [[skill:tone]] and [[skill:missing]]."),
        Skill(name="tone", description="d", body="Be kind. [[skill:refunds]]"),
    )
    spec = agent(instructions="Start with [[skill:refunds]], then [[skill:nope]].", skills=skills)
    issues = collect_issues(spec)
    assert [i.path for i in issues] == ["instructions", "skills.0.body"]
    assert "[[skill:nope]]" in issues[0].message
    assert "[[skill:missing]]" in issues[1].message
    tone = Skill(name="tone", description="d", body="Be kind.")
    assert collect_issues(agent(instructions="[[skill:tone]]", skills=(tone,))) == ()


# 7. delegation depth ------------------------------------------------------------------


def chain(depth: int, max_depth: int) -> AgentSpec:
    spec = agent("leaf", limits=Limits(max_delegation_depth=max_depth))
    for level in range(depth):
        spec = agent(
            f"level{level}",
            subagents=(SubagentRef(name="next", description=DESCRIPTION, spec=spec),),
            limits=Limits(max_delegation_depth=max_depth),
        )
    return spec


def test_subagent_tree_must_fit_the_delegation_depth() -> None:
    issues = collect_issues(chain(3, 2))
    assert [i.path for i in issues] == ["subagents"]
    assert "3 levels" in issues[0].message
    assert "max_delegation_depth is 2" in issues[0].message
    assert collect_issues(chain(2, 2)) == ()
    flat = agent(limits=Limits(max_delegation_depth=0))
    assert collect_issues(flat) == ()


# 8. sandbox profile -------------------------------------------------------------------


def test_sandbox_profile_must_be_provided() -> None:
    spec = agent(code_execution=CodeExecution(profile="gpu"))
    assert paths(spec, sandbox_profiles={"default"}) == ["code_execution.profile"]
    assert paths(spec, sandbox_profiles={"default", "gpu"}) == []
    assert paths(spec) == []
    disabled = agent(code_execution=CodeExecution(profile="gpu", enabled=False))
    assert paths(disabled, sandbox_profiles={"default"}) == []


# 9. recursion into subagents ----------------------------------------------------------


def test_subagents_are_checked_too() -> None:
    child = agent("child", model=ModelRef(model="unknown"), tools=(CodeTool(name="secret"),))
    parent = agent(subagents=(SubagentRef(name="c", description=DESCRIPTION, spec=child),))
    assert paths(parent, known_models={"m"}, registered_tools={"other"}) == [
        "subagents.0.spec.model.model",
        "subagents.0.spec.tools.0",
    ]


# 10. workflows ------------------------------------------------------------------------


def test_tool_steps_need_a_granted_or_registered_tool_even_without_context() -> None:
    cond = Condition(path="input.x")
    wf = workflow(
        ToolStep(name="a", tool="granted"),
        ParallelStep(name="p", branches=(ToolStep(name="b", tool="stray"),)),
        BranchStep(
            name="br",
            cases=(BranchCase(name="c", when=cond, step=ToolStep(name="c1", tool="stray2")),),
            otherwise=ToolStep(name="o", tool="stray3"),
        ),
        LoopStep(name="l", body=ToolStep(name="lb", tool="crm__search"), until=cond),
        tools=(CodeTool(name="granted"),),
        mcp_servers=(McpServer(name="crm", url="https://crm.example.com", allow=("sea*",)),),
    )
    assert paths(wf) == [
        "steps.1.branches.0.tool",
        "steps.2.cases.0.step.tool",
        "steps.2.otherwise.tool",
    ]
    assert paths(wf, registered_tools={"granted", "stray", "stray2", "stray3"}) == []


def test_tool_step_on_a_server_must_pass_its_allow_list() -> None:
    wf = workflow(
        ToolStep(name="a", tool="crm__delete"),
        mcp_servers=(McpServer(name="crm", url="https://crm.example.com", allow=("search",)),),
    )
    assert paths(wf) == ["steps.0.tool"]


def test_agent_and_workflow_steps_are_recursed() -> None:
    inner = workflow(ToolStep(name="t", tool="only_outer"), name="inner")
    wf = workflow(
        AgentStep(name="ask", spec=agent(model=ModelRef(model="unknown"))),
        WorkflowStepRef(name="sub", spec=inner),
        ParallelStep(
            name="p", branches=(AgentStep(name="ask2", spec=agent(model=ModelRef(model="x"))),)
        ),
        tools=(CodeTool(name="only_outer"),),
    )
    assert paths(wf, known_models={"m"}) == [
        "steps.0.spec.model.model",
        "steps.1.spec.steps.0.tool",
        "steps.2.branches.0.spec.model.model",
    ]


def test_workflow_static_tools_are_checked() -> None:
    wf = workflow(noop(), tools=(CodeTool(name="x"), http("y", {"type": "bogus"})))
    assert paths(wf, registered_tools={"z"}) == ["tools.0", "tools.1.input_schema"]


# reporting ----------------------------------------------------------------------------


def test_every_issue_is_raised_together_with_its_path() -> None:
    spec = agent(
        model=ModelRef(model="unknown"),
        instructions="[[skill:ghost]]",
        tools=(CodeTool(name="unregistered"),),
        code_execution=CodeExecution(profile="gpu"),
    )
    context = ValidationContext(
        known_models=["m"], registered_tools=["other"], sandbox_profiles=["default"]
    )
    with pytest.raises(SpecValidationError) as excinfo:
        validate(spec, context=context)
    error = excinfo.value
    assert isinstance(error, ValueError)
    assert [i.path for i in error.issues] == [
        "code_execution",  # not run by this release: reported first
        "model.model",
        "tools.0",
        "instructions",
        "code_execution.profile",
    ]
    text = str(error)
    assert "5 issues" in text
    for issue in error.issues:
        assert f"{issue.path}: {issue.message}" in text


def test_validate_returns_the_spec_and_accepts_dicts() -> None:
    spec = agent(tools=(CodeTool(name="lookup"),))
    assert validate(spec, context=ValidationContext(registered_tools=["lookup"])) is spec
    built = validate(spec.model_dump())
    assert built == spec
    # A workflow dict is built into a WorkflowSpec.
    built_workflow = validate({"kind": "workflow", "name": "w", "steps": [noop().model_dump()]})
    assert built_workflow == workflow(noop())
    assert collect_issues(workflow(noop())) == ()


def test_construction_errors_become_one_spec_validation_error() -> None:
    data = {
        "kind": "agent",
        "name": "a",
        "tools": [{"kind": "code", "name": "ok"}, {"kind": "code", "name": "remember"}],
        "limits": {"failure_streak_threshold": 5, "failure_streak_hard_stop": 2},
        "mcp_servers": [{"name": "s", "url": "ftp://s"}],
    }
    with pytest.raises(SpecValidationError) as excinfo:
        validate(data)
    found = {issue.path: issue.message for issue in excinfo.value.issues}
    assert set(found) == {"model", "tools.1.name", "limits", "mcp_servers.0.url"}
    assert "built-in" in found["tools.1.name"]
    assert not found["limits"].startswith("Value error")
    assert "tools.1.name" in str(excinfo.value)


def test_construction_error_paths_inside_workflow_steps() -> None:
    data = {
        "kind": "workflow",
        "name": "w",
        "steps": [
            {
                "kind": "loop",
                "name": "l",
                "body": {"kind": "sleep", "name": "s"},
                "until": {"path": "input.x"},
            }
        ],
    }
    with pytest.raises(SpecValidationError) as excinfo:
        validate(data)
    assert [i.path for i in excinfo.value.issues] == ["steps.0.body"]


def test_unknown_kind_is_reported() -> None:
    with pytest.raises(SpecValidationError) as excinfo:
        validate({"kind": "robot", "name": "r"})
    assert len(excinfo.value.issues) == 1


def test_validation_context_accepts_any_iterable_and_is_frozen() -> None:
    context = ValidationContext(registered_tools=(n for n in ["a", "b"]), known_models=["m", "m"])
    assert context.registered_tools == frozenset({"a", "b"})
    assert context.known_models == frozenset({"m"})
    assert context.sandbox_profiles == frozenset()
    with pytest.raises(AttributeError):
        context.known_models = frozenset()  # type: ignore[misc]
    with pytest.raises(TypeError, match="single string"):
        ValidationContext(known_models="gpt-4o")
    # Nothing given says nothing about code tools; a registry's names, even none, are
    # the whole registry, so a Spec naming an unregistered tool fails at publish.
    assert not ValidationContext().registry_is_complete
    assert ValidationContext(registered_tools=[]).registry_is_complete
    assert not ValidationContext(
        registered_tools=[], registry_is_complete=False
    ).registry_is_complete


def test_validation_issue_is_plain_data() -> None:
    issue = ValidationIssue(path="tools.0", message="m")
    assert issue.model_dump() == {"path": "tools.0", "message": "m"}
    assert str(SpecValidationError([issue])).startswith("the spec has 1 issue:")


# 11. capabilities this release does not run -------------------------------------------

NOT_RUN_YET: list[tuple[str, dict[str, Any]]] = [
    ("mcp_servers", {"mcp_servers": (McpServer(name="crm", url="https://crm.example.com"),)}),
    ("a2a_peers", {"a2a_peers": (A2APeer(name="billing", url="https://billing.example.com"),)}),
    ("code_execution", {"code_execution": CodeExecution()}),
]


@pytest.mark.parametrize(("path", "fields"), NOT_RUN_YET, ids=[path for path, _ in NOT_RUN_YET])
def test_a_capability_not_run_yet_is_refused_at_publish(path: str, fields: dict[str, Any]) -> None:
    spec = agent(**fields)
    with pytest.raises(SpecValidationError) as excinfo:
        validate(spec)
    assert [issue.path for issue in excinfo.value.issues] == [path]
    assert "this release does not run" in excinfo.value.issues[0].message
    with pytest.raises(SpecValidationError) as from_dict:
        validate(spec.model_dump())
    assert from_dict.value.issues == excinfo.value.issues


def test_every_field_not_run_yet_is_reported_together() -> None:
    spec = agent(**{key: value for _, fields in NOT_RUN_YET for key, value in fields.items()})
    with pytest.raises(SpecValidationError) as excinfo:
        validate(spec)
    assert [issue.path for issue in excinfo.value.issues] == [path for path, _ in NOT_RUN_YET]


def test_a_spec_that_may_ask_questions_publishes() -> None:
    validate(agent(suspension=SuspensionPolicy(may_ask_questions=True)))


def test_a_spec_with_subagents_and_a_spawn_envelope_publishes() -> None:
    child = SubagentRef(name="c", description=DESCRIPTION, spec=agent("c"))
    spec = agent(subagents=(child,), spawn=SpawnEnvelope())
    assert validate(spec) is spec


def test_a_spec_with_skills_publishes() -> None:
    tone = Skill(name="tone", description="How to sound.", body="Be kind; see [[skill:tone]].")
    spec = agent(instructions="Use [[skill:tone]].", skills=(tone,))
    assert validate(spec) is spec


def test_those_fields_at_their_defaults_publish_cleanly() -> None:
    spec = agent(
        mcp_servers=(),
        skills=(),
        spawn=None,
        code_execution=None,
        suspension=SuspensionPolicy(),
        tasks_enabled=False,
    )
    assert validate(spec) is spec


def test_a_workflow_publishes_but_not_capabilities_it_nests_that_do_not_run_yet() -> None:
    assert validate(workflow(noop())) == workflow(noop())
    nested = AgentStep(name="helper", spec=agent(spawn=SpawnEnvelope()))
    with pytest.raises(SpecValidationError) as excinfo:
        validate(workflow(noop(), nested))
    [issue] = excinfo.value.issues
    assert issue.path == "steps.1.spec.spawn"
    assert "does not run subagents composed at run time inside a workflow" in issue.message


def test_task_lists_and_components_publish() -> None:
    spec = agent(tasks_enabled=True, components_enabled=True)
    assert validate(spec) is spec


def test_refused_specs_still_build_and_hash() -> None:
    # Only publishing refuses: the models build and hash exactly as they always have.
    for spec in (workflow(noop()), agent(tasks_enabled=True)):
        assert Version.of(spec, WHEN).verify()
