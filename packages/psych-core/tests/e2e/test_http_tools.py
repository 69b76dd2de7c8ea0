"""HTTP tools end to end: Spec data, a real server on 127.0.0.1, FakeModel, real Workers.

Every request goes through ``HttpTransport`` (and so its ``EgressPolicy``); the server
records what actually arrived on the socket, so each test checks the wire as well as
the log.
"""

import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import unquote

import pytest

import psych_runtime
from psych_runtime import AgentSpec
from psych_runtime import EgressPolicy
from psych_runtime import HttpTool
from psych_runtime import HttpTransport
from psych_runtime import ModelRef
from psych_runtime import RunId
from psych_runtime import SecretResolver
from psych_runtime import StaticSecretResolver
from psych_runtime import TerminalState
from psych_runtime import ToolOutcome
from psych_runtime import session
from psych_runtime.records import Record
from psych_runtime.records import ToolCallFinished
from psych_runtime.records import ToolCallStarted
from psych_runtime.records import ToolFailure
from psych_runtime.records import record_to_json
from psych_runtime.runtime.prompt import withheld_advisory
from psych_runtime.testing import FakeModel

from ..support.http_tool_server import Answer
from ..support.http_tool_server import Handler
from ..support.http_tool_server import Seen
from ..support.http_tool_server import ToolServer
from ..support.http_tool_server import serve_tool_api
from .conftest import crash_once
from .conftest import run_once
from .conftest import types

LOCAL = EgressPolicy(allow_hosts=frozenset({"127.0.0.1"}))
SECRET = "s3cr3t-bearer-7f1c9e2a"
ORDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}, "verbose": {"type": "boolean"}},
    "required": ["order_id"],
}

# The order lookup three tests offer, each at its own path.
GET_ORDER: dict[str, Any] = {
    "name": "get_order",
    "description": "Look up an order by id.",
    "method": "GET",
}


def _spec(*tools: HttpTool) -> AgentSpec:
    return AgentSpec(
        name="support",
        instructions="Help the customer.",
        model=ModelRef(model="fake-standard"),
        tools=tools,
    )


@asynccontextmanager
async def _api(
    handler: Handler, policy: EgressPolicy = LOCAL
) -> AsyncIterator[tuple[ToolServer, HttpTransport]]:
    """A server on loopback and a transport whose policy is ``policy``."""
    async with serve_tool_api(handler) as server, HttpTransport(policy=policy) as http:
        yield server, http


async def _run(
    spec: AgentSpec,
    model: FakeModel,
    *,
    http: HttpTransport | None,
    secrets: SecretResolver | None = None,
) -> tuple[RunId, list[Record]]:
    options = {"http": http, "secrets": secrets}
    _, run_id, log = await run_once(spec, model, message="hi", runtime_options=options)
    return run_id, log


async def _served(
    handler: Handler,
    model: FakeModel,
    path: str,
    *,
    policy: EgressPolicy = LOCAL,
    secrets: SecretResolver | None = None,
    **tool: Any,
) -> tuple[ToolServer, list[Record]]:
    """One Run of an agent with one HTTP tool, ``tool``, served by ``handler`` at ``path``."""
    async with _api(handler, policy) as (server, http):
        spec = _spec(HttpTool(url=server.base_url + path, **tool))
        _, log = await _run(spec, model, http=http, secrets=secrets)
    return server, log


def _started(log: list[Record]) -> list[ToolCallStarted]:
    return [r for r in log if isinstance(r, ToolCallStarted)]


def _finished(log: list[Record]) -> list[ToolCallFinished]:
    return [r for r in log if isinstance(r, ToolCallFinished)]


def _failure_of_the_call(log: list[Record]) -> ToolFailure:
    """The failure of the Run's one tool call, which must have failed."""
    [finished] = _finished(log)
    assert finished.outcome is ToolOutcome.ERROR
    assert finished.failure is not None
    return finished.failure


def _completed(log: list[Record]) -> bool:
    last = log[-1]
    return last.type == "run_settled" and last.state is TerminalState.COMPLETED


