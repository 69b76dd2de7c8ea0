"""ModelsByName: one scripted model per model id, for Runs whose agents differ in model.

A parent and its subagents may run at the same time on different Workers, so one
script shared by all of them would be consumed in whatever order they happen to call.
Giving each agent its own model id and each id its own ``FakeModel`` keeps every
script in order however the calls interleave.

Example:
    >>> from psych_runtime.testing import FakeModel, ModelsByName
    >>> model = ModelsByName(
    ...     {"lead": FakeModel().turn(text="done"), "helper": FakeModel().turn(text="ok")}
    ... )
"""

from collections.abc import AsyncIterator
from collections.abc import Mapping

from psych_runtime.model.port import ModelClient
from psych_runtime.model.port import ModelError
from psych_runtime.model.port import ModelRequest
from psych_runtime.model.port import StreamEvent
from psych_runtime.telemetry.providers import provider_of
from psych_runtime.telemetry.schema import OTHER_PROVIDER


class ModelsByName:
    """A ModelClient that hands each request to the client registered for its model id.

    Args:
        routes: model id to the client that answers requests for it.

    Raises:
        ValueError: ``routes`` is empty.
    """

    def __init__(self, routes: Mapping[str, ModelClient]) -> None:
        if not routes:
            raise ValueError("ModelsByName needs at least one model id")
        self.routes = dict(routes)

    async def known_models(self) -> frozenset[str]:
        """Every routed model id."""
        return frozenset(self.routes)

    def provider_for(self, model: str) -> str:
        """``gen_ai.provider.name`` of the client routed for ``model``."""
        client = self.routes.get(model)
        return provider_of(client, model) if client is not None else OTHER_PROVIDER

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The routed client's stream; an unrouted id fails the call (not retried)."""
        client = self.routes.get(request.model)
        if client is None:
            return _refuse(request.model, sorted(self.routes))
        return client.stream(request)


async def _refuse(model: str, known: list[str]) -> AsyncIterator[StreamEvent]:
    nothing: tuple[StreamEvent, ...] = ()
    for event in nothing:  # an async generator that fails on its first step
        yield event
    raise ModelError(f"no scripted model for {model!r}; routed: {', '.join(known)}")


__all__ = ["ModelsByName"]
