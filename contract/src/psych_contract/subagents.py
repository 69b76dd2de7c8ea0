"""A lead agent that spawns a background finder, for tests of Runs with a child Run.

The lead (model ``lead-m``) calls ``spawn_subagent`` with ``FINDER``, says something
while the finder works, and then relays the answer; the finder (model ``finder-m``)
answers at once. Core's subagent tests and an adapter's (the tracing of a child Run,
say) script the same exchange with ``lead_spawning_the_finder``.
"""

from typing import Any

from psych_runtime.testing import FakeModel
from psych_runtime.testing import ModelsByName

FINDER: dict[str, Any] = {
    "name": "finder",
    "purpose": "Find where order A1 is right now, for the customer.",
    "task": "Look order A1 up with the lookup tool and say where it is, in one line.",
    "deliverable": "One line: where A1 is.",
    "tools": ["lookup"],
    "model": "finder-m",
}
"""The ``spawn_subagent`` arguments of a finder that may use the ``lookup`` tool."""

FINDER_ANSWER = "A1 is at the depot."
"""What the finder says, its one turn."""


def lead_spawning_the_finder(
    *, relayed: str, meanwhile: str = "waiting", finder: FakeModel | None = None
) -> ModelsByName:
    """``lead-m`` spawns ``FINDER``, says ``meanwhile``, then ``relayed``.

    ``finder-m`` is ``finder`` when given (a finder that fails or asks, say), else a
    model that answers ``FINDER_ANSWER``. Copy ``FINDER`` before changing it: the dict
    is shared by every test that imports it.
    """
    return ModelsByName(
        {
            "lead-m": FakeModel()
            .turn(tool_calls=[("spawn_subagent", FINDER)])
            .turn(text=meanwhile)
            .turn(text=relayed),
            "finder-m": finder or FakeModel().turn(text=FINDER_ANSWER),
        }
    )


__all__ = ["FINDER", "FINDER_ANSWER", "lead_spawning_the_finder"]
