"""Fixtures: a live authorization server and resource, a shared clock, HTTP clients."""

from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator

import httpx2
import pytest

from psych_mcp.oauth import McpOAuthClient

from .authserver import FakeClock
from .authserver import RecordingFactory
from .authserver import World
from .authserver import running


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def world(clock: FakeClock) -> Iterator[World]:
    with running(World(clock)) as world:
        yield world


@pytest.fixture
def factory() -> RecordingFactory:
    return RecordingFactory()


@pytest.fixture
async def browser() -> AsyncIterator[Callable[[str], Awaitable[str]]]:
    """Plays the user's browser: opens an authorization URL, returns the redirect target."""
    async with httpx2.AsyncClient(timeout=10, trust_env=False) as client:

        async def open_url(url: str) -> str:
            response = await client.get(url, follow_redirects=False)
            assert response.status_code == 302, response.text
            return response.headers["location"]

        yield open_url


@pytest.fixture
def oauth(
    request: pytest.FixtureRequest, clock: FakeClock, factory: RecordingFactory
) -> McpOAuthClient:
    """The OAuth client the test's module builds with ``make(clock, factory)``."""
    make: Callable[[FakeClock, RecordingFactory], McpOAuthClient] = request.module.make
    return make(clock, factory)
