"""What the tracer rebuilds after an Attempt dies, the trace a Run joins from admission
on, and the provider a model call is reported under; all without a tracing library."""

import asyncio
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from typing import Any

import pytest

import psych_runtime
from psych_runtime import AgentSpec
from psych_runtime import CodeTool
from psych_runtime import InMemoryStore
from psych_runtime import Runtime
from psych_runtime import Scope
from psych_runtime import ToolRegistry
from psych_runtime.adapters import OTHER_PROVIDER
from psych_runtime.adapters import check_spans
from psych_runtime.adapters import provider_for_url
from psych_runtime.adapters import register_plugin
from psych_runtime.adapters import reset_plugin_manager
from psych_runtime.core.reducer import reduce
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.models import AnthropicClient
from psych_runtime.models import OpenAICompatibleClient
from psych_runtime.records import AttemptStarted
from psych_runtime.records import ModelCallStarted
from psych_runtime.records import Suspended
from psych_runtime.records import ToolCallStarted
from psych_runtime.runtime.children import admit_child
from psych_runtime.spec import ToolStep
from psych_runtime.spec import WorkflowSpec
from psych_runtime.store.errors import StoreUnavailable
from psych_runtime.store.port import RunState
from psych_runtime.telemetry.context import child_trace_context
from psych_runtime.telemetry.providers import InvalidProviderName
from psych_runtime.telemetry.providers import provider_of
from psych_runtime.testing import FakeModel
from psych_runtime.testing import ModelsByName
from psych_runtime.testing import crash_and_recover

from .conftest import RecordedSpan
from .conftest import RecordingTelemetry
from .conftest import telemetry_plugin

ACME = Scope(tenant="acme")


def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id} is packed"


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(lookup)
    return registry


def _recovered(telemetry: RecordingTelemetry) -> list[RecordedSpan]:
    return [s for s in telemetry.spans if s.attributes.get("psych.recovered") is True]


CLERK = AgentSpec(name="clerk", model="m", tools=(CodeTool(name="lookup"),))


async def _crash(
    telemetry: RecordingTelemetry,
    crash_before: str = "tool_call_finished",
    *,
    spec: AgentSpec | WorkflowSpec = CLERK,
    model: FakeModel | None = None,
    registry: Callable[[], ToolRegistry] = _registry,
) -> Any:
    """``crash_and_recover`` of ``spec`` with ``telemetry`` on the recovering Runtime."""
    if model is None:
        model = FakeModel().turn(tool_calls=[("lookup", {"order_id": "A1"})]).turn(text="Maybe.")
    return await crash_and_recover(
        InMemoryStore(),
        model,
        registry(),
        psych_runtime.Version.of(spec, datetime.now(UTC)),
        "go",
        scope=ACME,
        crash_before=crash_before,
        runtime_for=lambda on: Runtime(on, model, registry(), telemetry=telemetry),
    )


async def _recovered_to_completion(
    telemetry: RecordingTelemetry, crash_before: str
) -> tuple[Any, dict[str, RecordedSpan]]:
    """Crash ``CLERK`` before ``crash_before`` and recover: the Run completes, its spans check.

    Returns the final log and the spans rebuilt for the dead Attempt, by name.
    """
    recovery = await _crash(telemetry, crash_before)
    log = recovery.final_log
    assert log[-1].state == "completed"
    assert check_spans(telemetry.finished()) == []
    return log, {span.name: span for span in _recovered(telemetry)}


async def test_a_call_left_in_doubt_is_rebuilt_backdated_and_closed_as_the_log_says() -> None:
    telemetry = RecordingTelemetry()
    log, recovered = await _recovered_to_completion(telemetry, "tool_call_finished")
    assert all(span.ended for span in telemetry.spans)
    first = next(r for r in log if isinstance(r, AttemptStarted))
    started = next(r for r in log if isinstance(r, ToolCallStarted))
    turn_started = next(r for r in log if r.type == "turn_started")
    assert sorted(recovered) == ["execute_tool lookup", "psych.attempt", "psych.run", "psych.turn"]
    # Backdated to the records' own times, in the Run's stored trace.
    assert recovered["psych.run"].start_time == first.at
    assert recovered["psych.attempt"].start_time == first.at
    assert recovered["psych.turn"].start_time == turn_started.at
    assert recovered["execute_tool lookup"].start_time == started.at
    assert recovered["psych.run"].carrier_in == log[0].trace_context  # type: ignore[attr-defined]
    # The tree the dead process had open, ended the way the log ends it.
    assert recovered["psych.attempt"].parent_id == recovered["psych.run"].span_id
    assert recovered["psych.turn"].parent_id == recovered["psych.attempt"].span_id
    assert recovered["execute_tool lookup"].parent_id == recovered["psych.turn"].span_id
    call = recovered["execute_tool lookup"]
    assert call.attributes["psych.tool.outcome"] == "unknown"
    assert call.attributes["error.type"] == "orphaned"
    assert call.error is not None
    assert "worker" in (recovered["psych.attempt"].error or "")
    assert recovered["psych.run"].error is not None
    assert recovered["psych.turn"].error is None
    # Only what was open when the process stopped: the finished model call is not
    # told twice.
    assert not any(span.name == "chat m" for span in _recovered(telemetry))


