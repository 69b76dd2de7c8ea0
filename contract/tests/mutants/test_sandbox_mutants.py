"""The Sandbox contract fails every sandbox mutant, and passes the unmodified backends.

The mutants need what makes the real guarantees: a root host (a uid per program, the
namespaces a root child makes) and, for the namespaces one, bubblewrap.
"""

import os
from pathlib import Path

import pytest

from contract.tests.mutants.sandbox_mutants import SANDBOX_CONTROLS
from contract.tests.mutants.sandbox_mutants import SANDBOX_MUTANTS
from contract.tests.mutants.sandbox_mutants import SandboxMutant
from contract.tests.mutants.test_store_mutants import assert_caught
from contract.tests.mutants.test_store_mutants import run_contract
from psych_contract import SandboxContract

RUNNER = Path(__file__).with_name("sandbox_contract_under_mutant.py")

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="the sandbox mutants need a root host (a uid per program)"
)


@pytest.mark.slow
@pytest.mark.parametrize("mutant", SANDBOX_MUTANTS, ids=[m.name for m in SANDBOX_MUTANTS])
def test_the_sandbox_contract_catches_the_mutant(mutant: SandboxMutant) -> None:
    """Every case the mutant names fails against it."""
    result = run_contract(RUNNER, mutant.name, "-", mutant.caught_by)
    assert_caught(result, mutant.name, "-", mutant.caught_by)


@pytest.mark.slow
@pytest.mark.parametrize("control", SANDBOX_CONTROLS, ids=[c.name for c in SANDBOX_CONTROLS])
def test_the_same_sandbox_cases_pass_without_a_fault(control: SandboxMutant) -> None:
    """The unmodified backends pass every case the mutants are checked with."""
    result = run_contract(RUNNER, control.name, "-", control.caught_by)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and "failed" not in result.stdout


def test_every_sandbox_mutant_names_cases_that_exist() -> None:
    cases = {name for name in dir(SandboxContract) if name.startswith("test_")}
    for mutant in (*SANDBOX_MUTANTS, *SANDBOX_CONTROLS):
        assert set(mutant.caught_by) <= cases, mutant.name
