"""A fresh copy of the repository, and an interactive shell to type documented commands into.

The documentation's shell blocks are meant for a person at a terminal: ``hatch shell``
starts a shell of its own inside the one they typed it into, ``cd`` and ``. activate``
change the shell they are typed into, and the commands after them run there. So the
blocks are typed, line by line, into an interactive ``bash`` on a pseudo-terminal, the
way a person would, and each line's exit status is read back from the shell itself.
"""

import contextlib
import fcntl
import itertools
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_QUIET_SECONDS = 3.0

_ANSI = re.compile(
    r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[=>()][0-9A-Za-z]?|\r"
)


def repository_files(root: Path = ROOT) -> list[str]:
    """The files a clone of the repository would hold: tracked, and new ones not ignored."""
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    return sorted(name for name in listed.split("\0") if name and (root / name).is_file())


def fresh_copy(destination: Path, root: Path = ROOT) -> set[str]:
    """Copy the repository's files (as a clone would have them) into ``destination``.

    Returns:
        The files copied, relative to ``destination``: its pristine content.
    """
    files = repository_files(root)
    for name in files:
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target)
    return set(files)


def restore(copy: Path, files: set[str]) -> None:
    """Remove from ``copy`` everything that is not one of ``files`` (its pristine content).

    Commands may write files (a generated project, a virtualenv, wheels); the next
    document starts from the copy as it was made. Files the commands changed would not
    be put back, but the documented commands change none.
    """
    for folder, dirs, names in os.walk(copy, topdown=False):
        here = Path(folder)
        for name in names + [d for d in dirs if (here / d).is_symlink()]:
            path = here / name
            if path.relative_to(copy).as_posix() not in files:
                path.unlink()
        if here != copy and not any(here.iterdir()):
            here.rmdir()


def fresh_environment() -> dict[str, str]:
    """This process's environment as a new terminal would have it.

    The tests run inside the development environment (``hatch run``), whose variables
    and ``PATH`` entries a newcomer's terminal would not have: the active virtualenv,
    hatch's own variables, and the interpreter directories pyenv puts in front while it
    runs a command. Test-suite switches (``PSYCH_*``, ``PYTEST_*``) and API keys go too.
    """
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("HATCH_", "PSYCH_", "PYTEST_", "VIRTUAL_ENV", "PYTHON"))
        and not name.endswith("API_KEY")
        and name not in {"PYENV_VERSION", "UV_PROJECT_ENVIRONMENT", "PIP_REQUIRE_VIRTUALENV"}
    }
    pyenv = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    dropped = (
        sys.prefix,
        os.environ.get("VIRTUAL_ENV") or sys.prefix,
        f"{pyenv}/versions/",
        f"{pyenv}/libexec",
        f"{pyenv}/plugins/",
    )
    kept: list[str] = []
    for entry in env.get("PATH", "").split(os.pathsep):
        wanted = entry.endswith("/shims") or not entry.startswith(dropped)
        if wanted and entry and entry not in kept:
            kept.append(entry)
    env["PATH"] = os.pathsep.join(kept)
    env.setdefault("TERM", "xterm")
    env.setdefault("LANG", "C.UTF-8")
    return env


class CommandFailed(AssertionError):
    """A documented command exited with a non-zero status, or never finished."""


@dataclass
class Terminal:
    """An interactive ``bash`` on a pseudo-terminal, typed into one line at a time.

    Attributes:
        cwd: where the shell starts.
        env: its environment.
        typed: every line typed so far, for failure messages.
        timings: each command that ended, and the seconds it took.
    """

    cwd: Path
    env: dict[str, str]
    typed: list[str] = field(default_factory=list)
    timings: list[tuple[str, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        primary, secondary = os.openpty()
        # A wide terminal, so long command lines and hatch's status lines do not wrap.
        fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 240, 0, 0))
        self._process = subprocess.Popen(
            ["bash", "--noprofile", "--norc", "-i"],
            stdin=secondary,
            stdout=secondary,
            stderr=secondary,
            cwd=self.cwd,
            env=self.env,
            start_new_session=True,
        )
        os.close(secondary)
        self._fd = primary
        self._output = bytearray()
        self._numbers = itertools.count(1)

    def output(self, start: int = 0) -> str:
        """What the terminal showed from byte ``start`` on, without escape sequences."""
        return _ANSI.sub("", self._output[start:].decode(errors="replace"))

    def run(self, command: str, *, timeout: float = 300.0) -> str:
        """Type ``command`` and wait for it to end; what it printed.

        After the command, a second line echoes its exit status with a number the
        echoed keystrokes cannot contain (an arithmetic expansion), so the status is
        read from the shell that ran the command, even one started by the command
        (``hatch shell``).

        Raises:
            CommandFailed: the status is not 0, or nothing came back within ``timeout``.
        """
        number = next(self._numbers)
        start = len(self._output)
        began = time.monotonic()
        self.typed.append(command)
        self._type(command)
        marker = f'echo "<<$?:{number}:$((6 * 7))>>"'
        self._type(marker)
        finished = re.compile(rf"<<(\d+):{number}:42>>")
        deadline = time.monotonic() + timeout
        seen, quiet_since = len(self._output), time.monotonic()
        while True:
            text = self.output(start)
            found = finished.search(text)
            if found is not None:
                shown = text[: found.start()]
                self.timings.append((command, time.monotonic() - began))
                if found.group(1) != "0":
                    raise CommandFailed(
                        f"`{command}` exited with status {found.group(1)}:\n{shown[-6000:]}"
                    )
                return shown
            now = time.monotonic()
            if len(self._output) != seen:
                seen, quiet_since = len(self._output), now
            elif now - quiet_since > _QUIET_SECONDS:
                # A program that takes the terminal over (hatch shell puts it in raw mode)
                # discards what was typed ahead: type the status line again. Extra copies
                # print a number this call no longer waits for.
                self._type(marker)
                quiet_since = now
            left = deadline - now
            if left <= 0 or not self._read(min(left, 0.5)):
                raise CommandFailed(f"`{command}` did not finish:\n{text[-6000:]}")

    def _type(self, line: str) -> None:
        os.write(self._fd, (line + "\n").encode())

    def _read(self, seconds: float) -> bool:
        """Collect what the terminal printed within ``seconds``; False once it is closed."""
        ready, _, _ = select.select([self._fd], [], [], seconds)
        if not ready:
            return True
        try:
            chunk = os.read(self._fd, 1 << 16)
        except OSError:
            return False
        self._output += chunk
        return bool(chunk)

    def close(self) -> None:
        """Leave every shell typed into (``hatch shell`` nests one), then end the rest."""
        for _ in range(3):
            if self._process.poll() is not None:
                break
            with contextlib.suppress(OSError):
                self._type("exit")
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and self._read(0.2) and self._process.poll() is None:
                pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._process.pid, signal.SIGKILL)
        self._process.wait(timeout=30)
        os.close(self._fd)
