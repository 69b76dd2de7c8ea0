"""Turning an HTTP tool call into a request, and its response into a tool result.

Everything here is deterministic and does no IO, so the rules a model's arguments go
through (URL templating, where leftover arguments travel, the schema check) and the
way a response is judged can be tested without a server. Sending the request is the
job of ``psych_runtime.tools.http.executor``, which owns the transport and the secret.

Arguments named by a ``{placeholder}`` in the URL fill it, percent-encoded so that a
value can never add a path segment or a query parameter of its own. Whatever is left
goes in a JSON body for POST, PUT and PATCH, and in the query string for GET and
DELETE, where a body would be ignored or refused by many servers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote
from urllib.parse import urlencode

from pydantic import JsonValue

from psych_runtime.core.json_schema import value_problems
from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.records import JsonObject
from psych_runtime.core.spec import HttpTool
from psych_runtime.tools.errors import ToolArgumentsInvalid
from psych_runtime.tools.errors import ToolCallFailed

if TYPE_CHECKING:
    import httpx

PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
"""A ``{name}`` in a URL template; the name is whatever lies between the braces."""

BODY_METHODS: frozenset[str] = frozenset({"POST", "PUT", "PATCH"})
"""Methods whose leftover arguments travel as a JSON body rather than a query string."""

EXCERPT_CHARS = 300
"""How much of an error response's body is quoted in the failure message."""

REDACTED = "[redacted]"
"""What replaces a credential that a server echoed back in its response."""

MIN_REDACTED_CHARS = 4
"""Secrets shorter than this are not searched for; redacting them would mangle text."""

_TRANSIENT_STATUSES = frozenset({408, 425, 429})


class HttpToolFailed(ToolCallFailed):
    """An HTTP tool call did not produce a result; recorded as an error for the model.

    Attributes:
        kind: the failure kind written to the log (``http_404``, ``timeout``...).
        transient: whether the same call could succeed later.
    """


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    """What to send for one call, before credentials are added.

    Attributes:
        method: the HTTP method from the Spec.
        url: the URL with placeholders filled and, for GET and DELETE, the leftover
            arguments appended as query parameters.
        headers: the Spec's fixed headers.
        body: the JSON body for POST, PUT and PATCH; None for the other methods.
    """

    method: str
    url: str
    headers: Mapping[str, str]
    body: JsonObject | None


def placeholders(url: str) -> tuple[str, ...]:
    """The placeholder names of a URL template, first occurrence first, without repeats."""
    return tuple(dict.fromkeys(match.strip() for match in PLACEHOLDER.findall(url)))


def http_tool_definition(tool: HttpTool) -> ToolDefinition:
    """The tool as a model is offered it, built from the Spec alone.

    When the Spec gives no input schema, one is derived from the URL's placeholders
    (each a required string), because a model cannot fill a placeholder it was never
    told about. A GET is annotated ``read-only``, a DELETE ``destructive`` and every
    other method ``write``, so an approval rule that targets writes cannot miss an
    HTTP tool.
    """
    schema: dict[str, JsonValue] = dict(tool.input_schema)
    if not schema:
        names = placeholders(tool.url)
        properties: dict[str, JsonValue] = {name: {"type": "string"} for name in names}
        required: list[JsonValue] = list(names)
        schema = {"type": "object", "properties": properties, "required": required}
    annotation = {"GET": "read-only", "DELETE": "destructive"}.get(tool.method, "write")
    return ToolDefinition(
        name=tool.name,
        description=tool.description,
        input_schema=schema,
        annotations=frozenset({annotation}),
    )


