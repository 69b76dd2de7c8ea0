"""``psych doctor``: what it reports and when it fails."""

import importlib
import importlib.metadata
import json
import sys
import textwrap

import pytest

from psych_runtime.cli.main import main
from psych_runtime.plugins import AUTOLOAD_ENV
from psych_runtime.plugins import DoctorCheck
from psych_runtime.plugins import DoctorResult
from psych_runtime.plugins import StoreBackend
from psych_runtime.plugins import hookimpl
from psych_runtime.plugins import register_plugin
from psych_runtime.plugins import unloaded_plugins

INSTALLED_VERSION = importlib.metadata.version("psych-runtime")


def plugin_with_check(result=None, *, raises=None, schemes=("acme",)):
    async def _open(url):
        raise AssertionError("doctor must not open stores")

    def check():
        if raises is not None:
            raise raises
        return result

    class Plugin:
        PSYCH_PLUGIN_API = 1

        @hookimpl
        def psych_register_stores(self, register):
            register(StoreBackend(name="acme", schemes=schemes, open=_open, package="acme-store"))

        @hookimpl
        def psych_doctor_checks(self, register):
            register(DoctorCheck("acme driver", check))

    return Plugin()


def load_installed_by_hand():
    """Register every installed plugin explicitly, as a program with autoload off does."""
    for record in unloaded_plugins():
        register_plugin(importlib.import_module(record.source.split(":")[0]), name=record.name)


