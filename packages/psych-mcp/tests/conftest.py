"""Fixtures shared by the package's tests: a stub MCP server and a policy that reaches it."""

from collections.abc import AsyncIterator

import pytest

from psych_mcp import McpStubServer
from psych_runtime import EgressPolicy

LOOPBACK = EgressPolicy(allow_hosts=frozenset({"127.0.0.1"}))
"""The default policy refuses loopback addresses; the stub listens on one."""


@pytest.fixture
def loopback() -> EgressPolicy:
    return LOOPBACK


@pytest.fixture
async def stub() -> AsyncIterator[McpStubServer]:
    async with McpStubServer() as server:
        yield server
