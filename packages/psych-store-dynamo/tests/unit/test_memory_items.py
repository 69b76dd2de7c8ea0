"""The layout of facts: one unambiguous partition per (tenant, end user), exact times."""

from hypothesis import given
from hypothesis import strategies as st

from psych_runtime.adapters import MemoryKey
from psych_runtime.adapters import mint_memory
from psych_store_dynamo import _rows as it

PART = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=256,
)


@given(PART, PART, PART, PART)
def test_different_keys_never_share_a_partition(a: str, b: str, c: str, d: str) -> None:
    first = MemoryKey(tenant=a, end_user_id=b)
    second = MemoryKey(tenant=c, end_user_id=d)
    assert (it.memory_pk(first) == it.memory_pk(second)) == (first == second)


@given(PART, PART)
def test_every_partition_key_fits_dynamodb(tenant: str, end_user_id: str) -> None:
    pk = it.memory_pk(MemoryKey(tenant=tenant, end_user_id=end_user_id))
    assert len(pk.encode()) <= it.MAX_PARTITION_KEY_BYTES
    assert pk.startswith("m#")


def test_separators_inside_the_parts_cannot_make_keys_collide() -> None:
    keys = [
        MemoryKey(tenant="acme#a", end_user_id="b"),
        MemoryKey(tenant="acme", end_user_id="a#b"),
        MemoryKey(tenant="acme#", end_user_id="ab"),
        MemoryKey(tenant="1#acme", end_user_id="b"),
    ]
    assert len({it.memory_pk(key) for key in keys}) == len(keys)
    assert it.memory_pk(keys[0]) == "m#6#acme#ab"


def test_only_a_key_too_long_for_dynamodb_is_hashed() -> None:
    longest = MemoryKey(tenant="🚀" * 256, end_user_id="🚀" * 256)
    hashed = it.memory_pk(longest)
    assert hashed.startswith("m#~")
    assert len(hashed) == len("m#~") + 64
    plain = MemoryKey(tenant="t" * 256, end_user_id="u" * 256)
    assert it.memory_pk(plain) == f"m#256#{'t' * 256}{'u' * 256}"


def test_a_fact_round_trips_through_its_item() -> None:
    key = MemoryKey(tenant="acme", end_user_id="Alice")
    fact = mint_memory(key, "prefers email 📧")
    item = it.memory_item(fact)
    assert item[it.SK] == it.n(it.micros(fact.created_at))
    back = it.memory_of(item, key)
    assert back == fact
    assert back.created_at.tzinfo is not None
    assert back.created_at.utcoffset() == fact.created_at.utcoffset()


def test_later_facts_sort_after_earlier_ones() -> None:
    key = MemoryKey(tenant="acme", end_user_id="alice")
    facts = [mint_memory(key, f"fact {n}") for n in range(50)]
    sort_keys = [int(it.memory_item(fact)[it.SK]["N"]) for fact in facts]
    assert sort_keys == sorted(set(sort_keys))
