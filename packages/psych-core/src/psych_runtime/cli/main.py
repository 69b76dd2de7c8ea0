"""Entry point of the ``psych`` console script."""

import argparse
import sys
from collections.abc import Callable, Sequence

from psych_runtime._version import __version__
from psych_runtime.cli import doctor, new, runs, show, skills


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for ``psych`` and its subcommands."""
    parser = argparse.ArgumentParser(
        prog="psych",
        description=(
            "Developer tooling for Psych Runtime. It scaffolds projects, reports on the "
            "installation and reads what Runs did; it never runs an agent."
        ),
    )
    parser.add_argument(
        "--version", action="store_true", help="print the installed psych-runtime version"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    new.add_parser(commands)
    doctor.add_parser(commands)
    runs.add_parser(commands)
    show.add_parser(commands)
    skills.add_parser(commands)
    return parser


_HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "new": new.run,
    "doctor": doctor.run,
    "runs": runs.run,
    "show": show.run,
    "skills": skills.run,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``psych`` with ``argv`` (default: the process arguments) and return the exit code.

    Usage errors exit through argparse with status 2, as with any argparse program.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        print(f"psych-runtime {__version__}")
        return 0
    handler = _HANDLERS.get(args.command or "")
    if handler is not None:
        return handler(args)
    parser.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
