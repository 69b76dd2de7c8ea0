"""The MemoryStore conformance suite.

Subclass ``MemoryContract`` in your adapter's tests and override the ``memory_store``
fixture so it yields a ready, migrated store (closing it afterwards). Override
``peer_memory_store`` too when a second instance can open the same backend (another
connection pool, another process as far as the database can tell): the cases that
use it then check that facts written through one are read, forgotten and erased
through the other.

Every case builds its keys from a tenant unique to the case, so a backend that keeps
facts between runs does not need emptying first. Only the public port is used.
"""

import asyncio
import random
import uuid
from collections.abc import AsyncIterator
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from datetime import timedelta

import pytest
import pytest_asyncio

from psych_contract._overrides import must_override
from psych_contract._overrides import raw_items
from psych_runtime.adapters.memory import MAX_MEMORY_CHARS
from psych_runtime.adapters.memory import Memory
from psych_runtime.adapters.memory import MemoryKey
from psych_runtime.adapters.memory import MemoryStore
from psych_runtime.adapters.store import mentions


def _tenant(label: str) -> str:
    return f"{label}-{uuid.uuid4().hex[:12]}"


def _keys() -> tuple[MemoryKey, MemoryKey, MemoryKey]:
    """Alice of one tenant, Bob of the same tenant, and Alice of another tenant."""
    acme, globex = _tenant("acme"), _tenant("globex")
    return (
        MemoryKey(tenant=acme, end_user_id="alice"),
        MemoryKey(tenant=acme, end_user_id="bob"),
        MemoryKey(tenant=globex, end_user_id="alice"),
    )


def _contents(facts: tuple[Memory, ...]) -> list[str]:
    return [fact.content for fact in facts]


def _marker(label: str) -> str:
    """A text no backend holds by chance: a label and a random tail."""
    return f"{label}-{uuid.uuid4().hex}"


async def check_bad_input_refused_offline(
    memory_store: MemoryStore, impossible_ids: Sequence[str] = ("mem_\ud800",)
) -> None:
    """Every call with input no store could keep is refused before any IO, and closes.

    Give it a store whose backend cannot be reached (a closed port, a missing
    directory): a check that went to the backend first would fail there with
    ``StoreUnavailable`` instead of the ``ValueError`` expected. Keys with a NUL or a
    lone surrogate, empty, blank and over-long facts and a zero ``limit`` are refused;
    each of ``impossible_ids``, ids the store knows without asking it never issued, is
    simply not this key's fact (``False``). The store is closed afterwards.
    """
    key = MemoryKey(tenant="acme", end_user_id="alice")
    forged_keys = (
        MemoryKey.model_construct(tenant="acme", end_user_id="nul\x00"),
        MemoryKey.model_construct(tenant="acme\udc00", end_user_id="alice"),
    )
    try:
        for forged in forged_keys:
            with pytest.raises(ValueError):
                await memory_store.remember(forged, "fact")
            with pytest.raises(ValueError):
                await memory_store.recall(forged)
            with pytest.raises(ValueError):
                await memory_store.forget(forged, "mem_x")
            with pytest.raises(ValueError):
                await memory_store.erase(forged)
        for content in ("", "   ", "x" * (MAX_MEMORY_CHARS + 1)):
            with pytest.raises(ValueError):
                await memory_store.remember(key, content)
        with pytest.raises(ValueError):
            await memory_store.recall(key, limit=0)
        for memory_id in impossible_ids:
            assert await memory_store.forget(key, memory_id) is False
    finally:
        await memory_store.close()