# --- calls that succeed ------------------------------------------------------------------


async def test_a_get_fills_the_path_and_sends_the_other_arguments_as_query() -> None:
    def handler(seen: Seen) -> Answer:
        order = unquote(seen.path.rsplit("/", 1)[-1])
        return Answer(body={"order": order, "status": "shipped", "query": seen.query})

    model = (
        FakeModel()
        .turn(tool_calls=[("get_order", {"order_id": "A 1/2", "verbose": True})])
        .turn(text="It has shipped.")
    )
    server, log = await _served(
        handler,
        model,
        "/orders/{order_id}?expand=lines",
        **GET_ORDER,
        input_schema=ORDER_SCHEMA,
    )

    [seen] = server.requests
    assert seen.method == "GET"
    assert seen.target == "/orders/A%201%2F2?expand=lines&verbose=true"
    assert seen.body == b""
    expected = {
        "order": "A 1/2",
        "status": "shipped",
        "query": {"expand": ["lines"], "verbose": ["true"]},
    }
    [finished] = _finished(log)
    assert finished.outcome is ToolOutcome.OK
    assert finished.result == expected
    # A GET may be repeated after a crash, and that is stamped at call time.
    [started] = _started(log)
    assert started.safe_to_retry is True
    # The model was offered the tool exactly as the Spec describes it...
    [offered] = [d for d in model.requests[0].tools if d.name == "get_order"]
    assert offered.description == "Look up an order by id."
    assert offered.input_schema == ORDER_SCHEMA
    assert offered.annotations == {"read-only"}
    # ...and then saw the parsed result.
    [message] = [m for m in model.requests[1].messages if m.role == "tool"]
    assert json.loads(message.content) == expected
    assert _completed(log)


async def test_a_post_sends_a_json_body_and_the_resolved_bearer_credential(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)

    def handler(seen: Seen) -> Answer:
        if seen.headers.get("authorization") != f"Bearer {SECRET}":
            return Answer(401, {"error": "bad or missing token"})
        # Echo the header back, as debugging endpoints do: it must not reach the log.
        echo = {"authorization": seen.headers["authorization"]}
        return Answer(201, {"ticket": "T-1", "received": seen.json, "echo": echo})

    arguments = {"customer": "c-9", "subject": "Broken lid", "priority": 2}
    model = FakeModel().turn(tool_calls=[("open_ticket", arguments)]).turn(text="Ticket T-1.")
    server, log = await _served(
        handler,
        model,
        "/customers/{customer}/tickets",
        secrets=StaticSecretResolver({"helpdesk": SECRET}),
        name="open_ticket",
        description="Open a support ticket.",
        method="POST",
        headers={"X-Client": "psych-tests"},
        credential="helpdesk",
    )

    [seen] = server.requests
    assert seen.method == "POST"
    assert seen.target == "/customers/c-9/tickets"
    assert seen.headers["authorization"] == f"Bearer {SECRET}"
    assert seen.headers["x-client"] == "psych-tests"
    assert seen.headers["content-type"] == "application/json"
    assert seen.json == {"subject": "Broken lid", "priority": 2}
    [finished] = _finished(log)
    assert finished.outcome is ToolOutcome.OK
    assert isinstance(finished.result, dict)
    assert finished.result["ticket"] == "T-1"
    assert finished.result["echo"] == {"authorization": "Bearer [redacted]"}
    [started] = _started(log)
    assert started.safe_to_retry is False
    assert model.requests[0].tools[0].annotations == {"write"}
    # The secret is nowhere: not in any record, not in what the model saw, not in logs.
    for record in log:
        assert SECRET.encode() not in record_to_json(record)
    for request in model.requests:
        assert SECRET not in request.model_dump_json()
    assert caplog.records, "expected the HTTP client to log something at DEBUG"
    for entry in caplog.records:
        assert SECRET not in entry.getMessage()
    assert _completed(log)


