"""A Run against a tool source whose tools the spec and the tenant plane both narrow.

A server ``crm`` offers ``find``, ``export`` and ``delete_all``; the spec allows only
``find`` and ``export``; the tenant plane (``OnlyFind``) permits only ``crm__find``. The
model, which calls all three anyway, must be offered ``crm__find`` alone and see the
other two refused as unknown, and only ``find`` may reach the server. Core's tests run
this against a pretend server, an adapter's against its real one::

    model = model_calling_every_crm_tool()
    log = await run(spec_allowing(ALLOWED), model, access=OnlyFind())
    check_only_find_was_offered_and_ran(log, model)
"""

from collections.abc import Sequence

from psych_runtime import Scope
from psych_runtime.records import Record
from psych_runtime.records import ToolCallFinished
from psych_runtime.testing import FakeModel

ALLOWED = ("find", "export")
"""The spec's allow list for ``crm``: ``delete_all`` is excluded by the spec itself."""


class OnlyFind:
    """A tenant plane that permits ``crm__find`` alone, whatever the spec allows."""

    async def permitted(self, scope: Scope) -> frozenset[str]:
        """Only ``crm__find``, for every tenant."""
        return frozenset({"crm__find"})


def model_calling_every_crm_tool() -> FakeModel:
    """A model that calls ``delete_all``, ``export`` and ``find`` in one turn, then ends."""
    return (
        FakeModel()
        .turn(tool_calls=[("crm__delete_all", {}), ("crm__export", {}), ("crm__find", {})])
        .turn(text="ok")
    )


def check_only_find_was_offered_and_ran(log: Sequence[Record], model: FakeModel) -> None:
    """The spec refused ``delete_all``, the plane ``export``; ``find`` ran and was all offered.

    Whether only ``find`` reached the server is the caller's to check: each test
    records the server's calls its own way.
    """
    finishes = [record for record in log if isinstance(record, ToolCallFinished)]
    kinds = [f.failure.kind if f.failure else "ok" for f in finishes]
    assert kinds == ["unknown_tool", "unknown_tool", "ok"]
    assert [tool.name for tool in model.requests[0].tools] == ["crm__find"]


__all__ = [
    "ALLOWED",
    "OnlyFind",
    "check_only_find_was_offered_and_ran",
    "model_calling_every_crm_tool",
]
