"""The Store contract fails every mutant, on the in-memory, SQLite and example bases.

Each mutant runs in a subprocess of its own (``contract_under_mutant.py``) with only
the cases that must catch it selected; the test names any of them that passed. The
model-based case runs derandomized there, so a mutant it must catch is caught on every
run, not most.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from contract.tests.mutants.store_mutants import CONTROL
from contract.tests.mutants.store_mutants import MUTANTS
from contract.tests.mutants.store_mutants import Mutant

REPO = Path(__file__).resolve().parents[3]
RUNNER = Path(__file__).with_name("contract_under_mutant.py")

CASES = [
    pytest.param(mutant, base, id=f"{mutant.name}-{base}")
    for mutant in MUTANTS
    for base in ("memory", "sqlite", "example")
    if getattr(mutant, base) is not None
]


def run_contract(
    runner: Path, name: str, base: str, cases: tuple[str, ...]
) -> subprocess.CompletedProcess[str]:
    """Run ``runner`` against the mutant ``name`` on ``base`` with only ``cases`` selected."""
    env = {
        **os.environ,
        "PSYCH_MUTANT": name,
        "PSYCH_MUTANT_BASE": base,
        "PSYCH_CONTRACT_DERANDOMIZE": "1",
        "PSYCH_CONTRACT_SKIP_SHRINK": "1",
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(runner),
            "-q",
            "-p",
            "no:cacheprovider",
            "--tb=line",
            "-rfE",
            "-k",
            " or ".join(cases),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
@pytest.mark.parametrize(("mutant", "base"), CASES)
def test_the_contract_catches_the_mutant(mutant: Mutant, base: str) -> None:
    """Every case the mutant names fails against it."""
    result = run_contract(RUNNER, mutant.name, base, mutant.caught_by)
    assert_caught(result, mutant.name, base, mutant.caught_by)


def assert_caught(
    result: subprocess.CompletedProcess[str], name: str, base: str, cases: tuple[str, ...]
) -> None:
    """Each of ``cases`` failed (not errored) in ``result``."""
    failed = set(re.findall(r"^FAILED \S+::TestMutant::(\w+)", result.stdout, re.MULTILINE))
    missed = sorted(set(cases) - failed)
    assert not missed, (
        f"the mutant {name!r} ({base}) passed {missed}; these cases no longer catch it."
        f"\n{result.stdout[-3000:]}\n{result.stderr[-2000:]}"
    )
    assert result.returncode == 1, result.stdout[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("base", ["memory", "sqlite", "example"])
def test_the_same_cases_pass_without_a_fault(base: str) -> None:
    """The harness itself is sound: a fault-free wrapper passes every selected case."""
    result = run_contract(RUNNER, CONTROL.name, base, CONTROL.caught_by)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and "failed" not in result.stdout


def test_every_mutant_names_cases_that_exist() -> None:
    from psych_contract import StoreContract

    cases = {name for name in dir(StoreContract) if name.startswith("test_")}
    for mutant in MUTANTS:
        assert set(mutant.caught_by) <= cases, mutant.name
        assert any(base is not None for base in (mutant.memory, mutant.sqlite, mutant.example))
