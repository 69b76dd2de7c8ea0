"""The ``psych`` entry point: --version, the console script, and usage errors."""

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

from psych_runtime.cli.main import main

INSTALLED_VERSION = importlib.metadata.version("psych-runtime")


def test_version_flag_prints_the_distribution_version(capsys):
    assert main(["--version"]) == 0

    assert capsys.readouterr().out.strip() == f"psych-runtime {INSTALLED_VERSION}"


def test_the_installed_console_script_runs():
    script = Path(sys.executable).with_name("psych")
    assert script.exists(), f"no psych console script next to {sys.executable}"

    done = subprocess.run(
        [str(script), "--version"], capture_output=True, text=True, timeout=60, check=False
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"psych-runtime {INSTALLED_VERSION}"


def test_no_command_prints_usage_and_fails(capsys):
    assert main([]) == 2

    assert "usage: psych" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["run", "serve", "worker"])
def test_there_is_no_command_that_runs_a_worker(command, capsys):
    with pytest.raises(SystemExit) as caught:
        main([command])

    assert caught.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
