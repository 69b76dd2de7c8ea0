"""What the reducer tests share: the product's pinned values and the logs they start from."""

import json
from pathlib import Path

from psych_runtime.testing import LogBuilder

# The values as the product names them, kept in a data file beside these tests rather
# than imported, so a value renamed or dropped in the implementation fails here.
PINNED: dict[str, list[str]] = json.loads(
    Path(__file__).with_name("pinned_values.json").read_text()
)


def base() -> LogBuilder:
    """A Run admitted with its first Attempt started."""
    return LogBuilder().admitted().attempt()


def in_turn() -> LogBuilder:
    """``base`` with its first turn open."""
    return base().turn()