def doctor_json(capsys, *extra):
    code = main(["doctor", "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def test_reports_the_real_installation(capsys):
    _, report = doctor_json(capsys)  # the exit code depends on every installed plugin

    assert {"name": "psych-runtime", "version": INSTALLED_VERSION} in report["distributions"]
    assert all(d["name"].startswith("psych-") for d in report["distributions"])
    [memory] = [p for p in report["plugins"] if p["name"] == "builtin"]
    assert memory["distribution"] == "psych-runtime"
    assert memory["version"] == INSTALLED_VERSION
    assert memory["store_schemes"] == ["memory"]
    assert memory["single_process_schemes"] == ["memory"]
    assert report["python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    assert report["plugin_autoload"] is True


def test_passing_checks_exit_zero(monkeypatch, capsys):
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    load_installed_by_hand()
    register_plugin(plugin_with_check(DoctorResult(True, "driver 1.2 importable")), name="acme")

    code, report = doctor_json(capsys)

    assert code == 0, [c for c in report["checks"] if not c["ok"]]
    assert report["ok"] is True
    assert report["plugin_autoload"] is False
    assert report["plugins"][0]["name"] == "builtin"
    assert report["plugins"][-1:] == [
        {
            "name": "acme",
            "source": report["plugins"][-1]["source"],
            "distribution": None,
            "version": None,
            "store_schemes": ["acme"],
            "blob_store_schemes": [],
            "single_process_schemes": [],
        }
    ]
    assert {
        "name": "acme driver",
        "plugin": "acme",
        "ok": True,
        "detail": "driver 1.2 importable",
    } in report["checks"]


def test_a_failing_check_exits_one_and_says_why(monkeypatch, capsys):
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    load_installed_by_hand()
    register_plugin(plugin_with_check(DoctorResult(False, "install acme-driver")), name="acme")

    code = main(["doctor"])

    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL acme driver [acme]: install acme-driver" in out
    assert "1 check(s) failed." in out


def test_a_check_that_raises_is_a_failure_not_a_crash(monkeypatch, capsys):
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    register_plugin(plugin_with_check(raises=RuntimeError("driver exploded")), name="acme")

    code, report = doctor_json(capsys)

    assert code == 1
    [check] = [c for c in report["checks"] if c["name"] == "acme driver"]
    assert check["ok"] is False
    assert "driver exploded" in check["detail"]


def test_a_check_returning_the_wrong_type_is_a_failure(monkeypatch, capsys):
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    register_plugin(plugin_with_check(result=True), name="acme")

    code, report = doctor_json(capsys)

    assert code == 1
    [check] = [c for c in report["checks"] if c["name"] == "acme driver"]
    assert "not a DoctorResult" in check["detail"]


def test_conflicting_schemes_are_a_failed_check(monkeypatch, capsys):
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    load_installed_by_hand()
    register_plugin(plugin_with_check(DoctorResult(True, "ok")), name="one")
    register_plugin(plugin_with_check(DoctorResult(True, "ok")), name="two")

    code, report = doctor_json(capsys)

    assert code == 1
    [failed] = [c for c in report["checks"] if not c["ok"]]
    assert failed["name"] == "store scheme acme"
    assert "'one'" in failed["detail"]
    assert "'two'" in failed["detail"]
    assert "refused" in failed["detail"]


@pytest.mark.parametrize("taken", ["sqlite", "memory"])
def test_a_plugin_claiming_a_taken_scheme_is_set_aside_and_named(monkeypatch, capsys, taken):
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    load_installed_by_hand()
    register_plugin(plugin_with_check(DoctorResult(True, "ok"), schemes=(taken,)), name="squatter")

    code, report = doctor_json(capsys)

    assert code == 1
    [failed] = [c for c in report["checks"] if not c["ok"]]
    assert failed["name"] == f"store scheme {taken}"
    assert "set aside the claim of plugin 'squatter'" in failed["detail"]


def test_an_incompatible_installed_plugin_fails_the_report(tmp_path, monkeypatch, capsys):
    module = "fake_doctor_incompatible_plugin"
    (tmp_path / f"{module}.py").write_text("PSYCH_PLUGIN_API = 7\n")
    info = tmp_path / "fake_doctor_dist-3.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-doctor-dist\nVersion: 3.0\n")
    (info / "entry_points.txt").write_text(
        textwrap.dedent(f"""\
            [psych_runtime]
            oldplugin = {module}
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module, raising=False)

    code = main(["doctor"])

    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL plugin oldplugin" in out
    assert "memory" in out  # the built-in backends are still listed
    assert "fake-doctor-dist 3.0" in out
    assert "= 7" in out
    assert f"psych-runtime {INSTALLED_VERSION}" in out


@pytest.mark.parametrize(
    "name", ["PSYCH_API_KEY", "PSYCH_DB_PASSWORD", "PSYCH_OAUTH_TOKEN", "PSYCH_client_secret"]
)
def test_secret_looking_variables_are_masked(monkeypatch, capsys, name):
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    load_installed_by_hand()
    monkeypatch.setenv(name, "s3cr3t-value")
    monkeypatch.setenv("PSYCH_REGION", "eu-west-1")
    monkeypatch.setenv("OTHER_SETTING", "not ours")

    code = main(["doctor"])
    text = capsys.readouterr().out
    _, report = doctor_json(capsys)

    assert code == 0
    assert "s3cr3t-value" not in text
    assert name in text
    assert "PSYCH_REGION=eu-west-1" in text
    assert "OTHER_SETTING" not in text
    assert report["environment"][name] != "s3cr3t-value"
    assert report["environment"]["PSYCH_REGION"] == "eu-west-1"
    assert report["environment"][AUTOLOAD_ENV] == "1"


def test_autoload_off_is_reported_and_the_built_in_backends_remain(monkeypatch, capsys):
    monkeypatch.setenv("PSYCH_DISABLE_PLUGIN_AUTOLOAD", "1")

    code = main(["doctor"])

    out = capsys.readouterr().out
    assert code == 1
    assert "Plugins (autoload off):" in out
    assert "stores: memory (single process)" in out
    assert "sqlite" not in out.split("Plugins (autoload off):")[1].split("Checks")[0]
    # The installed adapters are named as installed but not loaded, with the way out.
    checks = out.split("Checks:")[1]
    assert "FAIL plugin sqlite from psych-store-sqlite" in checks
    assert "installed but not loaded" in checks
    assert "register_plugin(importlib.import_module('psych_store_sqlite.plugin')" in checks
    assert "All checks passed." not in out