async def test_a_call_run_again_ends_its_rebuilt_span_with_the_real_outcome() -> None:
    telemetry = RecordingTelemetry()
    model = FakeModel().turn(tool_calls=[("lookup", {"order_id": "A1"})]).turn(text="Packed.")

    def registry() -> ToolRegistry:
        tools = ToolRegistry()
        tools.register(lookup, idempotent=True)
        return tools

    recovery = await _crash(telemetry, model=model, registry=registry)
    finished = [r for r in recovery.final_log if r.type == "tool_call_finished"]
    assert [r.outcome for r in finished] == ["ok"]  # type: ignore[attr-defined]
    assert check_spans(telemetry.finished()) == []
    [call] = [s for s in _recovered(telemetry) if s.name == "execute_tool lookup"]
    assert call.attributes["psych.tool.outcome"] == "ok"
    assert call.error is None
    [attempt] = [s for s in _recovered(telemetry) if s.name == "psych.attempt"]
    assert attempt.error is not None


async def test_an_attempt_killed_during_a_model_call_is_rebuilt_with_that_call() -> None:
    telemetry = RecordingTelemetry()
    log, recovered = await _recovered_to_completion(telemetry, "model_call_finished")
    assert sorted(recovered) == ["chat m", "psych.attempt", "psych.run", "psych.turn"]
    first_call = next(r for r in log if isinstance(r, ModelCallStarted))
    assert recovered["chat m"].start_time == first_call.at
    assert recovered["chat m"].kind == "client"
    assert recovered["chat m"].attributes["error.type"] == "interrupted"
    assert recovered["psych.attempt"].error is not None


async def test_a_workflow_step_left_in_doubt_is_rebuilt_and_failed_as_orphaned() -> None:
    telemetry = RecordingTelemetry()
    spec = WorkflowSpec(
        name="flow", steps=(ToolStep(name="look", tool="lookup", arguments={"order_id": "A1"}),)
    )
    recovery = await _crash(telemetry, "step_completed", spec=spec, model=FakeModel())
    assert recovery.final_log[-1].type == "run_settled"
    assert check_spans(telemetry.finished()) == []
    started = next(r for r in recovery.final_log if r.type == "step_started")
    recovered = {span.name: span for span in _recovered(telemetry)}
    assert sorted(recovered) == ["psych.attempt", "psych.run", "psych.step"]
    step = recovered["psych.step"]
    assert step.start_time == started.at
    assert step.parent_id == recovered["psych.attempt"].span_id
    assert (step.attributes["psych.step.outcome"], step.attributes["error.type"]) == (
        "failed",
        "orphaned",
    )
    assert step.error is not None


async def test_an_attempt_that_suspended_is_not_rebuilt() -> None:
    telemetry = RecordingTelemetry()
    registry = ToolRegistry()
    registry.register(lookup, annotations=["destructive"])
    model = FakeModel().turn(tool_calls=[("lookup", {"order_id": "A1"})]).turn(text="Done.")
    async with psych_runtime.session(
        model,
        registry=registry,
        scope=ACME,
        runtime=psych_runtime.RuntimeSettings(
            approvals=psych_runtime.ApprovalRules(selectors=("@destructive",)),
            telemetry=telemetry,
        ),
        worker=psych_runtime.WorkerSettings(poll_interval=0.02),
    ) as s:
        spec = AgentSpec(name="clerk", model="m", tools=("lookup",))
        run = await s.dispatch(spec, "go")
        await s.wait(run.run_id, timeout=10)
        await s.resume(run.run_id, approved=True, by="ops")
        await s.wait(run.run_id, timeout=10)
        log = await s.read_log(run.run_id)
    assert log[-1].state == "completed"  # type: ignore[union-attr]
    assert any(isinstance(r, Suspended) for r in log)
    assert len([r for r in log if isinstance(r, AttemptStarted)]) == 2
    assert _recovered(telemetry) == []
    assert check_spans(telemetry.finished()) == []


