"""Short, stable fingerprints of JSON-like values.

The repetition guard compares calls and answers across Attempts and processes, so the
fingerprint must not depend on dict ordering, object identity or the process's hash
seed: it hashes a canonical JSON text instead.
"""

import hashlib
import json

from pydantic import JsonValue

DIGEST_LENGTH = 16
"""Hex characters kept; enough to make an accidental collision within a Run negligible."""


def json_digest(value: object) -> str:
    """Fingerprint a JSON-like value: SHA-256 of its sorted-key compact JSON.

    Values JSON cannot express (datetimes, decimals) are rendered with ``str`` rather
    than refused, because a fingerprint must never be the reason a fold fails.
    """
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_LENGTH]


def call_digest(tool: str, arguments: JsonValue) -> str:
    """Fingerprint one call: the tool's name together with its arguments."""
    return json_digest({"tool": tool, "arguments": arguments})


def answer_digest(result: JsonValue, blob_key: str | None = None) -> str:
    """Fingerprint one answer; an offloaded result is known by its blob key."""
    if blob_key is not None:
        return json_digest({"blob_key": blob_key})
    return json_digest({"result": result})


__all__ = ["DIGEST_LENGTH", "answer_digest", "call_digest", "json_digest"]