def _as_url_text(value: JsonValue) -> str | None:
    """A scalar argument as it is written in a URL; None for null, lists and objects."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return json.dumps(value)
    return None


def render_url(
    url: str, arguments: Mapping[str, JsonValue], *, tool: str = "http"
) -> tuple[str, frozenset[str]]:
    """Fill the URL's placeholders from ``arguments``.

    Every value is percent-encoded with nothing left safe, so ``a/b`` fills one path
    segment as ``a%2Fb`` and ``x&admin=1`` stays inside one query value. In the path,
    an empty value, ``.`` and ``..`` are refused: clients and servers collapse dot
    segments, so ``..`` would climb out of the path the Spec's author wrote.

    Args:
        url: the template from the Spec.
        arguments: the model's arguments.
        tool: the tool's name, for the error message.

    Returns:
        The rendered URL and the argument names it consumed.

    Raises:
        ToolArgumentsInvalid: a placeholder has no argument, or its argument is not
            a string, number or boolean.
    """
    problems: list[str] = []
    used: set[str] = set()
    outside = PLACEHOLDER.sub(lambda m: "_" * len(m.group(0)), url)
    query_start = outside.find("?") if "?" in outside else len(url)

    def fill(match: re.Match[str]) -> str:
        name = match.group(1).strip()
        if name not in arguments:
            problems.append(f"{name}: required (it fills {{{name}}} in the URL) but missing")
            return match.group(0)
        text = _as_url_text(arguments[name])
        if text is None:
            problems.append(f"{name}: must be a string, number or boolean to fill the URL")
            return match.group(0)
        if match.start() < query_start and text in {"", ".", ".."}:
            problems.append(f"{name}: {text!r} may not fill part of the URL path")
            return match.group(0)
        used.add(name)
        return quote(text, safe="")

    rendered = PLACEHOLDER.sub(fill, url)
    if problems:
        raise ToolArgumentsInvalid(tool, problems)
    return rendered, frozenset(used)


def query_pairs(arguments: Mapping[str, JsonValue]) -> list[tuple[str, str]]:
    """Arguments as query parameters, in the order given.

    A null is left out, a list of scalars repeats its key once per item, and anything
    nested is sent as compact JSON text, since a query string has no structure of its own.
    """
    pairs: list[tuple[str, str]] = []
    for key, value in arguments.items():
        if value is None:
            continue
        text = _as_url_text(value)
        if text is not None:
            pairs.append((key, text))
            continue
        items = [_as_url_text(item) for item in value] if isinstance(value, list) else [None]
        if all(item is not None for item in items):
            pairs.extend((key, item) for item in items if item is not None)
        else:
            pairs.append((key, json.dumps(value, separators=(",", ":"), ensure_ascii=False)))
    return pairs


def with_query(url: str, pairs: Sequence[tuple[str, str]]) -> str:
    """Append query parameters to ``url``, after any it already has, before a fragment."""
    if not pairs:
        return url
    base, hash_mark, fragment = url.partition("#")
    encoded = urlencode(pairs, quote_via=quote, safe="")
    if "?" not in base:
        joiner = "?"
    elif base.endswith(("?", "&")):
        joiner = ""
    else:
        joiner = "&"
    return f"{base}{joiner}{encoded}{hash_mark}{fragment}"


def prepare_request(tool: HttpTool, arguments: JsonObject) -> PreparedRequest:
    """Check the arguments and lay out the request they describe.

    Raises:
        ToolArgumentsInvalid: the arguments break the schema or leave a placeholder
            unfilled; every problem is listed.
    """
    problems = value_problems(arguments, tool.input_schema)
    try:
        url, used = render_url(tool.url, arguments, tool=tool.name)
    except ToolArgumentsInvalid as error:
        # One line per field: a placeholder the schema already reported stays quiet.
        reported = {problem.split(":", 1)[0] for problem in problems}
        problems.extend(p for p in error.problems if p.split(":", 1)[0] not in reported)
        used = frozenset()
        url = tool.url
    if problems:
        raise ToolArgumentsInvalid(tool.name, problems)
    rest = {key: value for key, value in arguments.items() if key not in used}
    if tool.method in BODY_METHODS:
        return PreparedRequest(tool.method, url, dict(tool.headers), rest)
    return PreparedRequest(
        tool.method, with_query(url, query_pairs(rest)), dict(tool.headers), None
    )


def redact(value: JsonValue, secret: str | None) -> JsonValue:
    """Replace every occurrence of ``secret`` in a JSON value's strings and keys.

    A server that echoes request headers back (debugging endpoints do) would otherwise
    put the credential in the log and in front of the model.
    """
    if secret is None or len(secret) < MIN_REDACTED_CHARS:
        return value
    if isinstance(value, str):
        return redact_text(value, secret)
    if isinstance(value, list):
        return [redact(item, secret) for item in value]
    if isinstance(value, dict):
        return {redact_text(key, secret): redact(item, secret) for key, item in value.items()}
    return value


def redact_text(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` replaced; see ``redact``."""
    if secret is None or len(secret) < MIN_REDACTED_CHARS:
        return text
    return text.replace(secret, REDACTED)


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) <= EXCERPT_CHARS:
        return flat
    return flat[: EXCERPT_CHARS - 3] + "..."


def interpret_response(
    response: httpx.Response, *, method: str, url: str, secret: str | None = None
) -> JsonValue:
    """The tool result of a 2xx response, or the failure any other status means.

    A JSON response is parsed; anything else (or JSON that does not parse) is returned
    as text, and an empty body as None. Size is not limited here: elision and offload
    deal with big results after the call.

    Raises:
        HttpToolFailed: the status was not 2xx; the kind is ``http_<status>`` and the
            message quotes the start of the body. 408, 425, 429 and 5xx are transient.
    """
    text = response.text
    status = response.status_code
    if 200 <= status < 300:
        if not text.strip():
            return None
        if _is_json(response.headers.get("content-type", "")):
            try:
                parsed: JsonValue = json.loads(text)
            except json.JSONDecodeError:
                return redact(text, secret)
            return redact(parsed, secret)
        return redact(text, secret)
    where = url.split("?", 1)[0]
    message = f"{method} {where} answered HTTP {status}"
    if response.reason_phrase:
        message += f" {response.reason_phrase}"
    location = response.headers.get("location")
    if 300 <= status < 400 and location:
        message += f"; redirects are not followed (Location: {location})"
    excerpt = _excerpt(text)
    if excerpt:
        message += f": {excerpt}"
    transient = status >= 500 or status in _TRANSIENT_STATUSES
    raise HttpToolFailed(f"http_{status}", redact_text(message, secret), transient=transient)


__all__ = [
    "BODY_METHODS",
    "EXCERPT_CHARS",
    "PLACEHOLDER",
    "REDACTED",
    "HttpToolFailed",
    "PreparedRequest",
    "http_tool_definition",
    "interpret_response",
    "placeholders",
    "prepare_request",
    "query_pairs",
    "redact",
    "redact_text",
    "render_url",
    "with_query",
]
