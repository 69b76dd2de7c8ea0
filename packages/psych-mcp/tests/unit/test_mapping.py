"""MCP hints onto the runtime's tool classes, and call results onto JSON."""

import mcp_types as types
import pytest

from psych_mcp._mapping import error_text
from psych_mcp._mapping import result_json
from psych_mcp._mapping import tool_definition
from psych_mcp._mapping import tool_hints
from psych_runtime.tools.approval import ToolClass
from psych_runtime.tools.approval import classify


@pytest.mark.parametrize(
    ("hints", "annotations", "retry"),
    [
        (None, {"destructive"}, False),  # nothing said: MCP's defaults, destructive
        ({}, {"destructive"}, False),
        ({"readOnlyHint": True}, {"read-only"}, False),
        ({"readOnlyHint": True, "destructiveHint": True}, {"read-only"}, False),
        ({"destructiveHint": False}, {"write"}, False),
        ({"readOnlyHint": False, "destructiveHint": False}, {"write"}, False),
        ({"idempotentHint": True}, {"destructive", "idempotent"}, True),
        ({"destructiveHint": False, "idempotentHint": True}, {"write", "idempotent"}, True),
        ({"readOnlyHint": True, "idempotentHint": True}, {"read-only", "idempotent"}, True),
        ({"openWorldHint": False}, {"destructive"}, False),
        ({"title": "Find"}, {"destructive"}, False),
    ],
)
def test_missing_hints_take_mcps_defaults(
    hints: dict[str, object] | None, annotations: set[str], retry: bool
) -> None:
    parsed = None if hints is None else types.ToolAnnotations.model_validate(hints)
    mapped = tool_hints(parsed)
    assert mapped.annotations == frozenset(annotations)
    assert mapped.safe_to_retry is retry


def test_the_approval_rules_classify_the_mapped_annotations() -> None:
    def cls(hints: dict[str, object]) -> ToolClass:
        return classify(tool_hints(types.ToolAnnotations.model_validate(hints)).annotations)

    assert cls({}) is ToolClass.DESTRUCTIVE
    assert cls({"destructiveHint": False}) is ToolClass.WRITE
    assert cls({"readOnlyHint": True}) is ToolClass.READ_ONLY


def test_a_definition_carries_the_qualified_name_schema_and_annotations() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    tool = types.Tool(name="find", description="Find a contact.", input_schema=schema)
    hints = tool_hints(None)
    definition = tool_definition("crm__find", tool, hints)
    assert definition.name == "crm__find"
    assert definition.description == "Find a contact."
    assert definition.input_schema == schema
    assert definition.annotations == frozenset({"destructive"})
    untitled = tool_definition("crm__x", types.Tool(name="x", title="X", input_schema={}), hints)
    assert untitled.description == "X"
    assert untitled.input_schema == {"type": "object"}


def test_text_blocks_are_joined_and_structured_content_kept() -> None:
    result = types.CallToolResult(
        content=[types.TextContent(text="one"), types.TextContent(text="two")],
        structured_content={"count": 2},
    )
    assert result_json(result) == {"text": "one\n\ntwo", "structured": {"count": 2}}


def test_every_other_block_is_kept_in_order() -> None:
    result = types.CallToolResult(
        content=[
            types.ImageContent(data="aGk=", mime_type="image/png"),
            types.TextContent(text="caption"),
            types.AudioContent(data="AAA=", mime_type="audio/wav"),
            types.EmbeddedResource(
                resource=types.TextResourceContents(
                    uri="file:///a.txt", mime_type="text/plain", text="body"
                )
            ),
            types.EmbeddedResource(
                resource=types.BlobResourceContents(uri="file:///b.bin", blob="AQID")
            ),
            types.ResourceLink(
                uri="https://crm.example.com/c/1", name="contact 1", description="Ada"
            ),
        ]
    )
    assert result_json(result) == {
        "text": "caption",
        "content": [
            {"type": "image", "mime_type": "image/png", "data": "aGk="},
            {"type": "audio", "mime_type": "audio/wav", "data": "AAA="},
            {"type": "resource", "uri": "file:///a.txt", "mime_type": "text/plain", "text": "body"},
            {"type": "resource", "uri": "file:///b.bin", "blob": "AQID"},
            {
                "type": "resource_link",
                "uri": "https://crm.example.com/c/1",
                "name": "contact 1",
                "description": "Ada",
            },
        ],
    }


def test_an_empty_result_is_still_an_object() -> None:
    assert result_json(types.CallToolResult(content=[])) == {"text": ""}
    assert result_json(types.CallToolResult(content=[], structured_content=[1, 2])) == {
        "structured": [1, 2]
    }


def test_a_large_result_is_not_cut() -> None:
    text = "x" * 2_000_000
    assert result_json(types.CallToolResult(content=[types.TextContent(text=text)])) == {
        "text": text
    }


def test_an_error_result_speaks_for_itself_or_says_it_did_not() -> None:
    said = types.CallToolResult(content=[types.TextContent(text="no such contact")], is_error=True)
    assert error_text(said) == "no such contact"
    assert "without saying why" in error_text(types.CallToolResult(content=[], is_error=True))
