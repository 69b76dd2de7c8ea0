"""Construction-time rules of the Spec models: every validator fails and passes."""

import hashlib
import math
from typing import get_args

import pytest
from pydantic import ValidationError

from psych_runtime.core.spec import BINDABLE_BUILTINS
from psych_runtime.core.spec import RESERVED_TOOL_NAMES
from psych_runtime.core.spec import SPEC_ADAPTER
from psych_runtime.core.spec import STEP_KINDS
from psych_runtime.core.spec import A2APeer
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.spec import AgentStep
from psych_runtime.core.spec import ArtifactPolicy
from psych_runtime.core.spec import BranchCase
from psych_runtime.core.spec import BranchStep
from psych_runtime.core.spec import CodeExecution
from psych_runtime.core.spec import CodeTool
from psych_runtime.core.spec import CompactionPolicy
from psych_runtime.core.spec import Condition
from psych_runtime.core.spec import ForeachStep
from psych_runtime.core.spec import HttpTool
from psych_runtime.core.spec import HumanStep
from psych_runtime.core.spec import Limits
from psych_runtime.core.spec import LiteralValue
from psych_runtime.core.spec import LoopStep
from psych_runtime.core.spec import MapStep
from psych_runtime.core.spec import McpOAuth
from psych_runtime.core.spec import McpServer
from psych_runtime.core.spec import ModelRef
from psych_runtime.core.spec import OutputPolicy
from psych_runtime.core.spec import ParallelStep
from psych_runtime.core.spec import RetryPolicy
from psych_runtime.core.spec import SetStateStep
from psych_runtime.core.spec import Skill
from psych_runtime.core.spec import SleepStep
from psych_runtime.core.spec import SpawnEnvelope
from psych_runtime.core.spec import SpawnRequest
from psych_runtime.core.spec import Step
from psych_runtime.core.spec import SubagentRef
from psych_runtime.core.spec import SuspensionPolicy
from psych_runtime.core.spec import ToolStep
from psych_runtime.core.spec import ValuePath
from psych_runtime.core.spec import WaitStep
from psych_runtime.core.spec import WorkflowSpec
from psych_runtime.core.spec import WorkflowStepRef
from psych_runtime.core.spec import derive_step_id

MODEL = ModelRef(model="m")
DESCRIPTION = "handles refunds for the shop"


def agent(**fields: object) -> AgentSpec:
    return AgentSpec(name=fields.pop("name", "a"), model=MODEL, **fields)  # type: ignore[arg-type]


def http(name: str = "h", **fields: object) -> HttpTool:
    base: dict[str, object] = {"name": name, "description": "d", "url": "https://api.example.com/x"}
    base.update(fields)
    return HttpTool.model_validate(base)


def noop(name: str = "n") -> MapStep:
    return MapStep(name=name, output={"x": LiteralValue(value=1)})


def workflow(*steps: object, **fields: object) -> WorkflowSpec:
    return WorkflowSpec(name="w", steps=steps, **fields)  # type: ignore[arg-type]


def errors_of(excinfo: pytest.ExceptionInfo[ValidationError]) -> str:
    return str(excinfo.value)


# --- names ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a", "_x", "A.b-c_d", "a" * 128])
def test_general_names_accepted(name: str) -> None:
    assert agent(name=name).name == name


@pytest.mark.parametrize("name", ["", "1a", "-a", ".a", "a b", "a/b", "a" * 129, "é"])
def test_general_names_refused(name: str) -> None:
    with pytest.raises(ValidationError):
        agent(name=name)


@pytest.mark.parametrize("name", ["t", "_t", "get-order_2", "t" * 64])
def test_tool_names_accepted(name: str) -> None:
    assert CodeTool(name=name).name == name


@pytest.mark.parametrize("name", ["a.b", "t" * 65, "9t", "a b"])
def test_tool_names_are_tighter(name: str) -> None:
    with pytest.raises(ValidationError):
        CodeTool(name=name)


