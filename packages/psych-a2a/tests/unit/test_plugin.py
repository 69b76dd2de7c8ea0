"""The entry point, the registered tool source, the doctor check, and a cheap import."""

import subprocess
import sys

import pytest

import psych_a2a
from psych_a2a import A2ATools
from psych_a2a import plugin
from psych_contract.plugin import ToolSourcePluginContract
from psych_contract.plugin import modules_loaded_by
from psych_runtime.spec import A2APeer
from psych_runtime.spec import AgentSpec


class TestA2APlugin(ToolSourcePluginContract):
    name = "a2a"
    plugin = plugin
    distribution = "psych-a2a"
    capability = "a2a_peers"
    source_type = A2ATools
    spec = AgentSpec(
        name="caller",
        model="fake",
        a2a_peers=(A2APeer(name="billing", url="https://billing.example.com"),),
    )
    refusal = "A2A peers"
    doctor_check = "a2a sdk"


def test_psych_doctor_lists_the_plugin() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from psych_runtime.cli.main import main; main(['doctor'])"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "a2a (psych_a2a.plugin) from psych-a2a" in done.stdout, done.stdout + done.stderr
    assert "ok   a2a sdk [a2a]" in done.stdout


@pytest.mark.parametrize(
    "code",
    [
        "import psych_a2a",
        "import psych_a2a.plugin",
        "from psych_a2a import A2ATools; A2ATools()",
    ],
)
def test_loading_the_plugin_or_building_the_source_does_not_import_the_sdk(code: str) -> None:
    assert modules_loaded_by(code, ["a2a", "google.protobuf", "starlette", "jwt"]) == []


def test_the_public_names_load_on_first_access() -> None:
    for name in psych_a2a.__all__:
        assert getattr(psych_a2a, name) is not None
    assert set(dir(psych_a2a)) >= set(psych_a2a.__all__)
