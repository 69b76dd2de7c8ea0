"""Canonical JSON, the Version hash, and Version export/import."""

import hashlib
import json
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from pydantic import ValidationError

from psych_runtime.core.spec import RESERVED_TOOL_NAMES
from psych_runtime.core.spec import SPEC_ADAPTER
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.spec import CodeTool
from psych_runtime.core.spec import Condition
from psych_runtime.core.spec import HttpTool
from psych_runtime.core.spec import Limits
from psych_runtime.core.spec import LiteralValue
from psych_runtime.core.spec import LoopStep
from psych_runtime.core.spec import MapStep
from psych_runtime.core.spec import ModelRef
from psych_runtime.core.spec import ParallelStep
from psych_runtime.core.spec import SetStateStep
from psych_runtime.core.spec import Skill
from psych_runtime.core.spec import SleepStep
from psych_runtime.core.spec import ToolStep
from psych_runtime.core.spec import ValuePath
from psych_runtime.core.spec import WorkflowSpec
from psych_runtime.core.version import Version
from psych_runtime.core.version import VersionHashMismatch
from psych_runtime.core.version import canonical_json
from psych_runtime.core.version import spec_hash

WHEN = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)


def base_dict() -> dict[str, Any]:
    return {
        "name": "support",
        "instructions": "Answer questions about parcels.",
        "model": {"model": "gpt-4o", "temperature": 0.2},
        "tools": [{"kind": "code", "name": "lookup_order"}],
        "limits": {"max_turns": 12, "deadline_seconds": 300},
    }


def base_python() -> AgentSpec:
    return AgentSpec(
        name="support",
        instructions="Answer questions about parcels.",
        model=ModelRef(model="gpt-4o", temperature=0.2),
        tools=(CodeTool(name="lookup_order"),),
        limits=Limits(max_turns=12, deadline_seconds=300),
    )


# --- examples -------------------------------------------------------------------------


def test_python_and_dict_hash_the_same() -> None:
    assert spec_hash(base_python()) == spec_hash(AgentSpec.model_validate(base_dict()))
    assert spec_hash(base_python()) == spec_hash(
        SPEC_ADAPTER.validate_python({"kind": "agent", **base_dict()})
    )


def test_hash_shape() -> None:
    digest = spec_hash(base_python())
    assert digest.startswith("sha256:")
    assert len(digest) == len("sha256:") + 64
    assert digest == "sha256:" + hashlib.sha256(canonical_json(base_python())).hexdigest()


def test_omitted_default_equals_explicit_default() -> None:
    explicit = base_dict() | {
        "kind": "agent",
        "description": "",
        "mcp_servers": [],
        "spawn": None,
        "compaction": None,
        "suspension": {},
        "answer_style": None,
        "tasks_enabled": False,
    }
    explicit["model"] = {**explicit["model"], "top_p": None, "fallbacks": []}
    explicit["tools"] = [{"kind": "code", "name": "lookup_order", "interruptible": True}]
    explicit["limits"] = {**explicit["limits"], "large_result_bytes": 32768, "max_steps": 48}
    assert spec_hash(AgentSpec.model_validate(explicit)) == spec_hash(base_python())


def test_tool_order_does_not_matter() -> None:
    tools = [
        CodeTool(name="b"),
        CodeTool(name="a"),
        HttpTool(name="c", description="d", url="https://x.example"),
    ]
    first = AgentSpec(name="s", model=ModelRef(model="m"), tools=tuple(tools))
    second = AgentSpec(name="s", model=ModelRef(model="m"), tools=tuple(reversed(tools)))
    assert spec_hash(first) == spec_hash(second)


def test_any_change_changes_the_hash() -> None:
    original = spec_hash(base_python())
    assert (
        spec_hash(base_python().model_copy(update={"instructions": "Help. Be brief."})) != original
    )
    longer = AgentSpec.model_validate(
        base_dict() | {"instructions": base_dict()["instructions"] + " Be brief."}
    )
    assert spec_hash(longer) != original
    assert spec_hash(AgentSpec.model_validate(base_dict() | {"name": "support2"})) != original
    with_fallback = base_dict()
    with_fallback["model"] = {**with_fallback["model"], "fallbacks": ["a", "b"]}
    reordered = base_dict()
    reordered["model"] = {**reordered["model"], "fallbacks": ["b", "a"]}
    assert spec_hash(AgentSpec.model_validate(with_fallback)) != spec_hash(
        AgentSpec.model_validate(reordered)
    )


