"""Five tasks a coding agent is given, each done from one skill for coding agents alone.

Each ``task_*`` function below was written reading only the skill its docstring names,
the way a coding agent given that task would, and runs against real components (SQLite
and PostgreSQL stores, a real MCP server and OAuth token endpoint on loopback). A check
reads each task's source and requires every name it takes from the library (module
attributes, imported names, Session methods, keyword arguments) to appear in that
skill's text, so a task cannot lean on anything the skill does not teach.
"""

import ast
import asyncio
import base64
import inspect
import json
import os
import threading
from collections.abc import Awaitable
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from tests.support.scratch_stores import scratch_store_url

SKILLS = Path(__file__).resolve().parents[2] / "packages/psych-core/src/psych_runtime/agent_skills"
UrlFor = Callable[[str], Awaitable[str]]


# --- add an approval to a destructive tool ----------------------------------------------


async def task_approval_on_a_destructive_tool(url: str) -> None:
    """Skill: psych-approvals. A tool that wipes a customer's data must wait for a person."""
    import psych_runtime
    from psych_runtime.testing import FakeModel

    wiped: list[str] = []
    registry = psych_runtime.ToolRegistry()

    @registry.tool(annotations=["destructive"])
    async def wipe_customer(customer_id: str) -> str:
        """Erase every record of a customer. Cannot be undone."""
        wiped.append(customer_id)
        return f"{customer_id} wiped"

    spec = psych_runtime.AgentSpec(name="gdpr", model="gpt-4o-mini", tools=("wipe_customer",))
    model = (
        FakeModel()
        .turn(tool_calls=[("wipe_customer", {"customer_id": "C-7"})])
        .turn(tool_calls=[("wipe_customer", {"customer_id": "C-8"})])
        .turn(text="C-7 is erased; erasing C-8 was refused.")
    )
    rules = psych_runtime.ApprovalRules(selectors=("@destructive",))
    settings = psych_runtime.RuntimeSettings(approvals=rules)
    async with psych_runtime.session(model, registry=registry, runtime=settings, store=url) as s:
        run = await s.dispatch(spec, "Erase customers C-7 and C-8.")
        await s.wait(run.run_id)
        first = (await s.status(run.run_id)).pending_approval
        assert first is not None and first.arguments == {"customer_id": "C-7"} and wiped == []
        # The reviewer's decision arrives through another connection to the store.
        reviewer = await psych_runtime.open_store(url)
        try:
            await psych_runtime.resume(
                reviewer, run.run_id, approved=True, by="dpo@example.com", scope=s.scope
            )
            await s.wait(run.run_id)
            second = (
                await psych_runtime.status(reviewer, run.run_id, scope=s.scope)
            ).pending_approval
            assert second is not None and second.arguments == {"customer_id": "C-8"}
            await psych_runtime.resume(
                reviewer, run.run_id, approved=False, by="dpo@example.com", scope=s.scope
            )
        finally:
            await reviewer.close()
        await s.wait(run.run_id)
        report = await s.report(run.run_id)
    assert wiped == ["C-7"]
    assert report.terminal_state is psych_runtime.TerminalState.COMPLETED
    assert report.tool_calls[1].failure is not None
    assert report.tool_calls[1].failure.kind == "denied"
    assert [x.resumed_by for x in report.suspensions] == ["dpo@example.com"] * 2


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_approval_on_a_destructive_tool(kind: str, store_url_for: UrlFor) -> None:
    await task_approval_on_a_destructive_tool(await store_url_for(kind))


# --- move a store to PostgreSQL ---------------------------------------------------------


async def task_move_to_postgresql(sqlite_url: str, postgres_url: str) -> None:
    """Skill: psych-stores. The app ran on SQLite; point it at PostgreSQL instead."""
    import psych_runtime
    from psych_runtime.testing import FakeModel

    async def order_status(order_id: str) -> str:
        """Where an order is."""
        return f"{order_id} is packed"

    spec = psych_runtime.AgentSpec(name="orders", model="gpt-4o-mini", tools=("order_status",))

    async def service(url: str, order_id: str) -> str:
        model = (
            FakeModel()
            .turn(tool_calls=[("order_status", {"order_id": order_id})])
            .turn(text=f"{order_id} is packed.")
        )
        async with psych_runtime.session(model, tools=[order_status], store=url) as s:
            return (await s.ask(spec, f"Where is {order_id}?")).run_id

    old_run = await service(sqlite_url, "A-1")  # before the move
    # The release job: migrate the new database once.
    store = await psych_runtime.open_store(postgres_url, migrate=True)
    await store.close()
    new_run = await service(postgres_url, "A-2")
    # Another process reads both, each from its own store.
    default = psych_runtime.Scope(tenant="default")
    for url, run_id, text in ((sqlite_url, old_run, "A-1"), (postgres_url, new_run, "A-2")):
        reader = await psych_runtime.open_store(url)
        try:
            answer = await psych_runtime.answer(reader, run_id, scope=default)
        finally:
            await reader.close()
        assert answer.finished and answer.text == f"{text} is packed."


