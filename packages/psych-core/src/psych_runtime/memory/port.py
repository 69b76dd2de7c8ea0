"""The MemoryStore port: remember, forget, recall and erase facts per end user.

Memory here means durable facts ("prefers email", "order 1042 was refunded"), not a
Run's history (that is the log) and not retrieval over documents (bring your own tool
for that). Every fact belongs to one ``MemoryKey``: a tenant and one of that tenant's
end users, both required, so no fact can be read across tenants or across people, and
``erase`` removes everything kept about one person for good.
"""

from datetime import datetime
from typing import Annotated
from typing import Protocol
from typing import runtime_checkable

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import StringConstraints
from pydantic import field_validator

from psych_runtime.core.errors import PsychError
from psych_runtime.core.scope import Scope
from psych_runtime.core.storable import key_problem

MAX_MEMORY_CHARS = 4_096
"""The longest fact a MemoryStore keeps, in characters."""

KeyPart = Annotated[str, StringConstraints(min_length=1, max_length=256)]


class EndUserRequired(PsychError, ValueError):
    """Memory is configured but the Run names no end user to keep facts for.

    A default end user would pour every person's facts into one bucket, so there is
    none: pass ``end_user_id`` in the Run's input, or set it on the ``Runtime``.
    """


class MemoryKey(BaseModel):
    """Whose facts: one end user of one tenant. Both parts are required.

    Attributes:
        tenant: the tenant the end user belongs to.
        end_user_id: the consumer's own identifier for the person.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant: KeyPart
    end_user_id: KeyPart

    @field_validator("tenant", "end_user_id")
    @classmethod
    def _storable(cls, part: str) -> str:
        problem = key_problem(part)
        if problem is not None:
            raise ValueError(f"no store can index this key part: {problem}")
        return part

    @classmethod
    def of(cls, scope: Scope, end_user_id: str | None) -> "MemoryKey":
        """The key of ``end_user_id`` within ``scope``'s tenant; the one place keys are built.

        Raises:
            EndUserRequired: ``end_user_id`` is None or empty.
            ValueError: a part is longer than 256 characters.
        """
        if not end_user_id:
            raise EndUserRequired(
                "memory needs an end user: pass end_user_id in the Run's input "
                "(dispatch(..., input={'end_user_id': ...})) or Runtime(end_user_id=...)"
            )
        return cls(tenant=scope.tenant, end_user_id=end_user_id)


class Memory(BaseModel):
    """One fact kept for one end user.

    Attributes:
        id: the fact's id, unique within its store (``mem_...``).
        key: whose fact it is.
        content: the fact itself.
        created_at: when it was remembered; facts are recalled in this order.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    key: MemoryKey
    content: Annotated[str, Field(min_length=1, max_length=MAX_MEMORY_CHARS)]
    created_at: datetime


@runtime_checkable
class MemoryStore(Protocol):
    """Where facts about end users are kept between Runs.

    Every implementation gives the same answers to the same calls; the
    ``psych_contract.MemoryContract`` suite is the executable statement of that:

    * ``remember`` always adds a fact (the same text twice is two facts) and returns it.
    * ``recall`` returns a key's facts oldest first; with ``limit`` only the newest
      ``limit`` of them, still oldest first. Another key's facts never appear.
    * ``forget`` removes one fact of that key and says whether it did; a fact of
      another key (another person, another tenant) is left alone and gives False.
    * ``erase`` removes every fact of the key, for good, and says how many.
    * Malformed input (empty or over-long content, content holding a lone surrogate
      or NUL, a limit below 1) raises ``ValueError`` before the backend is touched.
    """

    async def remember(self, key: MemoryKey, content: str) -> Memory:
        """Keep ``content`` as a new fact of ``key`` and return it."""
        ...

    async def forget(self, key: MemoryKey, memory_id: str) -> bool:
        """Remove fact ``memory_id`` of ``key``; False when ``key`` has no such fact."""
        ...

    async def recall(self, key: MemoryKey, *, limit: int | None = None) -> tuple[Memory, ...]:
        """The facts of ``key``, oldest first (only the newest ``limit`` when given)."""
        ...

    async def erase(self, key: MemoryKey) -> int:
        """Delete every fact of ``key`` for good; returns how many there were."""
        ...

    async def close(self) -> None:
        """Release connections; the store is unusable afterwards."""
        ...


MemoryPort = MemoryStore
"""The reference API's name for the ``MemoryStore`` port (the same protocol)."""

__all__ = [
    "MAX_MEMORY_CHARS",
    "EndUserRequired",
    "Memory",
    "MemoryKey",
    "MemoryPort",
    "MemoryStore",
]