# --- the trace a Run joins ---------------------------------------------------------------


@pytest.fixture
def installed(fresh_plugins: None) -> RecordingTelemetry:
    """A RecordingTelemetry as the process's installed adapter (what dispatch uses)."""
    telemetry = RecordingTelemetry()
    register_plugin(telemetry_plugin(lambda: telemetry), "recording")
    return telemetry


async def _published(store: InMemoryStore) -> psych_runtime.Version:
    return await psych_runtime.publish(store, AgentSpec(name="clerk", model="m"), scope=ACME)


async def test_with_telemetry_on_a_dispatch_outside_any_span_roots_the_runs_trace(
    installed: RecordingTelemetry,
) -> None:
    store = InMemoryStore()
    version = await _published(store)
    run = await psych_runtime.dispatch(store, version, "go", scope=ACME)
    [admitted] = await store.read(run.run_id, limit=1)
    [root] = installed.spans
    assert (root.name, root.kind, root.ended, root.error) == (
        "psych.dispatch",
        "producer",
        True,
        None,
    )
    assert root.attributes["psych.run.id"] == run.run_id
    assert root.attributes["psych.scope.tenant"] == "acme"
    assert admitted.trace_context == root.carrier()  # type: ignore[attr-defined]
    assert check_spans(installed.finished()) == []
    # A repeated key finds the first Run: its dispatch span names that Run.
    again = await psych_runtime.dispatch(store, version, "go", scope=ACME, idempotency_key="k")
    repeat = await psych_runtime.dispatch(store, version, "go", scope=ACME, idempotency_key="k")
    assert repeat.run_id == again.run_id and not repeat.created
    assert installed.spans[-1].attributes["psych.run.id"] == again.run_id
    # A given trace context is kept as it is, with no span of ours.
    given = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
    kept = await psych_runtime.dispatch(store, version, "go", scope=ACME, trace_context=given)
    [admitted] = await store.read(kept.run_id, limit=1)
    assert admitted.trace_context == given  # type: ignore[attr-defined]
    assert len(installed.spans) == 3


class _Unavailable(InMemoryStore):
    async def create_run(self, *args: Any, **kwargs: Any) -> Any:
        raise StoreUnavailable("the store is down")


async def test_a_dispatch_that_fails_ends_its_span_as_an_error(
    installed: RecordingTelemetry,
) -> None:
    store = _Unavailable()
    version = await _published(store)
    with pytest.raises(StoreUnavailable):
        await psych_runtime.dispatch(store, version, "go", scope=ACME)
    [root] = installed.spans
    assert root.ended and root.error is not None and "the store is down" in root.error


