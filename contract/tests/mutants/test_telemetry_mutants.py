"""The Telemetry contract fails every telemetry mutant, and passes the unchanged adapter.

All mutants run in one subprocess (``telemetry_contract_under_mutant.py``), each with
only the cases that must catch it selected by node id; the test names every pair that
passed. The cases drive Runs to their end and compare what was exported, so a mutant
they catch is caught on every run.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from contract.tests.mutants.telemetry_mutants import TELEMETRY_CONTROL
from contract.tests.mutants.telemetry_mutants import TELEMETRY_MUTANTS
from psych_contract import TelemetryContract

REPO = Path(__file__).resolve().parents[3]
RUNNER = Path(__file__).with_name("telemetry_contract_under_mutant.py")


def _run(pairs: list[tuple[str, str]]) -> subprocess.CompletedProcess[str]:
    names = sorted({name for name, _ in pairs})
    ids = [f"{RUNNER}::TestMutant::{case}[{name}]" for name, case in pairs]
    return subprocess.run(
        [sys.executable, "-m", "pytest", *ids, "-q", "-p", "no:cacheprovider", "--tb=line", "-rfE"],
        cwd=REPO,
        env={**os.environ, "PSYCH_TELEMETRY_MUTANTS": ",".join(names)},
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_the_contract_catches_every_telemetry_mutant() -> None:
    """Every case each mutant names fails against it (and none errors instead)."""
    pairs = [(mutant.name, case) for mutant in TELEMETRY_MUTANTS for case in mutant.caught_by]
    result = _run(pairs)
    failed = set(re.findall(r"^FAILED \S+::TestMutant::(\w+)\[([\w-]+)\]", result.stdout, re.M))
    missed = sorted((name, case) for name, case in pairs if (case, name) not in failed)
    assert not missed, (
        f"these cases no longer catch these mutants: {missed}"
        f"\n{result.stdout[-4000:]}\n{result.stderr[-2000:]}"
    )
    errored = re.findall(r"^ERROR \S+", result.stdout, re.M)
    assert not errored, result.stdout[-4000:]


@pytest.mark.slow
def test_the_same_cases_pass_for_the_unchanged_adapter() -> None:
    """The control (psych-otel as it is) passes every case the mutants are checked with."""
    result = _run([(TELEMETRY_CONTROL.name, case) for case in TELEMETRY_CONTROL.caught_by])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert f"{len(TELEMETRY_CONTROL.caught_by)} passed" in result.stdout


def test_every_telemetry_mutant_names_cases_that_exist() -> None:
    cases = {name for name in dir(TelemetryContract) if name.startswith("test_")}
    for mutant in TELEMETRY_MUTANTS:
        assert mutant.caught_by, mutant.name
        assert set(mutant.caught_by) <= cases, mutant.name