@pytest.mark.parametrize("name", sorted(RESERVED_TOOL_NAMES))
def test_reserved_names_refused_for_static_tools(name: str) -> None:
    with pytest.raises(ValidationError, match="built-in"):
        CodeTool(name=name)
    with pytest.raises(ValidationError, match="built-in"):
        http(name)


def test_reserved_list_is_the_documented_one() -> None:
    assert len(RESERVED_TOOL_NAMES) == 15
    assert {"delegate", "run_code", "call_tool", "load_skill"} <= RESERVED_TOOL_NAMES
    assert BINDABLE_BUILTINS <= RESERVED_TOOL_NAMES
    assert "run_code" not in BINDABLE_BUILTINS


# --- duplicates and sorting -----------------------------------------------------------


def _skill(name: str) -> Skill:
    return Skill(name=name, description="d", body="b")


def _sub(name: str) -> SubagentRef:
    return SubagentRef(name=name, description=DESCRIPTION, spec=agent(name="child"))


@pytest.mark.parametrize("field", ["tools", "mcp_servers", "a2a_peers", "skills", "subagents"])
def test_duplicate_names_refused_and_sets_sorted(field: str) -> None:
    builders = {
        "tools": lambda n: CodeTool(name=n),
        "mcp_servers": lambda n: McpServer(name=n, url=f"https://{n}.example.com/mcp"),
        "a2a_peers": lambda n: A2APeer(name=n, url=f"https://{n}.example.com"),
        "skills": _skill,
        "subagents": _sub,
    }
    build = builders[field]
    with pytest.raises(ValidationError, match="duplicate"):
        agent(**{field: (build("b"), build("a"), build("b"))})
    spec = agent(**{field: (build("c"), build("a"), build("b"))})
    assert [item.name for item in getattr(spec, field)] == ["a", "b", "c"]


def test_mixed_tool_kinds_share_one_namespace() -> None:
    with pytest.raises(ValidationError, match="duplicate tool"):
        agent(tools=(CodeTool(name="x"), http("x")))


def test_workflow_tools_and_servers_sorted_and_deduplicated() -> None:
    with pytest.raises(ValidationError, match="duplicate"):
        workflow(noop(), tools=(CodeTool(name="x"), CodeTool(name="x")))
    wf = workflow(noop(), tools=(CodeTool(name="z"), CodeTool(name="y")))
    assert [t.name for t in wf.tools] == ["y", "z"]


def test_allow_lists_sorted_and_deduplicated() -> None:
    server = McpServer(name="s", url="https://s.example.com", allow=("b", "a*", "b"))
    assert server.allow == ("a*", "b")
    peer = A2APeer(
        name="p", url="https://p.example.com", allow=("z", "y", "z"), extensions=("u2", "u1")
    )
    assert peer.allow == ("y", "z")
    assert peer.extensions == ("u1", "u2")
    envelope = SpawnEnvelope(tools=("t2", "t1", "t1"), models=("m2", "m1"))
    assert envelope.tools == ("t1", "t2")
    assert envelope.models == ("m1", "m2")


def test_sequences_keep_author_order() -> None:
    ref = ModelRef(model="m", fallbacks=("z", "a", "m2"))
    assert ref.fallbacks == ("z", "a", "m2")
    oauth = McpOAuth(redirect_uris=("https://b.example/cb", "https://a.example/cb"))
    assert oauth.redirect_uris == ("https://b.example/cb", "https://a.example/cb")
    wf = workflow(noop("z"), noop("a"))
    assert [s.name for s in wf.steps] == ["z", "a"]
    branch = BranchStep(
        name="b",
        cases=(
            BranchCase(name="z", when=Condition(path="input.x"), step=noop("n1")),
            BranchCase(name="a", when=Condition(path="input.y"), step=noop("n2")),
        ),
    )
    assert [c.name for c in branch.cases] == ["z", "a"]


def test_allow_star_only_at_the_end() -> None:
    with pytest.raises(ValidationError, match="last character"):
        McpServer(name="s", url="https://s.example.com", allow=("a*b",))
    with pytest.raises(ValidationError):
        McpServer(name="s", url="https://s.example.com", allow=("",))


