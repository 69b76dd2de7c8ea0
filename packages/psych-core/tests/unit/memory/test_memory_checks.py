"""The id check every memory store's ``forget`` makes before asking its backend."""

import pytest

from psych_runtime.adapters.memory import MemoryKey, mint_memory, no_memory_can_match

KEY = MemoryKey(tenant="acme", end_user_id="user-1")


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
        no_memory_can_match(MemoryKey(tenant="acme", end_user_id="a\x00b"), "")
