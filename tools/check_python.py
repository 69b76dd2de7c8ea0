"""Refuse, in plain words, an interpreter older than Python 3.12.

Hatch runs this first when it creates an environment of the workspace
(``pre-install-commands`` in the root ``pyproject.toml``), with the environment's own
interpreter, before anything is resolved. Without it, an older Python meets a resolver
message about whichever package happens to be resolved first. Exit status 1 on an
interpreter that is too old.
"""

import sys

NEEDED = (3, 12)


def problem(version: tuple[int | str, ...], executable: str) -> str | None:
    """What to tell someone running ``executable`` at ``version``; None when it is new enough."""
    if (int(version[0]), int(version[1])) >= NEEDED:
        return None
    found = ".".join(str(part) for part in version[:3])
    return (
        f"This project needs Python {NEEDED[0]}.{NEEDED[1]} or newer; hatch made this "
        f"environment with Python {found} ({executable}).\n"
        "Remove that environment with `hatch env prune`, then run hatch under a newer "
        "Python: `python3.12 -m pip install hatch` and `python3.12 -m hatch run example`, "
        "or keep your hatch and name the interpreter: "
        "`HATCH_PYTHON=/path/to/python3.12 hatch run example`."
    )


def main() -> int:
    message = problem(tuple(sys.version_info), sys.executable)
    if message is None:
        return 0
    print(message, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
