"""How the OAuth client sends its HTTP requests.

The client never builds an HTTP client itself: the caller injects a factory, called
with the Scope of each request, so that every request can pass the caller's egress
policy. Redirects are never followed (a redirect would reach a host nobody checked),
answers are read up to a size limit, and a failure names the host and the kind of
failure only, never the URL's query or a body that might echo a secret.
"""

import json
from collections.abc import Callable
from collections.abc import Iterable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx2

from psych_mcp.oauth.errors import OAuthError
from psych_runtime import Scope

type HttpClientFactory = Callable[[Scope], AbstractAsyncContextManager[httpx2.AsyncClient]]
"""Gives the HTTP client for one request made on behalf of a Scope.

The client is entered with ``async with`` for each request and left right after. A
factory returning a new ``httpx2.AsyncClient`` (which closes itself on exit) is the
simplest; one sharing a pooled client returns a context manager that yields it without
closing it. Either way the client is where egress policy, timeouts and TLS settings
apply.
"""

MAX_ANSWER_BYTES = 1 << 20
"""The largest answer body read from an OAuth or metadata endpoint."""


@dataclass(frozen=True, slots=True)
class Answer:
    """An HTTP answer, fully read.

    Attributes:
        status: the status code.
        headers: the response headers.
        body: the body bytes.
    """

    status: int
    headers: httpx2.Headers
    body: bytes

    def json_object(self) -> dict[str, Any] | None:
        """The body as a JSON object, or None when it is not one."""
        try:
            value = json.loads(self.body)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


def host_of(url: str) -> str:
    """The host (and port) of ``url``, for messages."""
    return urlsplit(url).netloc or "?"


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every occurrence of each non-empty secret replaced."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    return text


class OAuthHttp:
    """Sends requests through the injected factory, without following redirects.

    Args:
        factory: gives the HTTP client for a Scope.
        max_answer_bytes: the largest body read; a longer answer is a ``transport``
            error.
    """

    def __init__(self, factory: HttpClientFactory, *, max_answer_bytes: int = MAX_ANSWER_BYTES):
        self._factory = factory
        self._max = max_answer_bytes

    async def send(
        self,
        scope: Scope,
        method: str,
        url: str,
        *,
        form: dict[str, str] | None = None,
        json_body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        """Send one request and read its answer.

        Args:
            scope: on whose behalf the request is made (passed to the factory).
            method: the HTTP method.
            url: the absolute URL.
            form: a form body (``application/x-www-form-urlencoded``).
            json_body: a JSON body.
            headers: extra request headers.

        Returns:
            The answer, whatever its status.

        Raises:
            OAuthError: ``transport`` when the request fails or the answer is too long.
        """
        all_headers = {"Accept": "application/json", **(headers or {})}
        try:
            async with (
                self._factory(scope) as client,
                client.stream(
                    method,
                    url,
                    data=form,
                    json=json_body,
                    headers=all_headers,
                    follow_redirects=False,
                ) as response,
            ):
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > self._max:
                        raise OAuthError(
                            "transport",
                            f"the answer from {host_of(url)} is longer than {self._max} bytes",
                        )
                return Answer(response.status_code, response.headers, bytes(body))
        except httpx2.HTTPError as exc:
            raise OAuthError(
                "transport", f"{method} request to {host_of(url)} failed ({type(exc).__name__})"
            ) from exc


__all__ = ["MAX_ANSWER_BYTES", "Answer", "HttpClientFactory", "OAuthHttp", "host_of", "redact"]
