"""Plain names where a Spec expects a ModelRef or a code tool, hashed like the long form.

The shorthand exists only at the door: what is stored, dumped and hashed is always the
spelled-out model, so a Spec written either way is the same Version.
"""

from datetime import UTC
from datetime import datetime
from typing import Any

import pytest

from psych_runtime.core.spec import SPEC_ADAPTER
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.spec import CodeTool
from psych_runtime.core.spec import HttpTool
from psych_runtime.core.spec import LiteralValue
from psych_runtime.core.spec import MapStep
from psych_runtime.core.spec import ModelRef
from psych_runtime.core.spec import WorkflowSpec
from psych_runtime.core.spec.agent import AgentSettings
from psych_runtime.core.spec.models import ModelSettings
from psych_runtime.core.validation import SpecValidationError
from psych_runtime.core.validation import validate
from psych_runtime.core.version import Version

WHEN = datetime(2025, 1, 1, tzinfo=UTC)
HTTP = HttpTool(name="weather", description="d", url="https://weather.example.com")


def hash_of(spec: AgentSpec | WorkflowSpec) -> str:
    return Version.of(spec, WHEN).hash


def test_a_model_name_is_a_model_ref() -> None:
    short = AgentSpec(name="courier", model="gpt-4o-mini")
    long = AgentSpec(name="courier", model=ModelRef(model="gpt-4o-mini"))
    assert short == long
    assert isinstance(short.model, ModelRef)
    assert hash_of(short) == hash_of(long)


def test_model_ref_takes_the_model_id_positionally() -> None:
    assert ModelRef("gpt-4o-mini") == ModelRef(model="gpt-4o-mini")
    tuned = ModelRef("gpt-4o-mini", temperature=0.2, fallbacks=("gpt-4o",))
    assert tuned == ModelRef(model="gpt-4o-mini", temperature=0.2, fallbacks=("gpt-4o",))
    with pytest.raises(TypeError, match="once"):
        ModelRef("gpt-4o-mini", model="gpt-4o")


def test_tool_names_are_code_tools() -> None:
    short = AgentSpec(name="courier", model="m", tools=("track_parcel", HTTP, "refund"))
    long = AgentSpec(
        name="courier",
        model=ModelRef(model="m"),
        tools=(CodeTool(name="refund"), CodeTool(name="track_parcel"), HTTP),
    )
    assert short == long
    assert hash_of(short) == hash_of(long)


def test_a_dict_with_plain_names_hashes_like_the_long_form() -> None:
    data: dict[str, Any] = {
        "kind": "agent",
        "name": "courier",
        "model": "gpt-4o-mini",
        "tools": ["track_parcel"],
    }
    long = AgentSpec(
        name="courier",
        model=ModelRef(model="gpt-4o-mini"),
        tools=(CodeTool(name="track_parcel"),),
    )
    loaded = SPEC_ADAPTER.validate_python(data)
    assert loaded == long
    assert hash_of(loaded) == hash_of(long)
    assert validate(data) == long
    # What is stored is always the long form.
    dumped = loaded.model_dump(mode="json")
    assert dumped["model"]["model"] == "gpt-4o-mini"
    assert dumped["tools"] == [{"kind": "code", "name": "track_parcel", "interruptible": True}]


def test_workflow_tools_take_plain_names_too() -> None:
    step = MapStep(name="m", output={"x": LiteralValue(value=1)})
    short = WorkflowSpec.model_validate({"name": "w", "steps": [step], "tools": ["lookup"]})
    long = WorkflowSpec(name="w", steps=(step,), tools=(CodeTool(name="lookup"),))
    assert hash_of(short) == hash_of(long)


def test_a_bad_plain_name_is_refused_where_it_was_written() -> None:
    with pytest.raises(SpecValidationError) as excinfo:
        validate({"kind": "agent", "name": "a", "model": "", "tools": ["ok", "remember"]})
    found = {issue.path: issue.message for issue in excinfo.value.issues}
    assert set(found) == {"model", "tools.1"}
    assert "built-in" in found["tools.1"]


def test_the_typed_keywords_match_the_model_fields() -> None:
    # The keyword signatures are written out for type checkers; they must not drift
    # from the fields pydantic validates.
    assert set(ModelSettings.__annotations__) == set(ModelRef.model_fields)
    assert set(AgentSettings.__annotations__) == set(AgentSpec.model_fields)
