"""Minting fresh identifiers (kept out of the core, which has no randomness)."""

import secrets
import time

from psych_runtime.core.ids import AttemptId
from psych_runtime.core.ids import EntryId
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.ids import WorkerId


def _token(prefix: str) -> str:
    # A millisecond timestamp prefix keeps ids roughly sortable by creation time,
    # which makes logs and database indexes friendlier; the random tail keeps them unique.
    return f"{prefix}_{int(time.time() * 1000):012x}{secrets.token_hex(8)}"


def new_run_id() -> RunId:
    """A fresh Run id."""
    return RunId(_token("run"))


def new_attempt_id() -> AttemptId:
    """A fresh Attempt id."""
    return AttemptId(_token("att"))


def new_worker_id() -> WorkerId:
    """A fresh Worker id."""
    return WorkerId(_token("wrk"))


def new_call_id() -> ToolCallId:
    """A fresh tool-call id, for calls whose model-given id cannot be used."""
    return ToolCallId(_token("call"))


def new_entry_id() -> EntryId:
    """A fresh queue-entry id."""
    return EntryId(_token("ent"))
