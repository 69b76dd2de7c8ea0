"""The BlobStore contract fails every blob mutant, on the in-memory and the file base."""

from pathlib import Path

import pytest

from contract.tests.mutants.blob_mutants import BLOB_CONTROL
from contract.tests.mutants.blob_mutants import BLOB_MUTANTS
from contract.tests.mutants.blob_mutants import BlobMutant
from contract.tests.mutants.test_store_mutants import assert_caught
from contract.tests.mutants.test_store_mutants import run_contract
from psych_contract import BlobStoreContract

RUNNER = Path(__file__).with_name("blob_contract_under_mutant.py")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mutant", "base"),
    [
        pytest.param(mutant, base, id=f"{mutant.name}-{base}")
        for mutant in BLOB_MUTANTS
        for base in ("memory", "file")
    ],
)
def test_the_blob_contract_catches_the_mutant(mutant: BlobMutant, base: str) -> None:
    """Every case the mutant names fails against it."""
    result = run_contract(RUNNER, mutant.name, base, mutant.caught_by)
    assert_caught(result, mutant.name, base, mutant.caught_by)


@pytest.mark.slow
@pytest.mark.parametrize("base", ["memory", "file"])
def test_the_same_blob_cases_pass_without_a_fault(base: str) -> None:
    """A fault-free wrapper passes every case the blob mutants are checked with."""
    result = run_contract(RUNNER, BLOB_CONTROL.name, base, BLOB_CONTROL.caught_by)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def test_every_blob_mutant_names_cases_that_exist() -> None:
    cases = {name for name in dir(BlobStoreContract) if name.startswith("test_")}
    for mutant in BLOB_MUTANTS:
        assert set(mutant.caught_by) <= cases, mutant.name