async def test_session_passes_the_transport_and_secrets_to_its_runtime() -> None:
    def handler(seen: Seen) -> Answer:
        return Answer(body={"auth": seen.headers.get("authorization") == f"Bearer {SECRET}"})

    async with _api(handler) as (server, http):
        tool = HttpTool(
            name="whoami",
            description="Who am I?",
            url=server.base_url + "/me",
            method="GET",
            credential="helpdesk",
        )
        model = FakeModel().turn(tool_calls=[("whoami", {})]).turn(text="Done.")
        secrets = StaticSecretResolver({"helpdesk": SECRET})
        async with session(
            model, runtime=psych_runtime.RuntimeSettings(http=http, secrets=secrets)
        ) as s:
            view = await s.ask(_spec(tool), "who am I?", timeout=10)
            log = await psych_runtime.read_log(s.store, view.run_id, scope=s.scope)
    assert view.finished
    [finished] = _finished(log)
    assert finished.result == {"auth": True}


# --- calls that fail, as data for the model -----------------------------------------------


async def test_an_error_status_is_handed_to_the_model_as_a_failure() -> None:
    def handler(seen: Seen) -> Answer:
        return Answer(404, {"error": "no such order: Z9"})

    model = (
        FakeModel()
        .turn(tool_calls=[("get_order", {"order_id": "Z9"})])
        .turn(text="That order does not exist.")
    )
    server, log = await _served(
        handler,
        model,
        "/orders/{order_id}",
        **GET_ORDER,
    )

    assert len(server.requests) == 1
    failure = _failure_of_the_call(log)
    assert failure.kind == "http_404"
    assert failure.transient is False
    assert "no such order: Z9" in failure.message
    [message] = [m for m in model.requests[1].messages if m.role == "tool"]
    assert message.is_error
    assert "404" in message.content and "no such order: Z9" in message.content
    assert _completed(log)


async def test_without_a_transport_the_call_fails_and_the_run_carries_on() -> None:
    tool = HttpTool(name="ping", description="Ping.", url="https://api.example.com/ping")
    model = FakeModel().turn(tool_calls=[("ping", {})]).turn(text="Could not reach it.")
    _, log = await _run(_spec(tool), model, http=None)
    failure = _failure_of_the_call(log)
    assert failure.kind == "http_transport_required"
    assert "HttpTransport" in failure.message
    assert _completed(log)


async def test_a_server_slower_than_the_tools_timeout_fails_the_call_as_transient() -> None:
    model = FakeModel().turn(tool_calls=[("slow", {})]).turn(text="It timed out.")
    started = time.monotonic()
    server, log = await _served(
        lambda seen: Answer(body="late", delay=5.0),
        model,
        "/slow",
        name="slow",
        description="Slow.",
        method="GET",
        timeout_seconds=0.3,
    )
    elapsed = time.monotonic() - started
    assert len(server.requests) == 1
    [finished] = _finished(log)
    assert finished.failure is not None
    assert finished.failure.kind == "timeout"
    assert finished.failure.transient is True
    assert finished.duration_seconds is not None and finished.duration_seconds < 2.0
    assert elapsed < 4.0
    assert _completed(log)


async def test_a_refused_connection_fails_the_call_as_transient() -> None:
    async with serve_tool_api(lambda seen: Answer(body="ok")) as server:
        gone = server.base_url
    # The server is closed now, so nothing listens on its port any more.
    async with HttpTransport(policy=LOCAL) as http:
        tool = HttpTool(name="ping", description="Ping.", url=gone + "/ping", method="GET")
        model = FakeModel().turn(tool_calls=[("ping", {})]).turn(text="Unreachable.")
        _, log = await _run(_spec(tool), model, http=http)
    failure = _failure_of_the_call(log)
    assert failure.kind == "connection_error"
    assert failure.transient is True
    assert "/ping" in failure.message
    assert _completed(log)


TICKET: dict[str, Any] = {
    "path": "/tickets",
    "name": "open_ticket",
    "description": "Open a ticket.",
    "credential": "helpdesk",
}


