"""Registration: names, refusals, decorator forms and lookups."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import Field

from psych_runtime.core.messages import ToolDefinition
from psych_runtime.tools import ToolRegistry
from psych_runtime.tools import ToolSchemaError
from psych_runtime.tools import UnknownTool

# Written out from the product description (in a data file beside this test) rather
# than imported, so a name dropped from the implementation's list makes this test fail.
RESERVED: list[str] = json.loads(Path(__file__).with_name("reserved_tool_names.json").read_text())


async def lookup(order_id: str) -> dict[str, str]:
    """Look an order up."""
    return {"order_id": order_id}


def test_name_defaults_to_the_function_name() -> None:
    registry = ToolRegistry()
    tool = registry.register(lookup)
    assert tool.name == "lookup"
    assert registry.names == frozenset({"lookup"})
    assert "lookup" in registry
    assert registry.get("lookup") is tool
    assert len(registry) == 1


def test_explicit_name_and_flags() -> None:
    registry = ToolRegistry()
    tool = registry.register(
        lookup, name="find-order", idempotent=True, annotations=["read-only", "read-only"]
    )
    assert tool.name == "find-order"
    assert tool.idempotent is True
    assert tool.annotations == frozenset({"read-only"})
    assert "lookup" not in registry
    assert registry.get("lookup") is None


def test_idempotent_defaults_to_false() -> None:
    assert ToolRegistry().register(lookup).idempotent is False


@pytest.mark.parametrize("name", ["a", "_x", "A_b-c9", "x" * 64])
def test_valid_names_are_accepted(name: str) -> None:
    assert ToolRegistry().register(lookup, name=name).name == name


@pytest.mark.parametrize("name", ["", "9lives", "-dash", "has space", "dot.ted", "é", "x" * 65])
def test_invalid_names_are_refused(name: str) -> None:
    with pytest.raises(ToolSchemaError, match="not a valid tool name"):
        ToolRegistry().register(lookup, name=name)


def test_a_lambda_needs_an_explicit_name() -> None:
    with pytest.raises(ToolSchemaError, match="name="):
        ToolRegistry().register(lambda: None)


@pytest.mark.parametrize("name", RESERVED)
def test_reserved_names_are_refused(name: str) -> None:
    registry = ToolRegistry()
    with pytest.raises(ToolSchemaError, match="built-in"):
        registry.register(lookup, name=name)
    assert name not in registry


def test_duplicate_names_are_refused_and_the_first_stays() -> None:
    registry = ToolRegistry()
    first = registry.register(lookup)

    async def other(x: int) -> int:
        """Another."""
        return x

    with pytest.raises(ToolSchemaError, match="already registered"):
        registry.register(other, name="lookup")
    assert registry.get("lookup") is first
    assert len(registry) == 1


def test_missing_parameter_hints_are_named() -> None:
    def untyped(a, b: int, c) -> None:  # type: ignore[no-untyped-def]
        """Doc."""

    with pytest.raises(ToolSchemaError) as info:
        ToolRegistry().register(untyped)
    assert "a, c" in str(info.value)
    assert "type hint" in str(info.value)
    assert info.value.tool == "untyped"


def test_missing_return_hint_is_refused() -> None:
    def no_return(a: int):  # type: ignore[no-untyped-def]
        """Doc."""

    with pytest.raises(ToolSchemaError, match="return type hint"):
        ToolRegistry().register(no_return)


def test_missing_docstring_is_refused() -> None:
    async def silent(a: int) -> int:
        return a

    with pytest.raises(ToolSchemaError, match="no docstring"):
        ToolRegistry().register(silent)


def test_every_problem_is_reported_at_once() -> None:
    def bad(a, *rest, **extra):  # type: ignore[no-untyped-def]
        pass

    with pytest.raises(ToolSchemaError) as info:
        ToolRegistry().register(bad)
    problems = info.value.problems
    assert len(problems) == 5
    text = str(info.value)
    for needle in ("docstring", "*rest", "**extra", "parameter(s) a", "return type hint"):
        assert needle in text


def test_unsupported_parameter_type_is_refused() -> None:
    class Opaque:
        pass

    async def takes(thing: Opaque) -> None:
        """Doc."""

    with pytest.raises(ToolSchemaError, match="JSON schema"):
        ToolRegistry().register(takes)


def test_unsupported_return_type_is_refused() -> None:
    class Opaque:
        pass

    async def gives() -> Opaque:
        """Doc."""
        return Opaque()

    with pytest.raises(ToolSchemaError, match="return type"):
        ToolRegistry().register(gives)


def test_pydantic_field_as_default_is_refused_with_a_fix() -> None:
    async def old_style(n: int = Field(3, ge=0)) -> None:
        """Doc."""

    with pytest.raises(ToolSchemaError, match="Annotated"):
        ToolRegistry().register(old_style)


def test_annotated_constraints_are_the_supported_spelling() -> None:
    async def new_style(n: Annotated[int, Field(ge=0)] = 3) -> None:
        """Doc."""

    props = ToolRegistry().register(new_style).input_schema["properties"]
    assert props == {"n": {"type": "integer", "minimum": 0, "default": 3}}


def test_unresolvable_hint_is_refused() -> None:
    async def forward(x: "DoesNotExist") -> None:  # type: ignore[name-defined]  # noqa: F821
        """Doc."""

    with pytest.raises(ToolSchemaError, match="signature"):
        ToolRegistry().register(forward)


def test_generators_are_refused() -> None:
    def numbers(n: int) -> Iterator[int]:
        """Doc."""
        yield n

    with pytest.raises(ToolSchemaError, match="generator"):
        ToolRegistry().register(numbers)


def test_a_refused_tool_is_not_registered() -> None:
    registry = ToolRegistry()

    async def silent(a: int) -> int:
        return a

    with pytest.raises(ToolSchemaError):
        registry.register(silent)
    assert "silent" not in registry
    assert len(registry) == 0


def test_bare_decorator_registers_and_returns_the_function() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def greet(name: str) -> str:
        """Say hello."""
        return f"hello {name}"

    assert "greet" in registry
    assert registry.get("greet") is not None
    assert registry.get("greet").function is greet  # type: ignore[union-attr]


def test_decorator_with_arguments() -> None:
    registry = ToolRegistry()

    @registry.tool(name="pay", idempotent=True, annotations=("write",), description="Pay.")
    def payment(amount: int) -> None:
        pass

    tool = registry.get("pay")
    assert tool is not None
    assert tool.function is payment
    assert tool.idempotent is True
    assert tool.annotations == frozenset({"write"})
    assert tool.description == "Pay."
    assert "payment" not in registry


def test_decorator_refuses_like_register() -> None:
    registry = ToolRegistry()
    with pytest.raises(ToolSchemaError):

        @registry.tool(name="run_code")
        async def sneaky(x: int) -> int:
            """Doc."""
            return x


def test_definitions_follow_the_order_asked_for() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def b_tool(x: int) -> int:
        """B."""
        return x

    @registry.tool
    async def a_tool(x: int) -> int:
        """A."""
        return x

    ordered = registry.definitions(["b_tool", "a_tool"])
    assert [d.name for d in ordered] == ["b_tool", "a_tool"]
    assert all(isinstance(d, ToolDefinition) for d in ordered)
    assert [d.name for d in registry.definitions()] == ["a_tool", "b_tool"]
    with pytest.raises(UnknownTool) as info:
        registry.definitions(["a_tool", "nope"])
    assert info.value.name == "nope"
    assert info.value.available == ("a_tool", "b_tool")


def test_names_track_registrations() -> None:
    registry = ToolRegistry()
    assert registry.names == frozenset()
    registry.register(lookup)
    registry.register(lookup, name="lookup_again")
    assert registry.names == frozenset({"lookup", "lookup_again"})