class _Broken(RecordingTelemetry):
    def start_span(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no spans today")


async def test_an_adapter_that_fails_at_dispatch_still_leaves_a_trace_to_join(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PSYCH_DISABLE_PLUGIN_AUTOLOAD", "1")
    reset_plugin_manager()
    try:
        broken = _Broken()
        register_plugin(telemetry_plugin(lambda: broken), "broken")
        store = InMemoryStore()
        version = await _published(store)
        run = await psych_runtime.dispatch(store, version, "go", scope=ACME)
        [admitted] = await store.read(run.run_id, limit=1)
    finally:
        reset_plugin_manager()
    assert admitted.trace_context["traceparent"].startswith("00-")  # type: ignore[attr-defined]


async def test_a_child_joins_its_call_span_else_its_parents_trace() -> None:
    store = InMemoryStore()
    version = await _published(store)
    parent = await psych_runtime.dispatch(store, version, "go", scope=ACME)
    state = reduce(await store.read(parent.run_id))
    call_span = {"traceparent": "00-11111111111111111111111111111111-2222222222222222-01"}

    async def admitted(key: str, given: dict[str, str] | None) -> dict[str, str]:
        header = await admit_child(
            store,
            state,
            version_hash=version.hash,
            key=key,
            input={"message": "sub"},
            deadline_seconds=60,
            state=RunState.RUNNABLE,
            trace_context=given,
        )
        [record] = await store.read(header.run_id, limit=1)
        return record.trace_context  # type: ignore[attr-defined,no-any-return]

    assert await admitted("a", call_span) == call_span
    assert await admitted("b", None) == state.trace_context
    assert state.trace_context["traceparent"]
    assert child_trace_context(None, {})["traceparent"].startswith("00-")


# --- which provider ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "provider"),
    [
        ("https://api.openai.com/v1", "openai"),
        ("https://my-team.openai.azure.com/openai/deployments/x", "azure.ai.openai"),
        ("https://api.anthropic.com", "anthropic"),
        ("https://api.groq.com/openai/v1", "groq"),
        ("https://api.deepseek.com", "deepseek"),
        ("https://API.MISTRAL.AI/v1", "mistral_ai"),
        ("https://api.x.ai/v1", "x_ai"),
        ("https://generativelanguage.googleapis.com/v1beta/openai", "gcp.gemini"),
        ("https://us-central1-aiplatform.googleapis.com/v1", "gcp.vertex_ai"),
        ("https://bedrock-runtime.us-east-1.amazonaws.com", "aws.bedrock"),
        ("https://s3.amazonaws.com", OTHER_PROVIDER),
        ("http://127.0.0.1:8000/v1", OTHER_PROVIDER),
        ("https://api.openai.com.evil.example/v1", OTHER_PROVIDER),
        ("not a url", OTHER_PROVIDER),
    ],
)
def test_an_api_host_names_its_provider(url: str, provider: str) -> None:
    assert provider_for_url(url) == provider


class _Says:
    def __init__(self, name: object) -> None:
        self.provider_name = name


class _Raises:
    @property
    def provider_name(self) -> str:
        raise RuntimeError("no")


def test_the_provider_comes_from_the_client_and_is_other_when_it_says_nothing() -> None:
    assert provider_of(FakeModel(), "m") == OTHER_PROVIDER
    assert provider_of(_Says("mistral_ai"), "m") == "mistral_ai"
    for bad in ("", 7, "x" * 65, "a\nb", None):
        assert provider_of(_Says(bad), "m") == OTHER_PROVIDER
    assert provider_of(_Raises(), "m") == OTHER_PROVIDER
    routed = ModelsByName({"a": _Says("anthropic"), "b": FakeModel()})  # type: ignore[dict-item]
    assert provider_of(routed, "a") == "anthropic"
    assert provider_of(routed, "b") == OTHER_PROVIDER
    assert provider_of(routed, "unrouted") == OTHER_PROVIDER


async def test_the_http_clients_say_their_provider() -> None:
    async with HttpTransport() as transport:
        _check_clients(transport)


def _check_clients(transport: HttpTransport) -> None:
    openai = OpenAICompatibleClient(
        base_url="https://api.openai.com/v1", transport=transport, scope=ACME
    )
    local = OpenAICompatibleClient(
        base_url="http://127.0.0.1:8000/v1", transport=transport, scope=ACME
    )
    named = OpenAICompatibleClient(
        base_url="http://127.0.0.1:8000/v1", transport=transport, scope=ACME, provider_name="vllm"
    )
    assert (openai.provider_name, local.provider_name, named.provider_name) == (
        "openai",
        OTHER_PROVIDER,
        "vllm",
    )
    assert AnthropicClient(transport=transport, scope=ACME).provider_name == "anthropic"
    for bad in ("", " ", 7, True, "x" * 65, "open\tai"):
        with pytest.raises(InvalidProviderName, match="provider_name"):
            OpenAICompatibleClient(
                base_url="http://h/v1",
                transport=transport,
                scope=ACME,
                provider_name=bad,  # type: ignore[arg-type]
            )
        with pytest.raises(InvalidProviderName, match="provider_name"):
            AnthropicClient(transport=transport, scope=ACME, provider_name=bad)  # type: ignore[arg-type]


async def test_a_model_call_is_reported_under_its_clients_provider() -> None:
    telemetry = RecordingTelemetry()
    store = InMemoryStore()
    spec = AgentSpec(name="clerk", model="m")
    version = await psych_runtime.publish(store, spec, scope=ACME)

    class Anthropic(FakeModel):
        provider_name = "anthropic"

    model = Anthropic().turn(text="Hello.")
    worker = psych_runtime.Worker(
        store, Runtime(store, model, ToolRegistry(), telemetry=telemetry), poll_interval=0.02
    )
    task = asyncio.create_task(worker.run())
    try:
        run = await psych_runtime.dispatch(store, version, "hi", scope=ACME)
        async with asyncio.timeout(10):
            while (await store.read(run.run_id))[-1].type != "run_settled":
                await asyncio.sleep(0.01)
    finally:
        worker.request_stop()
        await asyncio.gather(task, return_exceptions=True)
    [call] = [s for s in telemetry.spans if s.name == "chat m"]
    assert call.attributes["gen_ai.provider.name"] == "anthropic"
    assert {m[2]["gen_ai.provider.name"] for m in telemetry.measurements} == {"anthropic"}