async def test_move_to_postgresql(store_url_for: UrlFor) -> None:
    postgres_url, cleanup = await scratch_store_url("postgres", migrate=False)
    try:
        await task_move_to_postgresql(await store_url_for("sqlite"), postgres_url)
    finally:
        await cleanup()


# --- add an MCP server with OAuth -------------------------------------------------------

TOKEN = "tok-for-agents"
CLIENT = ("agents-client", "agents-secret")


class _Issuer(BaseHTTPRequestHandler):
    """The authorization server the task's MCP server trusts (client credentials)."""

    def do_GET(self) -> None:
        issuer = f"http://127.0.0.1:{self.server.server_port}"
        self._json(200, {"issuer": issuer, "token_endpoint": issuer + "/token"})

    def do_POST(self) -> None:
        form = parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        basic = base64.b64encode(":".join(CLIENT).encode()).decode()
        if self.headers["Authorization"] != f"Basic {basic}":
            self._json(401, {"error": "invalid_client"})
        elif form.get("grant_type") != ["client_credentials"]:
            self._json(400, {"error": "unsupported_grant_type"})
        else:
            self._json(200, {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 600})

    def _json(self, status: int, body: dict[str, object]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps(body).encode())

    def log_message(self, *args: object) -> None:
        pass


async def task_mcp_server_with_oauth(issuer: str) -> None:
    """Skill: psych-mcp-oauth. Give the agent a ticketing MCP server that takes OAuth."""
    import psych_runtime
    from psych_mcp import McpStubServer
    from psych_mcp import McpTools
    from psych_mcp.oauth import InMemoryTokenStore
    from psych_runtime.spec import McpOAuth
    from psych_runtime.spec import McpServer
    from psych_runtime.testing import FakeModel

    async with McpStubServer(
        token_check=lambda token: token == TOKEN,
        resource_metadata={"authorization_servers": [issuer]},
    ) as tickets:
        tickets.tool(
            "open_ticket", lambda arguments: {"ticket": "T-1", "title": arguments["title"]}
        )
        server = McpServer(
            name="tickets",
            url=tickets.url,
            oauth=McpOAuth(
                grant="client_credentials",
                preregistered_client_id=CLIENT[0],
                client_secret_credential="tickets-client-secret",
            ),
        )
        spec = psych_runtime.AgentSpec(name="helpdesk", model="gpt-4o-mini", mcp_servers=(server,))
        tools = McpTools(
            egress=psych_runtime.EgressPolicy(allow_hosts=frozenset({"127.0.0.1"})),
            secrets=psych_runtime.StaticSecretResolver({"tickets-client-secret": CLIENT[1]}),
            token_store=InMemoryTokenStore(),
        )
        model = (
            FakeModel()
            .turn(tool_calls=[("tickets__open_ticket", {"title": "Printer on fire"})])
            .turn(text="Ticket T-1 is open.")
        )
        settings = psych_runtime.RuntimeSettings(tool_sources=[tools])
        async with tools, psych_runtime.session(model, runtime=settings) as s:
            answer = await s.ask(spec, "Open a ticket: the printer is on fire.")
        assert answer.text == "Ticket T-1 is open."
        [call] = tickets.calls
        assert call.authorization == f"Bearer {TOKEN}"
        assert all(TOKEN not in str(request.messages) for request in model.requests)


async def test_mcp_server_with_oauth() -> None:
    issuer = ThreadingHTTPServer(("127.0.0.1", 0), _Issuer)
    threading.Thread(target=issuer.serve_forever, daemon=True).start()
    try:
        await task_mcp_server_with_oauth(f"http://127.0.0.1:{issuer.server_port}")
    finally:
        issuer.shutdown()
        issuer.server_close()


# --- a workflow with a retrying step ----------------------------------------------------


async def task_workflow_with_a_retried_step(url: str) -> None:
    """Skill: psych-workflows. Fetch a report from a flaky API, retrying, then file it."""
    import psych_runtime
    from psych_runtime.spec import RetryPolicy
    from psych_runtime.spec import ToolStep
    from psych_runtime.spec import ValuePath
    from psych_runtime.spec import WorkflowSpec
    from psych_runtime.testing import FakeModel

    tries: list[int] = []
    filed: list[str] = []

    async def fetch_report(month: str) -> dict[str, str]:
        """Download a month's sales report."""
        tries.append(len(tries) + 1)
        if len(tries) < 3:
            raise TimeoutError("the reporting API did not answer")
        return {"month": month, "url": "https://files.example.com/2026-11.csv"}

    async def file_report(url: str) -> str:
        """File a report in the archive."""
        filed.append(url)
        return "filed"

    monthly = WorkflowSpec(
        name="monthly-report",
        tools=(
            psych_runtime.CodeTool(name="fetch_report"),
            psych_runtime.CodeTool(name="file_report"),
        ),
        steps=(
            ToolStep(
                name="fetch",
                tool="fetch_report",
                arguments_from={"month": ValuePath(path="input.month")},
                retry=RetryPolicy(max_attempts=3, backoff_seconds=0.05, retry_on=("TimeoutError",)),
            ),
            ToolStep(
                name="file",
                tool="file_report",
                arguments_from={"url": ValuePath(path="steps.fetch.output.url")},
            ),
        ),
        output={"url": ValuePath(path="steps.fetch.output.url")},
    )
    async with psych_runtime.session(
        FakeModel(), tools=[fetch_report, file_report], store=url
    ) as s:
        run = await s.dispatch(monthly, input={"month": "2026-11"})
        async for _record in s.stream(run.run_id):
            pass
        status = await s.status(run.run_id)
        report = await s.report(run.run_id)
    assert status.terminal_state is psych_runtime.TerminalState.COMPLETED
    assert status.output == {"url": "https://files.example.com/2026-11.csv"}
    assert tries == [1, 2, 3] and filed == ["https://files.example.com/2026-11.csv"]
    fetches = [step for step in report.steps if step.name == "fetch"]
    assert [(step.attempt_number, step.will_retry) for step in fetches] == [
        (1, True),
        (2, True),
        (3, False),
    ]