def test_mcp_transport_has_no_stdio() -> None:
    with pytest.raises(ValidationError):
        McpServer.model_validate(
            {"name": "s", "url": "https://s.example.com", "transport": "stdio"}
        )
    assert McpServer(name="s", url="https://s.example.com").transport == "http"


# --- owner-prefixed names and bindings ------------------------------------------------


def test_static_tool_may_not_look_minted_for_a_server_or_peer() -> None:
    server = McpServer(name="github", url="https://gh.example.com")
    peer = A2APeer(name="helper", url="https://helper.example.com")
    with pytest.raises(ValidationError, match="github__issue"):
        agent(tools=(CodeTool(name="github__issue"),), mcp_servers=(server,))
    with pytest.raises(ValidationError, match="helper__x"):
        agent(tools=(CodeTool(name="helper__x"),), a2a_peers=(peer,))
    # Without that server the same name is just a name.
    assert agent(tools=(CodeTool(name="github__issue"),)).tools[0].name == "github__issue"
    # One underscore is not the owner separator.
    agent(tools=(CodeTool(name="github_issue"),), mcp_servers=(server,))


def test_server_and_peer_may_not_share_a_name() -> None:
    with pytest.raises(ValidationError, match="share a name"):
        agent(
            mcp_servers=(McpServer(name="x", url="https://x.example.com"),),
            a2a_peers=(A2APeer(name="x", url="https://y.example.com"),),
        )


def test_bindings_must_be_granted_builtin_or_owner_addressed() -> None:
    server = McpServer(name="gh", url="https://gh.example.com")
    with pytest.raises(ValidationError, match="unknown: nope"):
        agent(code_execution=CodeExecution(bindings=("nope",)))
    with pytest.raises(ValidationError, match="run_code"):
        agent(code_execution=CodeExecution(bindings=("run_code",)))
    spec = agent(
        tools=(CodeTool(name="lookup"),),
        mcp_servers=(server,),
        code_execution=CodeExecution(bindings=("lookup", "gh__search", "remember")),
    )
    assert spec.code_execution is not None
    assert spec.code_execution.bindings == ("gh__search", "lookup", "remember")


def test_bindings_duplicates_refused_none_means_all() -> None:
    with pytest.raises(ValidationError, match="duplicate binding"):
        CodeExecution(bindings=("remember", "remember"))
    assert CodeExecution().bindings is None


# --- HTTP tools -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "header", ["Authorization", "authorization", "Proxy-Authorization", "COOKIE"]
)
def test_secret_headers_refused(header: str) -> None:
    with pytest.raises(ValidationError, match="credential"):
        http(headers={header: "Bearer abc"})


def test_plain_headers_accepted_and_bad_names_refused() -> None:
    assert http(headers={"X-Api-Version": "2"}).headers == {"X-Api-Version": "2"}
    with pytest.raises(ValidationError, match="header name"):
        http(headers={"Bad Header": "x"})


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("ftp://example.com/x", "scheme"),
        ("https://{host}/x", "host"),
        ("https://api.{region}.example.com/x", "host"),
        ("https://user:pw@example.com/x", "user info"),
        ("example.com/x", "absolute"),
        ("https:///x", "no host"),
        ("https://example.com/a b", "whitespace"),
    ],
)
def test_http_urls_refused(url: str, fragment: str) -> None:
    with pytest.raises(ValidationError, match=fragment):
        http(url=url)


def test_http_url_placeholders_allowed_after_the_host() -> None:
    tool = http(url="HTTPS://api.example.com:8443/orders/{order_id}?q={q}")
    assert tool.url.endswith("{q}")


def test_http_tool_bounds() -> None:
    assert http().method == "POST"
    assert http(timeout_seconds=600).timeout_seconds == 600.0
    for bad in (
        {"timeout_seconds": 0},
        {"timeout_seconds": 601},
        {"description": ""},
        {"method": "HEAD"},
        {"url": "https://x.example/" + "a" * 2048},
    ):
        with pytest.raises(ValidationError):
            http(**bad)


