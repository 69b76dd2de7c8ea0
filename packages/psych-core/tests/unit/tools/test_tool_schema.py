"""Input schemas and descriptions generated at registration."""

from typing import Annotated
from typing import Literal
from typing import Optional

import pytest
from pydantic import BaseModel
from pydantic import Field
from pydantic import JsonValue

from psych_runtime.tools import ToolContext
from psych_runtime.tools import ToolRegistry
from psych_runtime.tools import ToolSchemaError


class Address(BaseModel):
    street: str
    city: str = "Paris"


def _titles(node: JsonValue, path: str = "") -> list[str]:
    """Every place where ``title`` is used as a schema keyword (a string value)."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "title" and isinstance(value, str):
                found.append(path)
            found.extend(_titles(value, f"{path}/{key}"))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            found.extend(_titles(item, f"{path}/{index}"))
    return found


def test_scalar_parameters_map_to_json_types() -> None:
    registry = ToolRegistry()

    async def scalars(a: str, b: int, c: float, d: bool) -> None:
        """Take one of each scalar."""

    schema = registry.register(scalars).input_schema
    props = schema["properties"]
    assert isinstance(props, dict)
    assert props["a"] == {"type": "string"}
    assert props["b"] == {"type": "integer"}
    assert props["c"] == {"type": "number"}
    assert props["d"] == {"type": "boolean"}
    assert schema["type"] == "object"
    required = schema["required"]
    assert isinstance(required, list)
    assert sorted(str(name) for name in required) == ["a", "b", "c", "d"]


def test_containers_optional_and_literal() -> None:
    registry = ToolRegistry()

    async def shapes(
        tags: list[str],
        counts: dict[str, int],
        note: Optional[str] = None,  # noqa: UP045 - the old spelling must work too
        size: Literal["s", "m", "l"] = "m",
        maybe: int | None = None,
    ) -> None:
        """Take containers."""

    schema = registry.register(shapes).input_schema
    props = schema["properties"]
    assert isinstance(props, dict)
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["counts"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    note = props["note"]
    assert isinstance(note, dict)
    assert {"type": "string"} in note["anyOf"]  # type: ignore[operator]
    assert {"type": "null"} in note["anyOf"]  # type: ignore[operator]
    assert note["default"] is None
    size = props["size"]
    assert isinstance(size, dict)
    assert size["enum"] == ["s", "m", "l"]
    assert size["default"] == "m"
    assert schema["required"] == ["tags", "counts"]


def test_defaults_are_not_required_and_appear_in_the_schema() -> None:
    registry = ToolRegistry()

    async def paged(query: str, limit: int = 20, exact: bool = False) -> None:
        """Search."""

    schema = registry.register(paged).input_schema
    assert schema["required"] == ["query"]
    props = schema["properties"]
    assert isinstance(props, dict)
    assert props["limit"] == {"type": "integer", "default": 20}
    assert props["exact"] == {"type": "boolean", "default": False}


def test_pydantic_model_parameter_is_referenced_from_defs() -> None:
    registry = ToolRegistry()

    async def ship(address: Address) -> None:
        """Ship somewhere."""

    schema = registry.register(ship).input_schema
    props = schema["properties"]
    assert isinstance(props, dict)
    ref = props["address"]
    assert isinstance(ref, dict)
    assert ref["$ref"] == "#/$defs/Address"
    defs = schema["$defs"]
    assert isinstance(defs, dict)
    address = defs["Address"]
    assert isinstance(address, dict)
    assert address["required"] == ["street"]
    assert set(address["properties"]) == {"street", "city"}  # type: ignore[arg-type]


def test_titles_are_stripped_but_a_property_called_title_survives() -> None:
    registry = ToolRegistry()

    async def post(title: str, address: Address, labels: list[str] | None = None) -> None:
        """Post something."""

    schema = registry.register(post).input_schema
    assert _titles(schema) == []
    props = schema["properties"]
    assert isinstance(props, dict)
    assert props["title"] == {"type": "string"}


def test_extra_arguments_are_forbidden_in_the_schema() -> None:
    registry = ToolRegistry()

    async def nothing() -> None:
        """Take nothing."""

    schema = registry.register(nothing).input_schema
    assert schema["additionalProperties"] is False
    assert schema["properties"] == {}
    assert "required" not in schema


def test_parameter_names_that_clash_with_pydantic_still_work() -> None:
    registry = ToolRegistry()

    async def odd(json: str, schema: int, model_config: bool, _private: str = "x") -> None:
        """Parameters with awkward names."""

    generated = registry.register(odd).input_schema
    props = generated["properties"]
    assert isinstance(props, dict)
    assert set(props) == {"json", "schema", "model_config", "_private"}


def test_description_is_the_docstring_without_its_args_section() -> None:
    registry = ToolRegistry()

    async def refund(order_id: str, amount: float) -> None:
        """Refund an order.

        Only after the customer confirmed.

        Args:
            order_id: the order to refund.
            amount (float): how much to give back,
                in the order's currency.

        Returns:
            Nothing.
        """

    tool = registry.register(refund)
    assert tool.description.startswith("Refund an order.\n\nOnly after the customer confirmed.")
    assert "Args:" not in tool.description
    assert "order_id:" not in tool.description
    assert "Returns:" in tool.description
    props = tool.input_schema["properties"]
    assert isinstance(props, dict)
    assert props["order_id"] == {"type": "string", "description": "the order to refund."}
    amount = props["amount"]
    assert isinstance(amount, dict)
    assert amount["description"] == "how much to give back, in the order's currency."


def test_single_line_docstring_is_the_whole_description() -> None:
    registry = ToolRegistry()

    async def ping() -> str:
        """Check the service is up."""
        return "pong"

    assert registry.register(ping).description == "Check the service is up."


def test_annotated_field_description_wins_over_the_docstring() -> None:
    registry = ToolRegistry()

    async def pick(
        n: Annotated[int, Field(ge=1, le=5, description="from the hint")],
        m: int,
    ) -> None:
        """Pick.

        Args:
            n: from the docstring.
            m: from the docstring too.
        """

    props = registry.register(pick).input_schema["properties"]
    assert isinstance(props, dict)
    assert props["n"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 5,
        "description": "from the hint",
    }
    assert props["m"] == {"type": "integer", "description": "from the docstring too."}


def test_explicit_description_replaces_the_docstring() -> None:
    registry = ToolRegistry()

    async def documented(x: int) -> None:
        """Docstring text."""

    async def undocumented(x: int) -> None:
        pass

    assert registry.register(documented, description="Given.").description == "Given."
    assert registry.register(undocumented, description="Also given.").description == ("Also given.")


def test_tool_context_parameter_is_hidden_from_the_schema() -> None:
    registry = ToolRegistry()

    async def charge(amount: int, ctx: ToolContext) -> None:
        """Charge.

        Args:
            amount: cents.
            ctx: never shown to the model.
        """

    async def optional(amount: int, ctx: ToolContext | None = None) -> None:
        """Charge, context optional."""

    for function in (charge, optional):
        tool = registry.register(function)
        assert set(tool.input_schema["properties"]) == {"amount"}  # type: ignore[arg-type]
        assert tool.input_schema["required"] == ["amount"]
        assert "ctx" not in str(tool.input_schema)
        assert tool.wants_context


def test_a_tool_without_context_does_not_want_it() -> None:
    async def plain(amount: int) -> None:
        """Plain."""

    assert not ToolRegistry().register(plain).wants_context


def test_asking_for_the_context_twice_is_refused() -> None:
    async def greedy(first: ToolContext, second: ToolContext) -> None:
        """Greedy."""

    with pytest.raises(ToolSchemaError, match="ask for it once"):
        ToolRegistry().register(greedy)


@pytest.mark.parametrize(
    ("annotation", "expected_type"),
    [(str, "string"), (int, "integer"), (float, "number"), (bool, "boolean")],
)
def test_definition_carries_name_description_schema_and_annotations(
    annotation: type, expected_type: str
) -> None:
    registry = ToolRegistry()

    async def probe(value: annotation) -> None:  # type: ignore[valid-type]
        """Probe a value."""

    tool = registry.register(probe, annotations=("read-only",))
    definition = tool.definition()
    assert definition.name == "probe"
    assert definition.description == "Probe a value."
    assert definition.input_schema == tool.input_schema
    assert definition.input_schema["properties"] == {"value": {"type": expected_type}}
    assert definition.annotations == frozenset({"read-only"})