class MemoryContract:
    """Conformance cases every MemoryStore must pass.

    Capability flags (override as class attributes in your subclass):
        durable: facts survive closing the store and opening a new one on the same
            backend (needs ``reopen_memory_store``).
        single_process: the facts live in this process only, so there is no second
            instance; every other store overrides ``peer_memory_store``.
    """

    durable: bool = True
    single_process: bool = False

    @pytest_asyncio.fixture
    async def memory_store(self) -> AsyncIterator[MemoryStore]:
        """Override: yield a fresh, migrated MemoryStore and close it afterwards."""
        yield must_override("override the memory_store fixture in your MemoryContract subclass")

    @pytest_asyncio.fixture
    async def peer_memory_store(self, memory_store: MemoryStore) -> AsyncIterator[MemoryStore]:
        """A second instance on the same backend as ``memory_store``.

        By default it is the instance ``reopen_memory_store`` opens, closed afterwards,
        so a ``durable`` store needs nothing more; override it when a peer is built
        another way. A store that declares ``single_process = True`` runs these cases
        with the one instance twice.
        """
        if self.single_process:
            yield memory_store
            return
        if type(self).reopen_memory_store is MemoryContract.reopen_memory_store:
            pytest.fail(
                "override `reopen_memory_store` (or `peer_memory_store`) to open a second "
                "instance on the same backend, or declare single_process = True if the "
                "store cannot have one"
            )
        peer = await self.reopen_memory_store(memory_store)
        try:
            yield peer
        finally:
            await peer.close()

    async def reopen_memory_store(self, memory_store: MemoryStore) -> MemoryStore:
        """Override when ``durable``: a new instance on the backend ``memory_store`` uses."""
        pytest.skip("this adapter does not say how to reopen its backend")

    # --- remember and recall ------------------------------------------------------------

    async def test_remembered_facts_come_back_oldest_first(self, memory_store: MemoryStore) -> None:
        """``recall`` lists a key's facts in the order they were remembered."""
        alice, _, _ = _keys()
        contents = [f"fact {n}" for n in range(12)]
        remembered = [await memory_store.remember(alice, text) for text in contents]
        recalled = await memory_store.recall(alice)
        assert _contents(recalled) == contents
        assert [fact.id for fact in recalled] == [fact.id for fact in remembered]

    async def test_remember_returns_the_fact_as_kept(self, memory_store: MemoryStore) -> None:
        """The returned fact is the stored one: same id, key, content and time."""
        alice, _, _ = _keys()
        before = datetime.now(UTC) - timedelta(seconds=5)
        fact = await memory_store.remember(alice, "prefers email over phone")
        assert fact.key == alice
        assert fact.content == "prefers email over phone"
        assert fact.id
        assert fact.created_at.tzinfo is not None
        assert before <= fact.created_at <= datetime.now(UTC) + timedelta(seconds=5)
        (recalled,) = await memory_store.recall(alice)
        assert recalled == fact

    async def test_the_same_text_twice_is_two_facts(self, memory_store: MemoryStore) -> None:
        """``remember`` never deduplicates: two calls keep two facts with two ids."""
        alice, _, _ = _keys()
        first = await memory_store.remember(alice, "likes tea")
        second = await memory_store.remember(alice, "likes tea")
        assert first.id != second.id
        assert _contents(await memory_store.recall(alice)) == ["likes tea", "likes tea"]

    async def test_limit_keeps_the_newest_facts_in_order(self, memory_store: MemoryStore) -> None:
        """``limit`` keeps the newest ``limit`` facts, still oldest first."""
        alice, _, _ = _keys()
        for n in range(7):
            await memory_store.remember(alice, f"fact {n}")
        assert _contents(await memory_store.recall(alice, limit=3)) == [
            "fact 4",
            "fact 5",
            "fact 6",
        ]
        assert len(await memory_store.recall(alice, limit=7)) == 7
        assert len(await memory_store.recall(alice, limit=100)) == 7
        assert _contents(await memory_store.recall(alice, limit=1)) == ["fact 6"]

    async def test_an_unknown_key_recalls_nothing(self, memory_store: MemoryStore) -> None:
        """A key nobody remembered anything for has no facts (and no error)."""
        alice, _, _ = _keys()
        assert await memory_store.recall(alice) == ()
        assert await memory_store.recall(alice, limit=5) == ()

    async def test_text_survives_exactly(self, memory_store: MemoryStore) -> None:
        """Unicode, newlines, quotes and the longest allowed fact come back unchanged."""
        alice, _, _ = _keys()
        texts = [
            "naïve café, 租户, emoji 🚀",
            "line one\nline two\r\nline three\ttabbed",
            "quotes ' \" ` and back\\slash; DROP TABLE memories; --",
            "  leading and trailing spaces  ",
            "x" * MAX_MEMORY_CHARS,
        ]
        for text in texts:
            await memory_store.remember(alice, text)
        assert _contents(await memory_store.recall(alice)) == texts

    # --- isolation ----------------------------------------------------------------------

    async def test_tenants_and_end_users_are_isolated(self, memory_store: MemoryStore) -> None:
        """A fact is recalled only under its own tenant and end user."""
        alice, bob, other_alice = _keys()
        await memory_store.remember(alice, "alice at acme")
        await memory_store.remember(bob, "bob at acme")
        await memory_store.remember(other_alice, "alice at globex")
        assert _contents(await memory_store.recall(alice)) == ["alice at acme"]
        assert _contents(await memory_store.recall(bob)) == ["bob at acme"]
        assert _contents(await memory_store.recall(other_alice)) == ["alice at globex"]

    async def test_key_parts_are_not_concatenated(self, memory_store: MemoryStore) -> None:
        """Keys that would collide if the parts were joined with a separator stay apart."""
        tenant = _tenant("t")
        one = MemoryKey(tenant=f"{tenant}#a", end_user_id="b")
        two = MemoryKey(tenant=tenant, end_user_id="a#b")
        three = MemoryKey(tenant=f"{tenant}:a", end_user_id="b")
        four = MemoryKey(tenant=tenant, end_user_id="a:b")
        for key in (one, two, three, four):
            await memory_store.remember(key, f"fact of {key.tenant}/{key.end_user_id}")
        for key in (one, two, three, four):
            assert _contents(await memory_store.recall(key)) == [
                f"fact of {key.tenant}/{key.end_user_id}"
            ]

    async def test_keys_are_case_sensitive(self, memory_store: MemoryStore) -> None:
        """``Alice`` and ``alice`` are two people, even on a case-insensitive collation."""
        tenant = _tenant("case")
        lower = MemoryKey(tenant=tenant, end_user_id="alice")
        upper = MemoryKey(tenant=tenant, end_user_id="Alice")
        await memory_store.remember(lower, "lower")
        await memory_store.remember(upper, "upper")
        assert _contents(await memory_store.recall(lower)) == ["lower"]
        assert _contents(await memory_store.recall(upper)) == ["upper"]

    async def test_long_and_awkward_keys(self, memory_store: MemoryStore) -> None:
        """Keys at the length limit and holding unicode or punctuation address their facts."""
        keys = [
            MemoryKey(tenant="t" * 256, end_user_id="u" * 256),
            MemoryKey(tenant=_tenant("ünï"), end_user_id="用户 🚀"),
            MemoryKey(tenant=_tenant("q"), end_user_id="o'brien\"; --"),
            MemoryKey(tenant=_tenant("w"), end_user_id="with space\nand newline"),
        ]
        await memory_store.erase(keys[0])  # the first key is not unique to this case
        for key in keys:
            await memory_store.remember(key, "mine")
        for key in keys:
            assert _contents(await memory_store.recall(key)) == ["mine"]
            assert await memory_store.erase(key) == 1

    async def test_scoped_calls_refuse_look_alike_keys(self, memory_store: MemoryStore) -> None:
        """No look-alike of a key reaches its facts: not to recall, forget or erase.

        Tried with case and padding variants, prefixes, the wildcards of SQL ``LIKE``
        and of globs (``%`` ``_`` ``*`` ``?``), separators and Unicode look-alikes of
        the end user and of the tenant. Compare both key parts exactly: no ``LIKE``,
        no case-insensitive or padded collation, no normalisation.
        """
        alice, _, _ = _keys()
        fact = await memory_store.remember(alice, "alice's own fact")
        users = (
            "ALICE",
            "Alice",
            "alice ",
            " alice",
            "alic",
            "alice2",
            "al%",
            "ali_",
            "%",
            "_",
            "*",
            "?",
            "al*",
            "alic?",
            "alice/",
            "alice#",
            "\u0430lice",
            "alice\u200b",
        )
        tenants = (
            alice.tenant.upper(),
            alice.tenant + " ",
            alice.tenant[:-1],
            "%",
            "*",
            alice.tenant[:-1] + "_",
            alice.tenant[:-1] + "?",
        )
        variants = [MemoryKey(tenant=alice.tenant, end_user_id=u) for u in users]
        variants += [MemoryKey(tenant=t, end_user_id="alice") for t in tenants]
        for key in variants:
            assert await memory_store.recall(key) == (), key
            assert await memory_store.forget(key, fact.id) is False, key
            assert await memory_store.erase(key) == 0, key
        assert await memory_store.recall(alice) == (fact,)

    # --- forget ---------------------------------------------------------------------------

    async def test_forget_removes_one_fact(self, memory_store: MemoryStore) -> None:
        """``forget`` removes exactly the named fact and says it did."""
        alice, _, _ = _keys()
        facts = [await memory_store.remember(alice, f"fact {n}") for n in range(3)]
        assert await memory_store.forget(alice, facts[1].id) is True
        assert _contents(await memory_store.recall(alice)) == ["fact 0", "fact 2"]
        assert await memory_store.forget(alice, facts[1].id) is False

    async def test_forget_refuses_another_persons_fact(self, memory_store: MemoryStore) -> None:
        """A fact id under another end user or tenant is not this key's to forget."""
        alice, bob, other_alice = _keys()
        fact = await memory_store.remember(alice, "alice's secret")
        assert await memory_store.forget(bob, fact.id) is False
        assert await memory_store.forget(other_alice, fact.id) is False
        assert _contents(await memory_store.recall(alice)) == ["alice's secret"]

    async def test_forget_an_unknown_id(self, memory_store: MemoryStore) -> None:
        """An id that was never issued (or looks nothing like one) gives False."""
        alice, _, _ = _keys()
        await memory_store.remember(alice, "kept")
        assert await memory_store.forget(alice, "mem_does_not_exist") is False
        assert await memory_store.forget(alice, "") is False
        assert await memory_store.forget(alice, "x" * 300) is False
        assert _contents(await memory_store.recall(alice)) == ["kept"]

    # --- erase ----------------------------------------------------------------------------

    async def test_erase_deletes_every_fact_of_one_person(self, memory_store: MemoryStore) -> None:
        """``erase`` removes all of one key's facts, counts them, and touches no other key."""
        alice, bob, other_alice = _keys()
        for n in range(5):
            await memory_store.remember(alice, f"alice {n}")
        await memory_store.remember(bob, "bob")
        await memory_store.remember(other_alice, "other alice")
        assert await memory_store.erase(alice) == 5
        assert await memory_store.recall(alice) == ()
        assert await memory_store.erase(alice) == 0
        assert _contents(await memory_store.recall(bob)) == ["bob"]
        assert _contents(await memory_store.recall(other_alice)) == ["other alice"]

    async def test_an_erased_fact_cannot_be_forgotten_or_return(
        self, memory_store: MemoryStore
    ) -> None:
        """After ``erase`` the old ids are gone; new facts start a fresh list."""
        alice, _, _ = _keys()
        old = await memory_store.remember(alice, "old")
        await memory_store.erase(alice)
        assert await memory_store.forget(alice, old.id) is False
        await memory_store.remember(alice, "new")
        assert _contents(await memory_store.recall(alice)) == ["new"]

    async def test_erase_is_a_hard_delete(self, memory_store: MemoryStore) -> None:
        """An erased fact is gone from the backend, not hidden: a reopened store agrees."""
        if not self.durable:
            pytest.skip("facts of this store do not outlive it")
        alice, _, _ = _keys()
        await memory_store.remember(alice, "to be erased")
        await memory_store.erase(alice)
        reopened = await self.reopen_memory_store(memory_store)
        try:
            assert await reopened.recall(alice) == ()
        finally:
            await reopened.close()

    async def test_raw_storage_shows_what_was_kept(self, memory_store: MemoryStore) -> None:
        """``raw_storage()`` returns the backend's bytes, and a remembered fact is in them.

        Every MemoryStore implements ``psych_runtime.adapters.RawStorage``. A hook
        that returns nothing (or only what the port would answer) makes the erase
        checks below meaningless, so this case insists the fact's text shows up.
        """
        alice, _, _ = _keys()
        text = _marker("raw-fact")
        await memory_store.remember(alice, text)
        items = await raw_items(memory_store, "MemoryStore")
        assert mentions(items, [text]), (
            f"a remembered fact is not in raw_storage() ({len(items)} items)"
        )

    async def test_erase_leaves_no_byte_of_the_facts(self, memory_store: MemoryStore) -> None:
        """After ``erase`` no byte the backend holds spells an erased fact; others remain.

        Checked in ``raw_storage()``, not through the port: an erase that only hides
        rows (a flag, a tombstone, a filter) fails here, and so does a delete whose
        bytes stay in free pages or a write-ahead log (turn on the database's secure
        delete and cut its log, or clean the table up, as part of ``erase``).
        """
        alice, bob, other_alice = _keys()
        erased = [_marker("erased-a"), _marker("erased-b"), _marker("erased-c")]
        kept = [_marker("kept-bob"), _marker("kept-other")]
        # Erased facts before, between and after the kept ones: wherever a backend puts
        # them, moving the survivors around must not be what makes the bytes go.
        await memory_store.remember(alice, erased[0])
        await memory_store.remember(bob, kept[0])
        await memory_store.remember(alice, erased[1])
        await memory_store.remember(other_alice, kept[1])
        await memory_store.remember(alice, erased[2])
        assert await memory_store.erase(alice) == 3
        items = await raw_items(memory_store, "MemoryStore")
        left = mentions(items, erased)
        assert left == [], f"erased facts are still stored: {left}"
        found = mentions(items, kept)
        assert len(found) >= 2, f"other people's facts vanished from raw storage: {found}"

    async def test_forget_leaves_no_byte_of_the_fact(self, memory_store: MemoryStore) -> None:
        """After ``forget`` the forgotten fact's text is gone from the backend's bytes."""
        alice, _, _ = _keys()
        gone, stays = _marker("forgotten"), _marker("stays")
        await memory_store.remember(alice, stays)
        fact = await memory_store.remember(alice, gone)
        assert await memory_store.forget(alice, fact.id) is True
        items = await raw_items(memory_store, "MemoryStore")
        assert mentions(items, [gone]) == []
        assert mentions(items, [stays])

    # --- malformed input ------------------------------------------------------------------

    @pytest.mark.parametrize(
        "content",
        ["", "   ", "\n\t", "x" * (MAX_MEMORY_CHARS + 1), "bad \ud800 surrogate", "nul \x00 byte"],
        ids=["empty", "blank", "whitespace", "too-long", "surrogate", "nul"],
    )
    async def test_unstorable_content_is_refused(
        self, memory_store: MemoryStore, content: str
    ) -> None:
        """Content no store could keep raises ``ValueError`` and keeps nothing."""
        alice, _, _ = _keys()
        with pytest.raises(ValueError):
            await memory_store.remember(alice, content)
        assert await memory_store.recall(alice) == ()

    @pytest.mark.parametrize("limit", [3, 2**31, 2**63 - 1, 2**63, 2**64, 10**30])
    async def test_a_huge_limit_recalls_every_fact(
        self, memory_store: MemoryStore, limit: int
    ) -> None:
        """Any positive ``limit``, however large, is answered; past the count it means all.

        Databases cap ``LIMIT`` at 32 or 64 bits; pass no limit for a larger one
        rather than let the driver's range error escape.
        """
        alice, _, _ = _keys()
        for n in range(4):
            await memory_store.remember(alice, f"fact {n}")
        expected = [f"fact {n}" for n in range(4)][-limit:]
        assert _contents(await memory_store.recall(alice, limit=limit)) == expected

    async def test_hostile_fact_ids_are_simply_unknown(self, memory_store: MemoryStore) -> None:
        """``forget`` of an id holding NUL, a lone surrogate or far too long is False."""
        alice, _, _ = _keys()
        await memory_store.remember(alice, "kept")
        for memory_id in ("mem_\x00", "mem_\ud800", "m" * 5000, "%", "*"):
            assert await memory_store.forget(alice, memory_id) is False, memory_id[:20]
        assert _contents(await memory_store.recall(alice)) == ["kept"]

    @pytest.mark.parametrize("limit", [0, -1, True, 1.5, "3"])
    async def test_a_bad_limit_is_refused(self, memory_store: MemoryStore, limit: object) -> None:
        """``limit`` must be a positive int or None."""
        alice, _, _ = _keys()
        with pytest.raises(ValueError):
            await memory_store.recall(alice, limit=limit)  # type: ignore[arg-type]

    async def test_unstorable_keys_are_refused(self, memory_store: MemoryStore) -> None:
        """A key holding NUL or a lone surrogate names no facts.

        It cannot even be built, and a store handed one built without validation
        refuses it too.
        """
        for tenant, end_user in ((_tenant("t"), "nul\x00"), ("bad\udc00", "alice")):
            with pytest.raises(ValueError):
                MemoryKey(tenant=tenant, end_user_id=end_user)
            forged = MemoryKey.model_construct(tenant=tenant, end_user_id=end_user)
            with pytest.raises(ValueError):
                await memory_store.remember(forged, "fact")
            with pytest.raises(ValueError):
                await memory_store.recall(forged)
            with pytest.raises(ValueError):
                await memory_store.erase(forged)

    # --- concurrency and durability -------------------------------------------------------

    async def test_concurrent_remembers_lose_nothing(
        self, memory_store: MemoryStore, peer_memory_store: MemoryStore
    ) -> None:
        """Many remembers at once, through two instances, all land with distinct ids."""
        alice, bob, _ = _keys()
        stores = (memory_store, peer_memory_store)

        async def one(n: int) -> Memory:
            key = alice if n % 3 else bob
            return await stores[n % 2].remember(key, f"fact {n}")

        facts = await asyncio.gather(*(one(n) for n in range(40)))
        assert len({fact.id for fact in facts}) == 40
        everything = await memory_store.recall(alice) + await peer_memory_store.recall(bob)
        assert sorted(_contents(everything)) == sorted(f"fact {n}" for n in range(40))

    async def test_peers_see_each_others_writes(
        self, memory_store: MemoryStore, peer_memory_store: MemoryStore
    ) -> None:
        """What one instance remembers, forgets or erases, the other sees at once."""
        alice, bob, _ = _keys()
        fact = await memory_store.remember(alice, "shared")
        assert _contents(await peer_memory_store.recall(alice)) == ["shared"]
        assert await peer_memory_store.forget(alice, fact.id) is True
        assert await memory_store.recall(alice) == ()
        await peer_memory_store.remember(bob, "bob's")
        assert await memory_store.erase(bob) == 1
        assert await peer_memory_store.recall(bob) == ()

    async def test_facts_outlive_the_store_instance(self, memory_store: MemoryStore) -> None:
        """A durable store's facts are there for a new instance on the same backend."""
        if not self.durable:
            pytest.skip("facts of this store do not outlive it")
        alice, _, _ = _keys()
        kept = await memory_store.remember(alice, "survives a restart")
        reopened = await self.reopen_memory_store(memory_store)
        try:
            assert await reopened.recall(alice) == (kept,)
        finally:
            await reopened.close()

    async def test_random_operations_match_a_model(self, memory_store: MemoryStore) -> None:
        """A random mix of every call agrees, step by step, with a list-per-key model."""
        keys = _keys()
        model: dict[MemoryKey, list[Memory]] = {key: [] for key in keys}
        rng = random.Random(20261204)
        for step in range(120):
            key = rng.choice(keys)
            action = rng.choices(["remember", "forget", "recall", "erase"], [5, 2, 3, 1])[0]
            if action == "remember":
                fact = await memory_store.remember(key, f"fact {step}")
                model[key].append(fact)
            elif action == "forget":
                pool = [fact for facts in model.values() for fact in facts]
                target = rng.choice(pool).id if pool and rng.random() < 0.8 else f"mem_{step}"
                expected = any(fact.id == target for fact in model[key])
                assert await memory_store.forget(key, target) is expected, (step, action)
                model[key] = [fact for fact in model[key] if fact.id != target]
            elif action == "recall":
                limit = rng.choice([None, 1, 2, 5])
                want = model[key] if limit is None else model[key][-limit:]
                assert await memory_store.recall(key, limit=limit) == tuple(want), (step, limit)
            else:
                assert await memory_store.erase(key) == len(model[key]), step
                model[key] = []
        for key in keys:
            assert await memory_store.recall(key) == tuple(model[key])


__all__ = ["MemoryContract", "check_bad_input_refused_offline"]
