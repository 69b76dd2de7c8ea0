"""Turning the argument text a model wrote into an object the log can keep.

Arguments must be a JSON object every store can keep as it is: no lone surrogate
(raw, or written as the JSON escape for U+D800), no non-finite number, no nesting
deeper than ``MAX_JSON_DEPTH``. Anything else is the model's malformed request,
refused as data, never a reason for the Run to fail.
"""

import asyncio
import json

from psych_runtime.core.records import JsonObject
from psych_runtime.core.storable import MAX_JSON_DEPTH
from psych_runtime.core.storable import unstorable

_INLINE_ARGUMENT_CHARS = 16 * 1024
"""Argument text up to this size is parsed and checked on the event loop; longer text
in a worker thread, so a large argument never holds up the heartbeat or other Runs."""


async def read_arguments(raw: str) -> tuple[JsonObject | None, str | None]:
    """``parse_arguments``, moved off the event loop for large argument text."""
    if len(raw) <= _INLINE_ARGUMENT_CHARS:
        return parse_arguments(raw)
    return await asyncio.to_thread(parse_arguments, raw)


def parse_arguments(raw: str) -> tuple[JsonObject | None, str | None]:
    """The arguments as an object, or why they cannot be used (said to the model)."""
    text = raw.strip() or "{}"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        return None, f"the arguments are not valid JSON ({error.msg} at position {error.pos})"
    except RecursionError:
        return None, f"the arguments nest deeper than the {MAX_JSON_DEPTH} levels allowed"
    if not isinstance(value, dict):
        return None, "the arguments must be a JSON object"
    problem = unstorable(value)
    if problem is not None:
        return None, f"the arguments cannot be used: {problem.replace('$', 'arguments', 1)}"
    return value, None
