"""Entry point of the ``psych`` console script."""

import argparse
import sys
from collections.abc import Sequence

from psych_runtime._version import __version__
from psych_runtime.cli import doctor
from psych_runtime.cli import new
from psych_runtime.cli import runs
from psych_runtime.cli import show
from psych_runtime.cli import skills
from psych_runtime.cli.command import Command

COMMANDS: tuple[Command, ...] = (
    new.COMMAND,
    doctor.COMMAND,
    runs.COMMAND,
    show.COMMAND,
    skills.COMMAND,
)
"""Every subcommand, in the order ``psych --help`` lists them."""


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
    for command in COMMANDS:
        command.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``psych`` with ``argv`` (default: the process arguments) and return the exit code.

    Usage errors exit through argparse with status 2, as with any argparse program.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        print(f"psych-runtime {__version__}")
        return 0
    for command in COMMANDS:
        if command.name == args.command:
            return command.run(args)
    parser.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