def test_line_endings_do_not_matter_trailing_whitespace_does() -> None:
    lf = AgentSpec.model_validate(base_dict() | {"instructions": "a\nb"})
    crlf = AgentSpec.model_validate(base_dict() | {"instructions": "a\r\nb"})
    cr = AgentSpec.model_validate(base_dict() | {"instructions": "a\rb"})
    trailing = AgentSpec.model_validate(base_dict() | {"instructions": "a\nb "})
    assert spec_hash(lf) == spec_hash(crlf) == spec_hash(cr)
    assert spec_hash(trailing) != spec_hash(lf)


def test_canonical_form_details() -> None:
    spec = AgentSpec(name="s", instructions="café ☕", model=ModelRef(model="m", temperature=1))
    raw = canonical_json(spec)
    assert "café ☕".encode() in raw
    assert b"\\u" not in raw
    assert b'"temperature":1.0' in raw
    assert b": " not in raw
    assert b", " not in raw
    parsed = json.loads(raw)
    assert list(parsed) == sorted(parsed)
    assert list(parsed["limits"]) == sorted(parsed["limits"])
    assert parsed["spawn"] is None  # absent optionals are materialised as null


def test_loop_while_appears_under_its_python_name() -> None:
    loop = LoopStep(
        name="l", body=SleepStep(name="s", seconds=1), while_=Condition(path="state.go")
    )
    raw = canonical_json(WorkflowSpec(name="w", steps=(loop,)))
    assert b'"while_":{' in raw
    assert b'"while":' not in raw


def test_golden_hash_pinned_by_hand_written_canonical_json() -> None:
    spec = AgentSpec.model_validate(
        {
            "name": "golden",
            "instructions": "Réponds.",
            "model": {"model": "m", "temperature": 1},
            "tools": [{"kind": "code", "name": "lookup"}],
        }
    )
    expected_json = (
        '{"a2a_peers":[],"answer_style":null,"code_execution":null,"compaction":null,'
        '"components_enabled":false,"description":"","instructions":"Réponds.","kind":"agent",'
        '"limits":{"deadline_seconds":900.0,"failure_streak_hard_stop":6,'
        '"failure_streak_threshold":3,"large_result_bytes":32768,"max_delegation_depth":3,'
        '"max_fanout_per_turn":4,"max_history_records":300,"max_steps":48,'
        '"max_tool_calls_per_turn":16,"max_turns":32,"repeat_call_hard_stop":6,'
        '"repeat_call_threshold":3,"stream_idle_seconds":300.0,"transient_retry_budget":8},'
        '"mcp_servers":[],'
        '"model":{"fallbacks":[],"max_output_tokens":null,"model":"m","reasoning_effort":null,'
        '"temperature":1.0,"top_p":null},'
        '"name":"golden","skills":[],"spawn":null,"subagents":[],'
        '"suspension":{"approval_expires_seconds":86400.0,"children_expires_seconds":3600.0,'
        '"external_expires_seconds":604800.0,"may_ask_questions":false,'
        '"question_expires_seconds":86400.0},'
        '"tasks_enabled":false,"tools":[{"interruptible":true,"kind":"code","name":"lookup"}]}'
    )
    expected_hash = "sha256:" + hashlib.sha256(expected_json.encode("utf-8")).hexdigest()
    assert canonical_json(spec) == expected_json.encode("utf-8")
    assert spec_hash(spec) == expected_hash


# --- Version --------------------------------------------------------------------------


def test_version_of_verify_and_export_shape() -> None:
    version = Version.of(base_python(), WHEN)
    assert version.hash == spec_hash(base_python())
    assert version.verify()
    document = json.loads(version.export_json())
    assert set(document) == {"hash", "published_at", "spec"}
    assert document["spec"] == json.loads(canonical_json(base_python()))
    assert "\n  " in version.export_json()  # indented for people
    assert Version.of(base_python(), WHEN + timedelta(days=1)).hash == version.hash


