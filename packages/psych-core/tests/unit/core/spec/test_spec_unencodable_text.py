"""A Spec string with no UTF-8 encoding is a validation issue with its path, not a crash."""

import pytest

import psych_runtime
from psych_runtime import SpecValidationError


def _agent(**fields: object) -> psych_runtime.AgentSpec:
    return psych_runtime.AgentSpec(
        name="a", model=psych_runtime.ModelRef(model="fake-standard"), **fields
    )


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        (lambda: _agent(instructions="hello \ud800"), "instructions"),
        (
            lambda: {
                "kind": "agent",
                "name": "a",
                "instructions": "fine",
                "description": "bad \udfff",
                "model": {"model": "fake-standard"},
            },
            "description",
        ),
    ],
)
async def test_a_lone_surrogate_in_a_spec_is_reported_with_its_path(
    spec: object, path: str
) -> None:
    built = spec()  # type: ignore[operator]
    with pytest.raises(SpecValidationError) as caught:
        psych_runtime.validate(built)
    assert [issue.path for issue in caught.value.issues] == [path]
    assert "surrogate" in caught.value.issues[0].message
    with pytest.raises(SpecValidationError):
        await psych_runtime.publish(psych_runtime.InMemoryStore(), built)
