"""``McpStubServer`` is a real MCP server: the SDK's own client can use it."""

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from psych_mcp import McpStubServer
from psych_mcp import StubCall


async def test_a_client_lists_and_calls_what_the_test_scripted() -> None:
    async with McpStubServer() as server:
        server.tool("add", lambda arguments: arguments["a"] + arguments["b"], description="Adds.")

        async def shout(arguments: dict[str, str]) -> str:
            return arguments["text"].upper()

        server.tool("shout", shout, annotations=types.ToolAnnotations(read_only_hint=True))
        async with Client(server.url) as client:
            listed = (await client.list_tools()).tools
            assert [(tool.name, tool.description) for tool in listed] == [
                ("add", "Adds."),
                ("shout", None),
            ]
            assert listed[1].annotations is not None and listed[1].annotations.read_only_hint
            added = await client.call_tool("add", {"a": 2, "b": 3})
            shouted = await client.call_tool("shout", {"text": "hi"})
        assert added.content[0].text == "5"  # type: ignore[union-attr]
        assert shouted.content[0].text == "HI"  # type: ignore[union-attr]
        assert server.calls == (
            StubCall("add", {"a": 2, "b": 3}, None),
            StubCall("shout", {"text": "hi"}, None),
        )
        assert server.calls_to("shout") == (server.calls[1],)
        assert server.listings >= 1


async def test_tools_change_while_it_runs() -> None:
    async with McpStubServer() as server, Client(server.url, cache=None) as client:
        assert (await client.list_tools()).tools == []
        server.tool("late", {"answer": 42})
        assert [tool.name for tool in (await client.list_tools()).tools] == ["late"]
        result = await client.call_tool("late", {})
        assert result.structured_content == {"answer": 42}
        server.remove_tool("late")
        server.remove_tool("never-there")
        assert (await client.list_tools()).tools == []
        gone = await client.call_tool("late", {})
        assert gone.is_error


async def test_a_token_is_required_when_asked_for() -> None:
    async with McpStubServer(require_token="s3cret") as server:
        server.tool("ping", "pong")
        async with httpx2.AsyncClient() as http:
            assert (await http.post(server.url, json={})).status_code == 401
            wrong = {"Authorization": "Bearer nope"}
            assert (await http.post(server.url, json={}, headers=wrong)).status_code == 401
        headers = {"Authorization": "Bearer s3cret"}
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            Client(streamable_http_client(server.url, http_client=http), cache=None) as client,
        ):
            assert (await client.call_tool("ping", {})).content[0].text == "pong"  # type: ignore[union-attr]
        assert server.calls == (StubCall("ping", {}, "Bearer s3cret"),)


async def test_the_legacy_sse_transport_serves_too() -> None:
    async with McpStubServer(transport="sse") as server:
        assert server.url.endswith("/sse")
        server.tool("ping", "pong")
        async with Client(sse_client(server.url, headers={"Authorization": "Bearer x"})) as client:
            assert [tool.name for tool in (await client.list_tools()).tools] == ["ping"]
            assert not (await client.call_tool("ping", {})).is_error
        assert server.calls == (StubCall("ping", {}, "Bearer x"),)


async def test_it_has_no_url_before_it_starts_and_cannot_start_twice() -> None:
    server = McpStubServer()
    with pytest.raises(RuntimeError, match="port"):
        _ = server.url
    async with server:
        with pytest.raises(RuntimeError, match="already running"):
            await server.start()
        port = server.url
        await server.stop()
        assert not server.running
        await server.start()
        assert server.url == port
    await server.stop()  # stopping twice is harmless
