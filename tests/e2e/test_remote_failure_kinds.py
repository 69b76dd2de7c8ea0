"""MCP servers and A2A peers report shared events with the shared words.

Every failure kind written in psych-mcp's and psych-a2a's sources is one of the core's
``FAILURE_KINDS`` or one of the few events only that protocol has, listed here with
why. A new kind for a shared event (``peer_error`` beside ``protocol_error``, say)
fails this test.
"""

import re
from pathlib import Path

import pytest

from psych_runtime.adapters import FAILURE_KINDS

ROOT = Path(__file__).resolve().parents[2]
WRITTEN = re.compile(r"(?:RemoteFailure|SourceCallFailed)\(\s*\"([a-z_]+)\"")
ONLY_THEIRS = {
    "psych-mcp": {
        # A person must approve OAuth access first; a call reports it as unauthorized.
        "authorization_required",
        "launch_failed",  # a stdio server's program cannot be found or started
    },
    "psych-a2a": {
        "card_unverified",  # an Agent Card whose signature does not hold
        "invalid_card",  # an Agent Card that does not parse
        "task_failed",  # the peer's task ended in one of A2A's own end states
        "task_canceled",
        "task_rejected",
    },
}


@pytest.mark.parametrize("package", sorted(ONLY_THEIRS))
def test_every_kind_a_remote_source_writes_is_a_shared_word_or_its_own(package: str) -> None:
    sources = (ROOT / "packages" / package / "src").rglob("*.py")
    written = {kind for path in sources for kind in WRITTEN.findall(path.read_text())}
    assert written, "the pattern found no failure at all: it no longer matches the code"
    assert written - set(FAILURE_KINDS) - ONLY_THEIRS[package] == set()
    assert not ONLY_THEIRS[package] & set(FAILURE_KINDS)