@pytest.mark.parametrize(
    ("call", "served", "kind", "fragment"),
    [
        # The default policy refuses loopback and private addresses.
        pytest.param(
            ("ping", {}),
            {
                "path": "/ping",
                "policy": EgressPolicy(),
                "name": "ping",
                "description": "Ping.",
                "method": "GET",
            },
            "egress_denied",
            "127.0.0.1",
            id="a-host-the-egress-policy-refuses",
        ),
        pytest.param(
            ("open_ticket", {}),
            {**TICKET, "secrets": StaticSecretResolver({"other": "x" * 12})},
            "missing_credential",
            "'helpdesk'",
            id="a-credential-the-resolver-does-not-hold",
        ),
        pytest.param(
            ("open_ticket", {}),
            {**TICKET, "secrets": None},
            "missing_credential",
            "'helpdesk'",
            id="a-credential-with-no-resolver",
        ),
        pytest.param(
            ("get_order", {"order_id": 42}),
            {"path": "/orders/{order_id}", **GET_ORDER, "input_schema": ORDER_SCHEMA},
            "invalid_arguments",
            "order_id",
            id="arguments-that-break-the-schema",
        ),
    ],
)
async def test_a_call_refused_before_sending_never_reaches_the_server(
    call: tuple[str, dict[str, Any]], served: dict[str, Any], kind: str, fragment: str
) -> None:
    model = FakeModel().turn(tool_calls=[call]).turn(text="It could not be done.")
    server, log = await _served(lambda seen: Answer(body="ok"), model, **served)
    assert server.requests == []
    failure = _failure_of_the_call(log)
    assert failure.kind == kind
    assert fragment in failure.message
    assert _completed(log)


async def test_a_failing_http_tool_is_withheld_like_any_other_tool() -> None:
    model = FakeModel()
    for region in ("eu", "us", "ap"):
        model.turn(tool_calls=[("status_page", {"region": region})])
    model.turn(text="The status page is down.")
    server, log = await _served(
        lambda seen: Answer(503, "down for maintenance"),
        model,
        "/status/{region}",
        name="status_page",
        description="Read the status page.",
        method="GET",
    )
    assert len(server.requests) == 3
    assert [f.failure.kind for f in _finished(log) if f.failure] == ["http_503"] * 3
    offered = [[d.name for d in request.tools] for request in model.requests]
    assert offered[:3] == [["status_page"]] * 3
    assert offered[3] == []
    advisory = withheld_advisory("status_page", 3)
    assert advisory in (model.requests[3].messages[0].content or "")
    calls = [r for r in log if r.type == "model_call_started"]
    assert calls[-1].tool_names == ()
    assert _completed(log)


# --- crash recovery ---------------------------------------------------------------------


async def _crash_mid_call(tool: HttpTool, http: HttpTransport) -> tuple[list[Record], list[Record]]:
    """Kill the Attempt just before the call's result is written, then recover it."""
    model = FakeModel().turn(tool_calls=[(tool.name, {"order_id": "A1"})]).turn(text="Done.")
    recovery = await crash_once(
        _spec(tool), model, runtime_options={"http": http}, crash_before="tool_call_finished"
    )
    return recovery.crashed_log, recovery.final_log


@pytest.mark.parametrize(
    ("method", "requests", "outcome"),
    [("GET", 2, ToolOutcome.OK), ("POST", 1, ToolOutcome.UNKNOWN)],
)
async def test_after_a_crash_only_a_get_is_sent_again(
    method: str, requests: int, outcome: ToolOutcome
) -> None:
    async with _api(lambda seen: Answer(body={"status": "shipped"})) as (server, http):
        tool = HttpTool(
            name="order",
            description="An order.",
            url=server.base_url + "/orders/{order_id}",
            method=method,  # type: ignore[arg-type]
        )
        crashed, final = await _crash_mid_call(tool, http)
    assert "tool_call_finished" not in types(crashed)
    assert len(server.requests) == requests
    [finished] = _finished(final)
    assert finished.outcome is outcome
    if outcome is ToolOutcome.OK:
        assert finished.result == {"status": "shipped"}
    else:
        assert finished.failure is not None and finished.failure.kind == "orphaned"
    assert _completed(final)