def test_verify_detects_a_wrong_hash() -> None:
    wrong = Version(hash="sha256:" + "0" * 64, spec=base_python(), published_at=WHEN)  # type: ignore[arg-type]
    assert not wrong.verify()
    with pytest.raises(ValidationError):
        Version(hash="md5:abc", spec=base_python(), published_at=WHEN)  # type: ignore[arg-type]


def test_version_needs_an_aware_timestamp() -> None:
    with pytest.raises(ValidationError):
        Version.of(base_python(), datetime(2024, 1, 1))


def test_tampered_export_refused() -> None:
    exported = Version.of(base_python(), WHEN).export_json()
    document = json.loads(exported)
    document["spec"]["instructions"] = "Refund everything."
    with pytest.raises(VersionHashMismatch) as excinfo:
        Version.import_json(json.dumps(document))
    assert isinstance(excinfo.value, ValueError)
    assert excinfo.value.stated == document["hash"]
    assert excinfo.value.computed != document["hash"]

    document = json.loads(exported)
    document["hash"] = "sha256:" + "f" * 64
    with pytest.raises(VersionHashMismatch):
        Version.import_json(json.dumps(document))


def test_import_without_a_stated_hash_recomputes_it() -> None:
    version = Version.of(base_python(), WHEN)
    document = json.loads(version.export_json())
    del document["hash"]
    assert Version.import_json(json.dumps(document)) == version


def test_import_refuses_what_is_not_an_export() -> None:
    with pytest.raises(ValueError, match="not a Version export"):
        Version.import_json("[]")
    document = json.loads(Version.of(base_python(), WHEN).export_json())
    document["extra"] = 1
    with pytest.raises(ValueError, match="unexpected keys"):
        Version.import_json(json.dumps(document))


# --- properties -----------------------------------------------------------------------

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
tool_names = names.filter(lambda n: n not in RESERVED_TOOL_NAMES)
texts = st.text(max_size=30)
finite = {"allow_nan": False, "allow_infinity": False}

model_refs = st.builds(
    ModelRef,
    model=names,
    temperature=st.none() | st.floats(0, 2, **finite),
    top_p=st.none() | st.floats(0, 1, exclude_min=True, **finite),
    fallbacks=st.lists(names, max_size=3).map(tuple),
)
limits = st.builds(
    Limits,
    max_turns=st.integers(1, 1000),
    stream_idle_seconds=st.floats(0, 3600, **finite),
    deadline_seconds=st.floats(1, 86_400, **finite),
)
http_tools = st.builds(
    HttpTool,
    name=tool_names.map(lambda n: "h" + n),
    description=st.text(min_size=1, max_size=20),
    url=st.just("https://api.example.com/{id}"),
    timeout_seconds=st.floats(0.001, 600, **finite),
    input_schema=st.dictionaries(names, st.integers() | texts | st.booleans(), max_size=3),
)


@st.composite
def agent_specs(draw: st.DrawFn) -> AgentSpec:
    code = [CodeTool(name=n) for n in draw(st.lists(tool_names, unique=True, max_size=3))]
    code_names = {t.name for t in code}
    extra = [
        t
        for t in draw(st.lists(http_tools, max_size=2, unique_by=lambda t: t.name))
        if t.name not in code_names
    ]
    skill_names = draw(st.lists(names, unique=True, max_size=3))
    return AgentSpec(
        name=draw(names),
        description=draw(texts),
        instructions=draw(texts),
        model=draw(model_refs),
        tools=tuple(code + extra),
        skills=tuple(
            Skill(name=n, description="d" + draw(texts), body="b" + draw(texts))
            for n in skill_names
        ),
        limits=draw(limits),
        tasks_enabled=draw(st.booleans()),
    )