@pytest.mark.parametrize("kind", ["memory", "postgres"])
async def test_workflow_with_a_retried_step(kind: str, store_url_for: UrlFor) -> None:
    await task_workflow_with_a_retried_step(await store_url_for(kind))


# --- test an agent with FakeModel -------------------------------------------------------


async def task_test_an_agent_with_fake_model() -> None:
    """Skill: psych-testing. Test a returns agent without a model or an API key."""
    import psych_runtime
    from psych_runtime.records import Usage
    from psych_runtime.testing import FakeModel

    labels: list[str] = []

    async def print_return_label(order_id: str) -> str:
        """Create a return label for an order."""
        if order_id != "A-5":
            raise ValueError(f"no order {order_id}")
        labels.append(order_id)
        return f"label for {order_id}"

    spec = psych_runtime.AgentSpec(
        name="returns", model="gpt-4o-mini", tools=("print_return_label",)
    )
    model = (
        FakeModel()
        .raises_transient(status_code=503)  # the provider hiccups once
        .turn(
            tool_calls=[("print_return_label", {"order_id": "A-6"})],
            usage=Usage(input=90, output=8),
        )
        .turn(
            tool_calls=[("print_return_label", {"order_id": "A-5"})],
            usage=Usage(input=120, output=8),
        )
        .turn(text="Your return label for A-5 is ready.", usage=Usage(input=150, output=9))
    )
    async with psych_runtime.session(model, tools=[print_return_label]) as s:
        answer = await s.ask(spec, "I want to return order A-5.")
        report = await s.report(answer.run_id)
    assert answer.finished and answer.text == "Your return label for A-5 is ready."
    assert labels == ["A-5"]
    assert [call.outcome for call in report.tool_calls] == [
        psych_runtime.ToolOutcome.ERROR,
        psych_runtime.ToolOutcome.OK,
    ]
    assert report.totals.usage == Usage(input=360, output=25)
    assert "no order A-6" in str(model.requests[-2].messages[-1])
    assert model.remaining == 0


async def test_an_agent_tested_with_fake_model() -> None:
    await task_test_an_agent_with_fake_model()


# --- the tasks use only what their skill teaches ----------------------------------------

TASKS = [
    task_approval_on_a_destructive_tool,
    task_move_to_postgresql,
    task_mcp_server_with_oauth,
    task_workflow_with_a_retried_step,
    task_test_an_agent_with_fake_model,
]
LIBRARY = ("psych_runtime", "psych_mcp")


def _library_names(function: Callable[..., object]) -> set[str]:
    """What ``function`` takes from the library: imports, attributes, methods, keywords."""
    tree = ast.parse(inspect.getsource(function).lstrip())
    imported: set[str] = set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(LIBRARY):
            names.update(alias.name for alias in node.names)
            imported.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Attribute):
            base = node.value
            if isinstance(base, ast.Name) and base.id in (*LIBRARY, "s", "tickets", "model"):
                names.add(node.attr)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            callee = node.func
            called = callee.id if isinstance(callee, ast.Name) else getattr(callee, "attr", "")
            if called in imported or called in names:
                names.update(keyword.arg for keyword in node.keywords if keyword.arg)
    return names


@pytest.mark.parametrize("task", TASKS, ids=[task.__name__ for task in TASKS])
def test_the_task_uses_only_names_its_skill_teaches(task: Callable[..., object]) -> None:
    skill = (task.__doc__ or "").split("Skill: ", 1)[1].split(".", 1)[0]
    text = (SKILLS / skill / "SKILL.md").read_text()
    used = _library_names(task)
    assert len(used) > 8, used
    missing = sorted(name for name in used if name not in text)
    assert missing == [], f"{skill} never mentions {missing}"


def test_the_checked_names_are_real() -> None:
    # The check above is only as good as its reading of the sources: it must see these.
    names = _library_names(task_mcp_server_with_oauth)
    assert {"McpOAuth", "token_store", "client_secret_credential", "tool_sources"} <= names
    assert os.path.exists(SKILLS / "psych-mcp-oauth" / "SKILL.md")
    assert asyncio.iscoroutinefunction(task_mcp_server_with_oauth)
