"""The MemoryStore contract fails every memory mutant, on the in-memory and the SQLite base."""

from pathlib import Path

import pytest

from contract.tests.mutants.memory_mutants import MEMORY_CONTROL
from contract.tests.mutants.memory_mutants import MEMORY_MUTANTS
from contract.tests.mutants.memory_mutants import MemoryMutant
from contract.tests.mutants.test_store_mutants import assert_caught
from contract.tests.mutants.test_store_mutants import run_contract
from psych_contract import MemoryContract

RUNNER = Path(__file__).with_name("memory_contract_under_mutant.py")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mutant", "base"),
    [
        pytest.param(mutant, base, id=f"{mutant.name}-{base}")
        for mutant in MEMORY_MUTANTS
        for base in ("memory", "sqlite")
        if getattr(mutant, base) is not None
    ],
)
def test_the_memory_contract_catches_the_mutant(mutant: MemoryMutant, base: str) -> None:
    """Every case the mutant names fails against it."""
    result = run_contract(RUNNER, mutant.name, base, mutant.caught_by)
    assert_caught(result, mutant.name, base, mutant.caught_by)


@pytest.mark.slow
@pytest.mark.parametrize("base", ["memory", "sqlite"])
def test_the_same_memory_cases_pass_without_a_fault(base: str) -> None:
    """A fault-free wrapper passes every case the memory mutants are checked with."""
    result = run_contract(RUNNER, MEMORY_CONTROL.name, base, MEMORY_CONTROL.caught_by)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def test_every_memory_mutant_names_cases_that_exist() -> None:
    cases = {name for name in dir(MemoryContract) if name.startswith("test_")}
    for mutant in MEMORY_MUTANTS:
        assert set(mutant.caught_by) <= cases, mutant.name