@st.composite
def workflow_specs(draw: st.DrawFn) -> WorkflowSpec:
    count = draw(st.integers(1, 4))
    steps: list[Any] = []
    for index in range(count):
        name = f"s{index}"
        choice = draw(st.sampled_from(["map", "loop", "sleep", "set", "parallel", "tool"]))
        if choice == "map":
            steps.append(
                MapStep(name=name, output={"v": LiteralValue(value=draw(st.integers() | texts))})
            )
        elif choice == "loop":
            rule = Condition(path="state.x", op="eq", value=draw(st.integers()))
            body = SleepStep(name=name + "_b", seconds=draw(st.floats(0, 10, **finite)))
            steps.append(
                LoopStep(name=name, body=body, **{draw(st.sampled_from(["until", "while_"])): rule})
            )
        elif choice == "sleep":
            steps.append(SleepStep(name=name, until=ValuePath(path="input.wake")))
        elif choice == "set":
            steps.append(SetStateStep(name=name, values={"k": ValuePath(path="steps.s0.output")}))
        elif choice == "tool":
            steps.append(ToolStep(name=name, tool="t", arguments={"a": draw(texts)}))
        else:
            steps.append(
                ParallelStep(name=name, branches=(SleepStep(name=name + "_p", seconds=1),))
            )
    return WorkflowSpec(
        name=draw(names),
        steps=tuple(steps),
        tools=(CodeTool(name="t"),),
        initial_state=draw(st.dictionaries(names, st.integers() | texts, max_size=3)),
        limits=draw(limits),
    )


specs = agent_specs() | workflow_specs()


def shuffled(data: st.DataObject, value: Any) -> Any:
    if isinstance(value, dict):
        keys = data.draw(st.permutations(list(value)))
        return {key: shuffled(data, value[key]) for key in keys}
    if isinstance(value, list):
        return [shuffled(data, item) for item in value]
    return value


@settings(max_examples=60, deadline=None)
@given(spec=specs, data=st.data())
def test_hash_stable_under_input_key_order(
    spec: AgentSpec | WorkflowSpec, data: st.DataObject
) -> None:
    plain = spec.model_dump(mode="json")
    rebuilt = SPEC_ADAPTER.validate_python(shuffled(data, plain))
    assert spec_hash(rebuilt) == spec_hash(spec)


@settings(max_examples=60, deadline=None)
@given(spec=agent_specs(), data=st.data())
def test_hash_stable_under_tool_and_skill_order(spec: AgentSpec, data: st.DataObject) -> None:
    plain = spec.model_dump(mode="json")
    plain["tools"] = data.draw(st.permutations(plain["tools"]))
    plain["skills"] = data.draw(st.permutations(plain["skills"]))
    assert spec_hash(AgentSpec.model_validate(plain)) == spec_hash(spec)


@given(
    temperature=st.integers(0, 2),
    idle=st.integers(0, 3600),
    timeout=st.integers(1, 600),
    deadline=st.integers(1, 86_400),
)
def test_ints_and_floats_in_float_fields_hash_alike(
    temperature: int, idle: int, timeout: int, deadline: int
) -> None:
    def build(number: type) -> AgentSpec:
        return AgentSpec.model_validate(
            {
                "name": "n",
                "model": {"model": "m", "temperature": number(temperature)},
                "limits": {
                    "stream_idle_seconds": number(idle),
                    "deadline_seconds": number(deadline),
                },
                "tools": [
                    {
                        "kind": "http",
                        "name": "h",
                        "description": "d",
                        "url": "https://x.example",
                        "timeout_seconds": number(timeout),
                    }
                ],
            }
        )

    assert spec_hash(build(int)) == spec_hash(build(float))


@settings(max_examples=60, deadline=None)
@given(
    spec=specs,
    published_at=st.datetimes(
        min_value=datetime(1990, 1, 1),
        max_value=datetime(2200, 1, 1),
        timezones=st.sampled_from(
            [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))]
        ),
    ),
)
def test_export_import_round_trip(spec: AgentSpec | WorkflowSpec, published_at: datetime) -> None:
    version = Version.of(spec, published_at)
    restored = Version.import_json(version.export_json())
    assert restored == version
    assert restored.verify()
    assert restored.published_at == published_at
