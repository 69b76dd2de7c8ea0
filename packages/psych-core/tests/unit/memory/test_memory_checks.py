"""The checks every memory store makes before asking its backend, and the base applying them."""

from collections.abc import Awaitable
from collections.abc import Callable

import pytest

from psych_runtime.adapters.memory import CheckedMemoryStore
from psych_runtime.adapters.memory import Memory
from psych_runtime.adapters.memory import MemoryKey
from psych_runtime.adapters.memory import mint_memory
from psych_runtime.adapters.memory import no_memory_can_match

KEY = MemoryKey(tenant="acme", end_user_id="user-1")
# Built without validation, as a caller may forge one: MemoryKey itself refuses NUL.
BAD_KEY = MemoryKey.model_construct(tenant="acme", end_user_id="a\x00b")


@pytest.mark.parametrize(
    "memory_id",
    ["", "mem_\x00", "mem_\ud800", 7, None],
    ids=["empty", "nul", "lone-surrogate", "int", "none"],
)
def test_an_id_no_store_could_have_issued_matches_nothing(memory_id: object) -> None:
    assert no_memory_can_match(KEY, memory_id)


def test_a_minted_id_may_match() -> None:
    assert not no_memory_can_match(KEY, mint_memory(KEY, "likes tea").id)


def test_the_key_is_checked_before_the_id() -> None:
    with pytest.raises(ValueError, match="end_user_id"):
        no_memory_can_match(BAD_KEY, "")


class _Recorder(CheckedMemoryStore):
    """Backend steps that only note which were reached."""

    def __init__(self) -> None:
        self.reached: list[str] = []

    async def _keep(self, fact: Memory) -> Memory:
        self.reached.append("keep")
        return fact

    async def _forget(self, key: MemoryKey, memory_id: str) -> bool:
        self.reached.append("forget")
        return True

    async def _recall(self, key: MemoryKey, limit: int | None) -> tuple[Memory, ...]:
        self.reached.append("recall")
        return ()

    async def _erase(self, key: MemoryKey) -> int:
        self.reached.append("erase")
        return 0


async def test_well_formed_calls_reach_every_backend_step() -> None:
    store = _Recorder()
    fact = await store.remember(KEY, "likes tea")
    assert fact.key == KEY and fact.content == "likes tea"
    assert await store.forget(KEY, fact.id)
    assert await store.recall(KEY, limit=2) == ()
    assert await store.erase(KEY) == 0
    assert store.reached == ["keep", "forget", "recall", "erase"]


@pytest.mark.parametrize(
    "call",
    [
        lambda store: store.remember(BAD_KEY, "likes tea"),
        lambda store: store.remember(KEY, " "),
        lambda store: store.forget(BAD_KEY, "mem_1"),
        lambda store: store.recall(BAD_KEY),
        lambda store: store.recall(KEY, limit=0),
        lambda store: store.erase(BAD_KEY),
    ],
    ids=["remember-key", "remember-content", "forget-key", "recall-key", "recall-limit", "erase"],
)
async def test_input_no_store_accepts_is_refused_before_the_backend(
    call: Callable[[_Recorder], Awaitable[object]],
) -> None:
    store = _Recorder()
    with pytest.raises(ValueError):
        await call(store)
    assert store.reached == []


async def test_an_id_no_store_issued_is_not_looked_for() -> None:
    store = _Recorder()
    assert not await store.forget(KEY, "mem_\x00")
    assert store.reached == []
