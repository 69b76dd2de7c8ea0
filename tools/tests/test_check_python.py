"""tools/check_python.py: the interpreter check hatch runs before it resolves the workspace."""

import subprocess
import sys

from tools import check_python


def test_an_interpreter_older_than_3_12_is_told_so_in_plain_words() -> None:
    message = check_python.problem((3, 11, 7, "final", 0), "/envs/x/bin/python")
    assert message is not None
    assert message.startswith("This project needs Python 3.12 or newer")
    assert "Python 3.11.7 (/envs/x/bin/python)" in message
    assert "hatch env prune" in message


def test_3_12_and_newer_pass() -> None:
    for version in ((3, 12, 0), (3, 13, 1), (4, 0, 0)):
        assert check_python.problem(version, "python") is None


def test_the_script_exits_zero_on_this_interpreter() -> None:
    done = subprocess.run(
        [sys.executable, "tools/check_python.py"], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stderr) == (0, "")
