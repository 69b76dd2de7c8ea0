"""Fixtures: a live authorization server and resource, a shared clock, HTTP clients."""

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import httpx2
import pytest

from .authserver import FakeClock, RecordingFactory, Served, World


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def world(clock: FakeClock) -> Iterator[World]:
    world = World(clock)
    authorization = Served(world.as_app())
    resource = Served(world.resource_app())
    world.issuer = authorization.origin
    world.resource_origin = resource.origin
    authorization.start()
    resource.start()
    try:
        yield world
    finally:
        # Both shut down at once: each waits for uvicorn's polling interval.
        resource.request_stop()
        authorization.request_stop()
        resource.join()
        authorization.join()


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
