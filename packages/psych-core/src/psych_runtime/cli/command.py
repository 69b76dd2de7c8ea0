"""How a ``psych`` subcommand is declared, so the top-level parser registers each alike."""

import argparse
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Command:
    """One ``psych`` subcommand: its words on the command line and the code behind it.

    Attributes:
        name: The word that selects the command, as in ``psych NAME``.
        help: The one line shown for the command in ``psych --help``.
        description: The paragraph shown by ``psych NAME --help``.
        arguments: Adds the command's own options and positionals to its parser.
        run: Carries the command out on the parsed arguments and returns the exit code.
    """

    name: str
    help: str
    description: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]

    def register(self, commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
        """Add this command's parser to the top-level ``commands``."""
        self.arguments(commands.add_parser(self.name, help=self.help, description=self.description))