def test_mcp_server_and_peer_urls_are_checked() -> None:
    with pytest.raises(ValidationError):
        McpServer(name="s", url="stdio://local")
    with pytest.raises(ValidationError):
        A2APeer(name="p", url="https://{tenant}.example.com")


# --- models and limits ----------------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"temperature": 2.01},
        {"temperature": -0.1},
        {"top_p": 0},
        {"top_p": 1.01},
        {"max_output_tokens": 0},
        {"reasoning_effort": "extreme"},
        {"model": ""},
        {"model": "m" * 257},
    ],
)
def test_model_ref_bounds_refused(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        ModelRef.model_validate({"model": "m", **fields})


def test_model_ref_bounds_accepted() -> None:
    ref = ModelRef(model="m", temperature=2, top_p=1, max_output_tokens=1, reasoning_effort="low")
    assert ref.temperature == 2.0
    assert isinstance(ref.temperature, float)


def test_limits_defaults() -> None:
    limits = Limits()
    assert limits.large_result_bytes == 32_768
    assert (limits.max_steps, limits.max_turns, limits.max_delegation_depth) == (48, 32, 3)
    assert limits.deadline_seconds == 900.0
    assert limits.stream_idle_seconds == 300.0


@pytest.mark.parametrize(
    ("threshold", "hard_stop"),
    [
        ("failure_streak_threshold", "failure_streak_hard_stop"),
        ("repeat_call_threshold", "repeat_call_hard_stop"),
    ],
)
def test_limits_hard_stop_not_below_threshold(threshold: str, hard_stop: str) -> None:
    with pytest.raises(ValidationError, match=hard_stop):
        Limits.model_validate({threshold: 5, hard_stop: 4})
    assert getattr(Limits.model_validate({threshold: 5, hard_stop: 5}), hard_stop) == 5


@pytest.mark.parametrize(
    "fields",
    [
        {"max_steps": 10_001},
        {"max_turns": 0},
        {"max_delegation_depth": 17},
        {"transient_retry_budget": 101},
        {"stream_idle_seconds": 3_601},
        {"deadline_seconds": 86_401},
        {"max_history_records": 20_001},
        {"max_fanout_per_turn": 65},
    ],
)
def test_limits_bounds(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Limits.model_validate(fields)


def test_suspension_defaults() -> None:
    policy = SuspensionPolicy()
    assert policy.approval_expires_seconds == 86_400.0
    assert policy.external_expires_seconds == 604_800.0
    assert policy.children_expires_seconds == 3_600.0
    assert policy.may_ask_questions is False


def test_compaction_policy_rules() -> None:
    with pytest.raises(ValidationError):
        CompactionPolicy.model_validate({})
    with pytest.raises(ValidationError):
        CompactionPolicy(trigger_tokens=0)
    with pytest.raises(ValidationError):
        CompactionPolicy(trigger_tokens=10, keep_recent_turns=101)
    policy = CompactionPolicy(trigger_tokens=10, summary_instructions="a\r\nb")
    assert policy.summary_instructions == "a\nb"


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_floats_refused(bad: float) -> None:
    with pytest.raises(ValidationError):
        ModelRef(model="m", temperature=bad)
    with pytest.raises(ValidationError):
        Limits(stream_idle_seconds=bad)
    with pytest.raises(ValidationError, match="finite"):
        http(input_schema={"type": "object", "x": [1.0, bad]})


def test_output_policy_preview_fits() -> None:
    with pytest.raises(ValidationError, match="preview_bytes"):
        OutputPolicy(preview_bytes=8_000, max_bytes=4_096)
    assert OutputPolicy(preview_bytes=4_096, max_bytes=4_096).max_bytes == 4_096
    assert ArtifactPolicy().max_count == 16
    assert OutputPolicy().max_bytes == 8 * 1024 * 1024


def test_spawn_envelope_and_request_bounds() -> None:
    with pytest.raises(ValidationError):
        SpawnEnvelope(max_depth=0)
    with pytest.raises(ValidationError):
        SpawnEnvelope(max_alive=33)
    good = {
        "name": "child",
        "purpose": "p" * 20,
        "task": "t" * 40,
        "deliverable": "d" * 15,
    }
    assert SpawnRequest.model_validate(good).model is None
    for field, short in (("purpose", 19), ("task", 39), ("deliverable", 14)):
        with pytest.raises(ValidationError, match=field):
            SpawnRequest.model_validate({**good, field: "x" * short})
    with pytest.raises(ValidationError):
        SpawnRequest.model_validate({**good, "surprise": 1})


def test_subagent_description_minimum() -> None:
    with pytest.raises(ValidationError):
        SubagentRef(name="c", description="too short", spec=agent())
    assert SubagentRef(name="c", description="x" * 20, spec=agent()).description == "x" * 20


def test_skill_rules() -> None:
    with pytest.raises(ValidationError):
        Skill(name="s", description="d", body="")
    with pytest.raises(ValidationError):
        Skill(name="s", description="", body="b")
    with pytest.raises(ValidationError):
        Skill(name="s", description="d" * 1025, body="b")


def test_answer_style_only_concise() -> None:
    assert agent(answer_style="concise").answer_style == "concise"
    with pytest.raises(ValidationError):
        agent(answer_style="verbose")


# --- text normalisation ---------------------------------------------------------------


def test_line_endings_normalised_whitespace_kept() -> None:
    spec = agent(
        instructions="one\r\ntwo\rthree  \n",
        description="d\r\n",
        skills=(Skill(name="s", description="x\ry", body="b\r\nc\t"),),
        subagents=(SubagentRef(name="c", description=DESCRIPTION + "\r\n", spec=agent()),),
    )
    assert spec.instructions == "one\ntwo\nthree  \n"
    assert spec.description == "d\n"
    assert (spec.skills[0].description, spec.skills[0].body) == ("x\ny", "b\nc\t")
    assert spec.subagents[0].description == DESCRIPTION + "\n"
    assert McpOAuth(client_name="a\r\nb").client_name == "a\nb"


def test_length_is_measured_after_normalisation() -> None:
    text = "a\r\n" * 2048  # 6144 characters as written, 4096 once normalised
    assert len(agent(description=text).description) == 4096
    with pytest.raises(ValidationError):
        agent(description="a\n" * 2049)


# --- callables ------------------------------------------------------------------------


def lookup_order(order_id: str) -> str:
    return order_id


class Callable_:
    def __call__(self) -> None:
        return None


@pytest.mark.parametrize(
    "build",
    [
        lambda: agent(tools=(lookup_order,)),
        lambda: agent(tools=(CodeTool,)),
        lambda: http(
            input_schema={"type": "object", "properties": {"x": {"default": lookup_order}}}
        ),
        lambda: workflow(noop(), initial_state={"a": [1, {"b": Callable_()}]}),
        lambda: LiteralValue(value=[lambda: 1]),
        lambda: ToolStep(name="t", tool="x", arguments={"f": print}),
        lambda: AgentSpec.model_validate(
            {"name": "a", "model": {"model": "m", "fallbacks": [len]}}
        ),
        lambda: agent(instructions=lookup_order),
        lambda: WaitStep(name="w", event="e", payload_schema={"deep": {"deeper": (lookup_order,)}}),
    ],
)
def test_callables_refused_anywhere(build: object) -> None:
    with pytest.raises(ValidationError, match="never hold a callable"):
        build()  # type: ignore[operator]


def test_callable_error_names_the_function_and_path() -> None:
    with pytest.raises(ValidationError) as excinfo:
        workflow(noop(), initial_state={"hooks": [1, lookup_order]})
    message = errors_of(excinfo)
    assert "lookup_order" in message
    assert "initial_state.hooks.1" in message


# --- model hygiene --------------------------------------------------------------------


def test_models_are_frozen_and_forbid_extra_keys() -> None:
    spec = agent()
    with pytest.raises(ValidationError):
        spec.name = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="Extra inputs"):
        AgentSpec.model_validate({"name": "a", "model": {"model": "m"}, "tool": []})
    with pytest.raises(ValidationError, match="Extra inputs"):
        Limits.model_validate({"max_stepz": 3})


def test_spec_adapter_discriminates_by_kind() -> None:
    assert isinstance(
        SPEC_ADAPTER.validate_python({"kind": "agent", "name": "a", "model": {"model": "m"}}),
        AgentSpec,
    )
    wf = SPEC_ADAPTER.validate_python(
        {"kind": "workflow", "name": "w", "steps": [{"kind": "sleep", "name": "s", "seconds": 1}]}
    )
    assert isinstance(wf, WorkflowSpec)
    with pytest.raises(ValidationError):
        SPEC_ADAPTER.validate_python({"kind": "robot", "name": "a"})


# --- workflow steps -------------------------------------------------------------------


def test_step_kinds_cover_the_union() -> None:
    assert len(STEP_KINDS) == 12
    union, _discriminator = get_args(Step)
    classes = get_args(union)
    assert [cls.model_fields["kind"].default for cls in classes] == list(STEP_KINDS)


def test_workflow_needs_a_step() -> None:
    with pytest.raises(ValidationError):
        WorkflowSpec(name="w", steps=())


def test_loop_needs_exactly_one_stop_rule() -> None:
    cond = Condition(path="state.done")
    with pytest.raises(ValidationError, match="exactly one of until or while"):
        LoopStep(name="l", body=noop())
    with pytest.raises(ValidationError, match="exactly one of until or while"):
        LoopStep(name="l", body=noop(), until=cond, while_=cond)
    assert LoopStep(name="l", body=noop(), until=cond).until == cond
    by_name = LoopStep(name="l", body=noop(), while_=cond)
    by_alias = LoopStep.model_validate(
        {"name": "l", "body": noop(), "while": {"path": "state.done"}}
    )
    by_field = LoopStep.model_validate(
        {"name": "l", "body": noop(), "while_": {"path": "state.done"}}
    )
    assert by_name == by_alias == by_field
    assert by_name.while_ == cond
    with pytest.raises(ValidationError):
        LoopStep(name="l", body=noop(), until=cond, max_iterations=10_001)


def test_sleep_needs_exactly_one_wake_rule() -> None:
    with pytest.raises(ValidationError, match="exactly one of seconds or until"):
        SleepStep(name="s")
    with pytest.raises(ValidationError, match="exactly one of seconds or until"):
        SleepStep(name="s", seconds=1, until=ValuePath(path="input.at"))
    assert SleepStep(name="s", seconds=5).seconds == 5.0
    assert SleepStep(name="s", until=ValuePath(path="input.at")).until is not None
    with pytest.raises(ValidationError):
        SleepStep(name="s", seconds=30 * 86_400 + 1)


def test_condition_needs_exactly_one_shape() -> None:
    leaf = Condition(path="input.x")
    with pytest.raises(ValidationError, match="exactly one"):
        Condition()
    with pytest.raises(ValidationError, match="exactly one"):
        Condition(path="input.x", all_of=(leaf,))
    with pytest.raises(ValidationError, match="exactly one"):
        Condition(all_of=(leaf,), any_of=(leaf,))
    with pytest.raises(ValidationError):
        Condition(all_of=())
    assert Condition(any_of=(leaf, Condition(all_of=(leaf,)))).any_of is not None
    with pytest.raises(ValidationError, match="only to a condition on a path"):
        Condition(all_of=(leaf,), op="eq", value=1)


def test_condition_ops() -> None:
    assert Condition(path="input.x", op="matches", value=r"^a+\d$").value == r"^a+\d$"
    with pytest.raises(ValidationError, match="regular expression"):
        Condition(path="input.x", op="matches", value="(unclosed")
    with pytest.raises(ValidationError, match="regular expression"):
        Condition(path="input.x", op="matches", value=3)
    with pytest.raises(ValidationError, match="list"):
        Condition(path="input.x", op="in", value="abc")
    assert Condition(path="input.x", op="in", value=["a"]).value == ["a"]
    with pytest.raises(ValidationError, match="takes no value"):
        Condition(path="input.x", op="exists", value=1)
    with pytest.raises(ValidationError):
        Condition(path="input.x", op="like")


@pytest.mark.parametrize(
    "path",
    [
        "input",
        "input.a.b",
        "input.items[0].id",
        "state.count",
        "item",
        "item.x[2]",
        "index",
        "iteration",
        "steps.fetch.output",
        "steps.fetch.output.rows[3]",
        "steps.a.b.status",
        "steps.fetch.failure.kind",
        "steps.fetch.skipped",
    ],
)
def test_value_paths_accepted(path: str) -> None:
    assert ValuePath(path=path).path == path
    assert Condition(path=path).path == path


@pytest.mark.parametrize(
    "path",
    [
        "",
        "output.x",
        "steps.fetch",
        "steps.fetch.result",
        "index.x",
        "input..a",
        "input[x]",
        "steps.fetch.status.x",
        "state.",
        "$.input",
    ],
)
def test_value_paths_refused(path: str) -> None:
    with pytest.raises(ValidationError):
        ValuePath(path=path)
    with pytest.raises(ValidationError):
        Condition(path=path)


def test_step_names_unique_across_the_tree() -> None:
    cond = Condition(path="input.x")
    nested_cases = [
        ParallelStep(name="p", branches=(noop("dup"),)),
        BranchStep(name="b", cases=(BranchCase(name="c", when=cond, step=noop("dup")),)),
        BranchStep(
            name="b",
            cases=(BranchCase(name="c", when=cond, step=noop("ok")),),
            otherwise=noop("dup"),
        ),
        LoopStep(name="l", body=noop("dup"), until=cond),
        ForeachStep(name="f", items=ValuePath(path="input.items"), body=noop("dup")),
        ParallelStep(name="p", branches=(LoopStep(name="l", body=noop("dup"), until=cond),)),
    ]
    for composite in nested_cases:
        with pytest.raises(ValidationError, match="'dup'"):
            workflow(noop("dup"), composite)
        # Renamed, the same tree is fine.
        workflow(noop("other"), composite)
    with pytest.raises(ValidationError, match="unique"):
        workflow(noop("a"), noop("a"))


def test_nested_workflow_is_its_own_namespace() -> None:
    inner = workflow(noop("same"))
    outer = workflow(noop("same"), WorkflowStepRef(name="nested", spec=inner))
    assert outer.steps[1].kind == "workflow"
    # ...and an agent step's spec may share names too.
    workflow(noop("a"), AgentStep(name="b", spec=agent(name="a")))


def test_branch_case_names_unique() -> None:
    cond = Condition(path="input.x")
    with pytest.raises(ValidationError, match="duplicate branch case"):
        BranchStep(
            name="b",
            cases=(
                BranchCase(name="c", when=cond, step=noop("x")),
                BranchCase(name="c", when=cond, step=noop("y")),
            ),
        )
    with pytest.raises(ValidationError):
        BranchStep(name="b", cases=())


def test_other_step_rules() -> None:
    with pytest.raises(ValidationError):
        MapStep(name="m", output={})
    with pytest.raises(ValidationError):
        SetStateStep(name="s", values={})
    with pytest.raises(ValidationError):
        HumanStep(name="h", prompt="")
    with pytest.raises(ValidationError):
        ForeachStep(name="f", items=ValuePath(path="input.items"), body=noop(), concurrency=65)
    with pytest.raises(ValidationError):
        ParallelStep(name="p", branches=())
    with pytest.raises(ValidationError):
        MapStep.model_validate(
            {"name": "m", "output": {"x": {"kind": "literal"}}, "on_failure": "retry"}
        )
    step = ToolStep(name="t", tool="x", timeout_seconds=5, on_failure="continue")
    assert (step.timeout_seconds, step.on_failure, step.ends_workflow) == (5.0, "continue", False)
    with pytest.raises(ValidationError):
        ToolStep(name="t", tool="x", timeout_seconds=0)


# --- retry ----------------------------------------------------------------------------


def test_retry_delay_schedule() -> None:
    policy = RetryPolicy(max_attempts=8, backoff_seconds=2, multiplier=3, max_backoff_seconds=100)
    assert [policy.delay_before(n) for n in range(0, 7)] == [0.0, 0.0, 2.0, 6.0, 18.0, 54.0, 100.0]
    assert RetryPolicy(backoff_seconds=0).delay_before(5) == 0.0
    huge = RetryPolicy(backoff_seconds=1, multiplier=10, max_backoff_seconds=60)
    assert huge.delay_before(400) == 60.0


def test_retry_policy_bounds_and_kinds() -> None:
    assert RetryPolicy(retry_on=("timeout", "http_5xx", "timeout")).retry_on == (
        "http_5xx",
        "timeout",
    )
    for bad in (
        {"max_attempts": 0},
        {"max_attempts": 101},
        {"multiplier": 0.5},
        {"multiplier": 11},
        {"backoff_seconds": -1},
    ):
        with pytest.raises(ValidationError):
            RetryPolicy.model_validate(bad)


# --- step ids -------------------------------------------------------------------------


def test_derive_step_id_matches_the_documented_framing() -> None:
    expected = hashlib.sha256(b"run_1" + b"\x1fswf" + b"\x1fi0" + b"\x1fsfetch").hexdigest()[:32]
    assert derive_step_id("run_1", ("wf", 0, "fetch")) == "stp_" + expected  # type: ignore[arg-type]


def test_derive_step_id_distinguishes_types_and_positions() -> None:
    ids = {
        derive_step_id("r", ("w", 0, "a")),  # type: ignore[arg-type]
        derive_step_id("r", ("w", "0", "a")),  # type: ignore[arg-type]
        derive_step_id("r", ("w", 1, "a")),  # type: ignore[arg-type]
        derive_step_id("r2", ("w", 0, "a")),  # type: ignore[arg-type]
        derive_step_id("r", ("w", 0, "a", 0)),  # type: ignore[arg-type]
    }
    assert len(ids) == 5
    assert all(i.startswith("stp_") and len(i) == 36 for i in ids)
    with pytest.raises(TypeError):
        derive_step_id("r", ("w", True))  # type: ignore[arg-type]


def _nested(depth: int) -> dict[str, object]:
    root: dict[str, object] = {}
    node = root
    for _ in range(depth):
        child: dict[str, object] = {}
        node["x"] = child
        node = child
    return root


@pytest.mark.parametrize(
    "place",
    ["description", "input_schema", "schema_properties"],
)
async def test_a_spec_nested_a_thousand_deep_is_refused_not_a_recursion_error(place: str) -> None:
    import psych_runtime

    deep = _nested(1000)
    spec: dict[str, object] = {"kind": "agent", "name": "a", "model": "m"}
    tool = {"kind": "http", "name": "h", "description": "d", "url": "https://x.test/"}
    if place == "description":
        spec["tools"] = [{**tool, "description": deep}]
    elif place == "input_schema":
        spec["tools"] = [{**tool, "input_schema": deep}]
    else:
        spec["tools"] = [{**tool, "input_schema": {"type": "object", "properties": deep}}]
    with pytest.raises(psych_runtime.SpecValidationError, match="deeper than"):
        psych_runtime.validate(spec)
    store = psych_runtime.InMemoryStore()
    with pytest.raises(psych_runtime.SpecValidationError, match="deeper than"):
        await psych_runtime.publish(store, spec, scope=psych_runtime.Scope(tenant="t"))


def test_a_spec_nested_within_the_bound_is_accepted() -> None:
    import psych_runtime

    tool = {"kind": "http", "name": "h", "description": "d", "url": "https://x.test/"}
    schema = {"type": "object", "properties": {"x": _nested(40)}}
    spec = {"kind": "agent", "name": "a", "model": "m", "tools": [{**tool, "input_schema": schema}]}
    psych_runtime.validate(spec)
