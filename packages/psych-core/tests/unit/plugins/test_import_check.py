"""``import_check``: a doctor check built from a module name and two messages."""

import sys
import types
from pathlib import Path

import pytest

import psych_runtime
from psych_runtime.adapters import DoctorCheck


def fake_driver_check(
    monkeypatch: pytest.MonkeyPatch, module: types.ModuleType | None, *, ok: str, missing: str
) -> DoctorCheck:
    """The check of a ``fake_psych_driver`` that imports as ``module`` (None: it fails)."""
    monkeypatch.setitem(sys.modules, "fake_psych_driver", module)
    return psych_runtime.adapters.import_check(
        "fake store", "fake_psych_driver", ok=ok, missing=missing
    )


def test_a_module_that_imports_passes_with_its_version(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("fake_psych_driver")
    module.__version__ = "4.2"  # type: ignore[attr-defined]
    check = fake_driver_check(
        monkeypatch, module, ok="fake_psych_driver {version} available", missing="never shown"
    )
    assert check.name == "fake store"
    assert check.run() == psych_runtime.adapters.DoctorResult(
        True, "fake_psych_driver 4.2 available"
    )


def test_a_module_without_a_version_reports_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("fake_psych_driver")
    check = fake_driver_check(monkeypatch, module, ok="version {version}", missing="never shown")
    assert check.run() == psych_runtime.adapters.DoctorResult(True, "version unknown")


def test_a_module_that_cannot_be_imported_fails_with_the_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    check = fake_driver_check(
        monkeypatch,
        None,
        ok="never shown",
        missing="cannot import it ({error}); pip install fake-psych",
    )
    result = check.run()
    assert result.ok is False
    assert result.detail == (
        "cannot import it (import of fake_psych_driver halted; None in sys.modules); "
        "pip install fake-psych"
    )


def test_the_module_is_imported_only_when_the_check_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "psych_lazy_probe.py").write_text('__version__ = "1.0"\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "psych_lazy_probe", raising=False)
    check = psych_runtime.adapters.import_check(
        "probe", "psych_lazy_probe", ok="probe {version}", missing="missing: {error}"
    )
    assert "psych_lazy_probe" not in sys.modules
    try:
        assert check.run() == psych_runtime.adapters.DoctorResult(True, "probe 1.0")
        assert "psych_lazy_probe" in sys.modules
    finally:
        sys.modules.pop("psych_lazy_probe", None)


def test_a_missing_module_reports_the_import_error() -> None:
    check = psych_runtime.adapters.import_check(
        "absent store", "psych_nonexistent_driver", ok="never shown", missing="missing: {error}"
    )
    assert check.run() == psych_runtime.adapters.DoctorResult(
        False, "missing: No module named 'psych_nonexistent_driver'"
    )
