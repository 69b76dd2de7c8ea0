"""HTTP tools end to end: Spec data, a real server on 127.0.0.1, FakeModel, real Workers.

Every request goes through ``HttpTransport`` (and so its ``EgressPolicy``); the server
records what actually arrived on the socket, so each test checks the wire as well as
the log.
"""

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import unquote

import pytest

import psych_runtime
from psych_runtime import (
    AgentSpec,
    EgressPolicy,
    HttpTool,
    HttpTransport,
    InMemoryStore,
    ModelRef,
    RunId,
    Runtime,
    SecretResolver,
    StaticSecretResolver,
    TerminalState,
    ToolOutcome,
    ToolRegistry,
    Worker,
    dispatch,
    publish,
    session,
)
from psych_runtime.records import (
    Record,
    ToolCallFinished,
    ToolCallStarted,
    record_to_json,
)
from psych_runtime.runtime.prompt import withheld_advisory
from psych_runtime.testing import CrashingStore, FakeModel, settled_log, worker_in_background

from ..support.http_tool_server import Answer, Handler, Seen, ToolServer, serve_tool_api
from .conftest import ACME, FAST, types

LOCAL = EgressPolicy(allow_hosts=frozenset({"127.0.0.1"}))
SECRET = "s3cr3t-bearer-7f1c9e2a"
ORDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}, "verbose": {"type": "boolean"}},
    "required": ["order_id"],
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


@asynccontextmanager
async def _worker(
    store: InMemoryStore,
    model: FakeModel,
    *,
    http: HttpTransport | None,
    secrets: SecretResolver | None = None,
) -> AsyncIterator[Worker]:
    runtime = Runtime(
        store, model, ToolRegistry(), retry_base_seconds=0.01, http=http, secrets=secrets
    )
    async with worker_in_background(Worker(store, runtime, **FAST)) as worker:
        yield worker


async def _run(
    spec: AgentSpec,
    model: FakeModel,
    *,
    http: HttpTransport | None,
    secrets: SecretResolver | None = None,
) -> tuple[RunId, list[Record]]:
    store = InMemoryStore()
    version = await publish(store, spec, scope=ACME)
    async with _worker(store, model, http=http, secrets=secrets):
        run = await dispatch(store, version, "hi", scope=ACME)
        log = await settled_log(store, run.run_id)
    return run.run_id, log


def _started(log: list[Record]) -> list[ToolCallStarted]:
    return [r for r in log if isinstance(r, ToolCallStarted)]


def _finished(log: list[Record]) -> list[ToolCallFinished]:
    return [r for r in log if isinstance(r, ToolCallFinished)]


def _completed(log: list[Record]) -> bool:
    last = log[-1]
    return last.type == "run_settled" and last.state is TerminalState.COMPLETED


# --- calls that succeed ------------------------------------------------------------------


async def test_a_get_fills_the_path_and_sends_the_other_arguments_as_query() -> None:
    def handler(seen: Seen) -> Answer:
        order = unquote(seen.path.rsplit("/", 1)[-1])
        return Answer(body={"order": order, "status": "shipped", "query": seen.query})

    async with _api(handler) as (server, http):
        tool = HttpTool(
            name="get_order",
            description="Look up an order by id.",
            url=server.base_url + "/orders/{order_id}?expand=lines",
            method="GET",
            input_schema=ORDER_SCHEMA,
        )
        model = (
            FakeModel()
            .turn(tool_calls=[("get_order", {"order_id": "A 1/2", "verbose": True})])
            .turn(text="It has shipped.")
        )
        _, log = await _run(_spec(tool), model, http=http)

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

    async with _api(handler) as (server, http):
        tool = HttpTool(
            name="open_ticket",
            description="Open a support ticket.",
            url=server.base_url + "/customers/{customer}/tickets",
            method="POST",
            headers={"X-Client": "psych-tests"},
            credential="helpdesk",
        )
        arguments = {"customer": "c-9", "subject": "Broken lid", "priority": 2}
        model = FakeModel().turn(tool_calls=[("open_ticket", arguments)]).turn(text="Ticket T-1.")
        secrets = StaticSecretResolver({"helpdesk": SECRET})
        _, log = await _run(_spec(tool), model, http=http, secrets=secrets)

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

    async with _api(handler) as (server, http):
        tool = HttpTool(
            name="get_order",
            description="Look up an order by id.",
            url=server.base_url + "/orders/{order_id}",
            method="GET",
        )
        model = (
            FakeModel()
            .turn(tool_calls=[("get_order", {"order_id": "Z9"})])
            .turn(text="That order does not exist.")
        )
        _, log = await _run(_spec(tool), model, http=http)

    assert len(server.requests) == 1
    [finished] = _finished(log)
    assert finished.outcome is ToolOutcome.ERROR
    assert finished.failure is not None
    assert finished.failure.kind == "http_404"
    assert finished.failure.transient is False
    assert "no such order: Z9" in finished.failure.message
    [message] = [m for m in model.requests[1].messages if m.role == "tool"]
    assert message.is_error
    assert "404" in message.content and "no such order: Z9" in message.content
    assert _completed(log)


