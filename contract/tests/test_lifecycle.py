"""``closing`` and ``migrated`` close what they were given, also when the block fails."""

import pytest

from psych_contract.lifecycle import closing
from psych_contract.lifecycle import migrated


class Resource:
    def __init__(self, *, migration_fails: bool = False) -> None:
        self.migration_fails = migration_fails
        self.migrated = False
        self.closed = False

    async def migrate(self) -> list[int]:
        if self.migration_fails:
            raise RuntimeError("migration failed")
        self.migrated = True
        return [1]

    async def close(self) -> None:
        self.closed = True


async def test_closing_closes_after_the_block_and_after_a_failure() -> None:
    async with closing(Resource()) as resource:
        assert not resource.closed
    assert resource.closed
    failing = Resource()
    with pytest.raises(ValueError):
        async with closing(failing):
            raise ValueError("the block failed")
    assert failing.closed


async def test_migrated_migrates_first_and_closes_even_when_migrating_fails() -> None:
    async with migrated(Resource()) as resource:
        assert resource.migrated and not resource.closed
    assert resource.closed
    broken = Resource(migration_fails=True)
    with pytest.raises(RuntimeError, match="migration failed"):
        async with migrated(broken):
            pytest.fail("the block must not run when migrating fails")
    assert broken.closed
