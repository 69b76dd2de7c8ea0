"""A2A failures a caller should retry, and a stream cut the caller should ride out.

The peer is the A2A SDK's own server (``tests/peer.py``) and the cut is real: a TCP
proxy on 127.0.0.1 (``tests/proxy.py``) drops the task's event stream after its first
event while the peer carries on. The peer completes only once the cut has happened,
so the order is forced, not hoped for.
"""

import asyncio
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from psych_a2a import A2ATools
from psych_mcp import McpStubServer
from psych_mcp import McpTools
from psych_runtime.adapters import SourceCallFailed
from psych_runtime.adapters import SourceTool
from psych_runtime.spec import A2APeer
from psych_runtime.spec import AgentSpec
from psych_runtime.spec import McpServer

from ..conftest import LOOPBACK
from ..peer import Seen
from ..peer import loopback_socket
from ..peer import peer_app
from ..peer import peer_card
from ..peer import serving
from ..proxy import CuttingProxy
from .test_outbound import ACME
from .test_outbound import _call
from .test_outbound import _context
from .test_outbound import _spec


@asynccontextmanager
async def _behind_a_proxy(
    *, die_on_cut: bool = False, streaming: bool = True
) -> AsyncIterator[tuple[str, Seen, CuttingProxy]]:
    """The test peer, reached only through a cutting proxy; yields the proxy's URL."""
    seen, sock = Seen(), loopback_socket()
    proxy = CuttingProxy(sock.getsockname()[1], on_cut=seen.release.set, die_on_cut=die_on_cut)
    async with proxy.running():
        base = f"http://127.0.0.1:{proxy.port}"
        app = peer_app(base, seen, card=peer_card(base, streaming=streaming))
        async with serving(app, sock):
            yield base, seen, proxy


async def _echo(tools: A2ATools, spec: AgentSpec) -> SourceTool:
    offered = await tools.resolve(spec, ACME, permitted=None)
    return next(tool for tool in offered.tools if tool.name == "echo__echo")


type Send = Callable[[str], Awaitable[Any]]
"""Calls the peer's ``echo`` skill with a message; the tool result."""


@asynccontextmanager
async def _echo_behind_a_proxy(
    *, die_on_cut: bool = False, streaming: bool = True
) -> AsyncIterator[tuple[Send, Seen, CuttingProxy]]:
    """``_behind_a_proxy``, with a source that polls every 50 ms, its ``echo`` tool resolved."""
    async with (
        _behind_a_proxy(die_on_cut=die_on_cut, streaming=streaming) as (base, seen, proxy),
        A2ATools(egress=LOOPBACK, poll_seconds=0.05) as tools,
    ):
        spec = _spec(A2APeer(name="echo", url=base))
        echo = await _echo(tools, spec)

        async def send(message: str) -> Any:
            return await _call(tools, spec, echo, message=message)

        yield send, seen, proxy


async def test_a_cut_stream_is_followed_until_the_task_completes() -> None:
    async with _echo_behind_a_proxy() as (send, seen, proxy):
        result = await send("wait for the end")
        assert proxy.cut.is_set() and seen.completed.is_set()
    assert (result["state"], result["text"]) == ("completed", "for the end")
    assert seen.texts == ["wait for the end"]  # followed, never sent twice


async def test_a_peer_that_dies_mid_stream_is_a_transient_unreachable() -> None:
    async with _echo_behind_a_proxy(die_on_cut=True) as (send, _, proxy):
        with pytest.raises(SourceCallFailed) as failed:
            await send("wait forever")
        assert proxy.cut.is_set()
    assert (failed.value.kind, failed.value.transient) == ("unreachable", True)


async def test_a_dead_peer_and_a_dead_mcp_server_fail_the_same_way() -> None:
    async with _behind_a_proxy() as (base, _, _proxy):
        spec = _spec(A2APeer(name="echo", url=base))
        a2a = A2ATools(egress=LOOPBACK)
        echo = await _echo(a2a, spec)  # the card is read while the peer lives
    # The peer and its proxy are gone; the card is still fresh in the pool.
    with pytest.raises(SourceCallFailed) as peer_failed:
        await _call(a2a, spec, echo, message="echo anyone?")
    await a2a.close()

    async with McpStubServer() as stub, McpTools(egress=LOOPBACK) as mcp:
        stub.tool("find", "found")
        mcp_spec = AgentSpec(
            name="ops", model="fake", mcp_servers=(McpServer(name="crm", url=stub.url),)
        )
        [find] = (await mcp.resolve(mcp_spec, ACME, permitted=None)).tools
        await stub.stop()
        with pytest.raises(SourceCallFailed) as server_failed:
            await mcp.call(mcp_spec, find, {}, _context(), permitted=None)
    assert (peer_failed.value.kind, peer_failed.value.transient) == ("unreachable", True)
    assert (server_failed.value.kind, server_failed.value.transient) == ("unreachable", True)


async def test_a_peer_that_does_not_stream_is_polled_through_the_proxy_untouched() -> None:
    async with _echo_behind_a_proxy(streaming=False) as (send, seen, proxy):
        calling = asyncio.create_task(send("wait politely"))
        async with asyncio.timeout(10):
            while not seen.texts:  # the send arrived; the peer waits for its release
                await asyncio.sleep(0.01)
        seen.release.set()
        result = await calling
    assert not proxy.cut.is_set()
    assert (result["state"], result["text"]) == ("completed", "politely")