async def test_a_host_the_egress_policy_refuses_is_never_contacted() -> None:
    # The default policy refuses loopback and private addresses.
    async with _api(lambda seen: Answer(body="hello"), EgressPolicy()) as (server, http):
        tool = HttpTool(
            name="ping", description="Ping.", url=server.base_url + "/ping", method="GET"
        )
        model = FakeModel().turn(tool_calls=[("ping", {})]).turn(text="Blocked.")
        _, log = await _run(_spec(tool), model, http=http)
    assert server.requests == []
    [finished] = _finished(log)
    assert finished.outcome is ToolOutcome.ERROR
    assert finished.failure is not None
    assert finished.failure.kind == "egress_denied"
    assert "127.0.0.1" in finished.failure.message
    assert _completed(log)


@pytest.mark.parametrize("secrets", [StaticSecretResolver({"other": "x" * 12}), None])
async def test_a_missing_credential_fails_the_call_before_anything_is_sent(
    secrets: SecretResolver | None,
) -> None:
    async with _api(lambda seen: Answer(body="ok")) as (server, http):
        tool = HttpTool(
            name="open_ticket",
            description="Open a ticket.",
            url=server.base_url + "/tickets",
            credential="helpdesk",
        )
        model = FakeModel().turn(tool_calls=[("open_ticket", {})]).turn(text="Sorry.")
        _, log = await _run(_spec(tool), model, http=http, secrets=secrets)
    assert server.requests == []
    [finished] = _finished(log)
    assert finished.failure is not None
    assert finished.failure.kind == "missing_credential"
    assert "'helpdesk'" in finished.failure.message
    assert _completed(log)


async def test_without_a_transport_the_call_fails_and_the_run_carries_on() -> None:
    tool = HttpTool(name="ping", description="Ping.", url="https://api.example.com/ping")
    model = FakeModel().turn(tool_calls=[("ping", {})]).turn(text="Could not reach it.")
    _, log = await _run(_spec(tool), model, http=None)
    [finished] = _finished(log)
    assert finished.outcome is ToolOutcome.ERROR
    assert finished.failure is not None
    assert finished.failure.kind == "http_transport_required"
    assert "HttpTransport" in finished.failure.message
    assert _completed(log)


async def test_a_server_slower_than_the_tools_timeout_fails_the_call_as_transient() -> None:
    async with _api(lambda seen: Answer(body="late", delay=5.0)) as (server, http):
        tool = HttpTool(
            name="slow",
            description="Slow.",
            url=server.base_url + "/slow",
            method="GET",
            timeout_seconds=0.3,
        )
        model = FakeModel().turn(tool_calls=[("slow", {})]).turn(text="It timed out.")
        started = time.monotonic()
        _, log = await _run(_spec(tool), model, http=http)
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
    [finished] = _finished(log)
    assert finished.failure is not None
    assert finished.failure.kind == "connection_error"
    assert finished.failure.transient is True
    assert "/ping" in finished.failure.message
    assert _completed(log)


async def test_arguments_that_break_the_schema_are_refused_without_a_request() -> None:
    async with _api(lambda seen: Answer(body="ok")) as (server, http):
        tool = HttpTool(
            name="get_order",
            description="Look up an order by id.",
            url=server.base_url + "/orders/{order_id}",
            method="GET",
            input_schema=ORDER_SCHEMA,
        )
        model = FakeModel().turn(tool_calls=[("get_order", {"order_id": 42})]).turn(text="Bad id.")
        _, log = await _run(_spec(tool), model, http=http)
    assert server.requests == []
    [finished] = _finished(log)
    assert finished.failure is not None
    assert finished.failure.kind == "invalid_arguments"
    assert "order_id" in finished.failure.message


async def test_a_failing_http_tool_is_withheld_like_any_other_tool() -> None:
    async with _api(lambda seen: Answer(503, "down for maintenance")) as (server, http):
        tool = HttpTool(
            name="status_page",
            description="Read the status page.",
            url=server.base_url + "/status/{region}",
            method="GET",
        )
        model = FakeModel()
        for region in ("eu", "us", "ap"):
            model.turn(tool_calls=[("status_page", {"region": region})])
        model.turn(text="The status page is down.")
        _, log = await _run(_spec(tool), model, http=http)
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
    store = InMemoryStore()
    version = await publish(store, _spec(tool), scope=ACME)
    model = FakeModel().turn(tool_calls=[(tool.name, {"order_id": "A1"})]).turn(text="Done.")
    run = await dispatch(store, version, "go", scope=ACME)
    crashing = CrashingStore(store, before="tool_call_finished")

    def worker(on: Any) -> Worker:
        runtime = Runtime(on, model, ToolRegistry(), http=http)
        return Worker(
            on,
            runtime,
            lease_seconds=0.3,
            heartbeat_seconds=0.1,
            poll_interval=0.05,
            supervisor_interval=0.3,
        )

    first = worker(crashing)
    first_task = asyncio.create_task(first.run())
    try:
        async with asyncio.timeout(10):
            await crashing.crashed.wait()
    finally:
        await first.kill()
        first_task.cancel()
        await asyncio.gather(first_task, return_exceptions=True)
    crashed = await store.read(run.run_id)
    second = worker(store)
    second_task = asyncio.create_task(second.run())
    try:
        final = await settled_log(store, run.run_id)
    finally:
        second.request_stop()
        await second_task
    return crashed, final


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
