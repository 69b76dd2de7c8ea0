"""``remote.py``: asking every tool source what it offers, at the start of each turn."""

from typing import Any

from psych_runtime.core.records import TerminalState
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.remote import refresh_remote
from psych_runtime.runtime.agent.remote import resolve_remote
from psych_runtime.spec import McpServer
from psych_runtime.tools.sources import ToolSourceUnavailable

from ....e2e.test_tool_sources import ServerRoom
from .conftest import Attempt
from .conftest import agent
from .conftest import open_attempt

FILES = McpServer(name="files", url="https://files.example/mcp")
DOCS = McpServer(name="docs", url="https://docs.example/mcp", optional=True)


def _room() -> ServerRoom:
    return ServerRoom(
        {
            "files": {"read": ("read-only", "idempotent"), "wipe": ("destructive",)},
            "docs": {"search": ("read-only",)},
        }
    )


async def _with(room: ServerRoom, *servers: McpServer, **deps: Any) -> Attempt:
    deps.setdefault("sources", (room,))
    return await open_attempt(spec=agent(mcp_servers=servers), **deps)


async def test_a_spec_no_source_serves_asks_nobody() -> None:
    room = _room()
    attempt = await open_attempt(sources=(room,))
    assert await resolve_remote(attempt.ctx, None) is None
    assert room.resolved == 0 and attempt.ctx.tools.remote == {}


async def test_what_the_sources_offer_joins_the_catalog_for_this_turn() -> None:
    room = _room()
    attempt = await _with(room, FILES, DOCS)
    assert await resolve_remote(attempt.ctx, ["files__*", "docs__*"]) is None
    catalog = attempt.ctx.tools
    assert set(catalog.remote) == {"files__read", "files__wipe", "docs__search"}
    assert catalog.deferred == {}
    assert catalog.permitted == ["files__*", "docs__*"]
    assert catalog.executable("files__read") and catalog.safe_to_retry("files__read")
    assert not catalog.safe_to_retry("files__wipe")


async def test_the_sources_are_asked_afresh_every_turn() -> None:
    room = _room()
    attempt = await _with(room, FILES)
    await resolve_remote(attempt.ctx, None)
    room.catalogue["files"]["move"] = ()
    del room.catalogue["files"]["wipe"]
    await resolve_remote(attempt.ctx, None)
    assert room.resolved == 2
    assert set(attempt.ctx.tools.remote) == {"files__read", "files__move"}


async def test_an_optional_source_that_is_down_is_left_out_with_an_advisory() -> None:
    room = _room()
    room.down.add("docs")
    attempt = await _with(room, FILES, DOCS)
    assert await resolve_remote(attempt.ctx, None) is None
    assert set(attempt.ctx.tools.remote) == {"files__read", "files__wipe"}
    assert attempt.ctx.tools.remote_advisories == ("The MCP server docs is unavailable this turn.",)


async def test_a_required_source_that_is_down_fails_the_run_tool_resolution() -> None:
    room = _room()
    room.down.add("files")
    attempt = await _with(room, FILES)
    assert await resolve_remote(attempt.ctx, None) is Next.STOP
    settled = attempt.settlement()
    assert settled.state is TerminalState.FAILED and settled.failure is not None
    assert settled.failure.kind == "tool_resolution"
    assert settled.failure.transient  # a server coming back may let it succeed


async def test_a_source_down_leaves_the_catalog_as_it_was() -> None:
    room = _room()
    attempt = await _with(room, FILES)
    await refresh_remote(attempt.ctx, None)
    room.down.add("files")
    down = await refresh_remote(attempt.ctx, None)
    assert isinstance(down, ToolSourceUnavailable) and down.owner == "files"
    assert set(attempt.ctx.tools.remote) == {"files__read", "files__wipe"}
    assert attempt.new() == []  # refreshing stages nothing; the caller decides


async def test_tools_over_the_catalogue_budget_are_deferred_behind_call_tool() -> None:
    room = _room()
    attempt = await _with(room, FILES, catalogue_budget=10)
    await refresh_remote(attempt.ctx, None)
    catalog = attempt.ctx.tools
    assert set(catalog.deferred) == {"files__read", "files__wipe"}
    definitions, _ = catalog.offered(attempt.state, 3)
    names = [d.name for d in definitions]
    assert "files__read" not in names
    assert names[:3] == ["list_tools", "get_tool_info", "call_tool"]


async def test_a_server_that_asks_to_be_listed_up_front_is_never_deferred() -> None:
    room = _room()
    preloaded = FILES.model_copy(update={"preload": True})
    attempt = await _with(room, preloaded, catalogue_budget=10)
    await refresh_remote(attempt.ctx, None)
    assert attempt.ctx.tools.deferred == {}


async def test_the_first_source_to_offer_a_name_keeps_it() -> None:
    first, second = _room(), _room()
    attempt = await _with(first, FILES, sources=(first, second))
    await refresh_remote(attempt.ctx, None)
    source, _ = attempt.ctx.tools.remote["files__read"]
    assert source is first and second.resolved == 1
