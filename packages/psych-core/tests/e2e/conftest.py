"""Shared helpers for end-to-end tests: a Runtime, fast Workers, one Run, and its log."""

from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Coroutine
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from contextlib import asynccontextmanager
from decimal import Decimal
from typing import Any
from typing import NamedTuple

import pytest

from psych_runtime import AgentSpec
from psych_runtime import CodeTool
from psych_runtime import InMemoryStore
from psych_runtime import Limits
from psych_runtime import ModelRef
from psych_runtime import RunId
from psych_runtime import Runtime
from psych_runtime import RuntimeSettings
from psych_runtime import Scope
from psych_runtime import Session
from psych_runtime import Store
from psych_runtime import ToolRegistry
from psych_runtime import Worker
from psych_runtime import WorkerSettings
from psych_runtime import dispatch
from psych_runtime import publish
from psych_runtime import session
from psych_runtime.models import ModelClient
from psych_runtime.models import ModelPrice
from psych_runtime.models import PriceResolver
from psych_runtime.records import Record
from psych_runtime.testing import FAST_WORKER
from psych_runtime.testing import CrashRecovery
from psych_runtime.testing import ToolCallScript
from psych_runtime.testing import crash_and_recover
from psych_runtime.testing import settled_log
from psych_runtime.testing import worker_in_background

ACME = Scope(tenant="acme")


def registry_of(*tools: Callable[..., Any], idempotent: tuple[str, ...] = ()) -> ToolRegistry:
    registry = ToolRegistry()
    for tool in tools:
        registry.register(tool, idempotent=tool.__name__ in idempotent)
    return registry


def code_spec(
    *tools: str,
    name: str = "support",
    instructions: str = "",
    model: str = "fake-standard",
    **limits: Any,
) -> AgentSpec:
    """An agent that may call the named code tools, within ``limits``."""
    return AgentSpec(
        name=name,
        instructions=instructions,
        model=ModelRef(model=model),
        tools=tuple(CodeTool(name=tool) for tool in tools),
        limits=Limits(**limits),
    )


def price(
    input: str, output: str, cache_read: str, cache_write: str, cache_write_1h: str | None = None
) -> ModelPrice:
    """A model's rates per million tokens, each written as a decimal string."""
    return ModelPrice(
        input=Decimal(input),
        output=Decimal(output),
        cache_read=Decimal(cache_read),
        cache_write=Decimal(cache_write),
        cache_write_1h=None if cache_write_1h is None else Decimal(cache_write_1h),
    )


@asynccontextmanager
async def running_worker(
    store: Store,
    model: ModelClient,
    registry: ToolRegistry,
    *,
    prices: PriceResolver | None = None,
    runtime_options: Mapping[str, Any] | None = None,
    **options: Any,
) -> AsyncIterator[Worker]:
    runtime = Runtime(
        store, model, registry, retry_base_seconds=0.01, prices=prices, **(runtime_options or {})
    )
    async with worker_in_background(Worker(store, runtime, **{**FAST_WORKER, **options})) as worker:
        yield worker


class Dispatched(NamedTuple):
    store: InMemoryStore
    run_id: RunId


class Settled(NamedTuple):
    store: InMemoryStore
    run_id: RunId
    log: list[Record]


@asynccontextmanager
async def dispatched(
    spec: AgentSpec,
    model: ModelClient,
    *tools: Callable[..., Any],
    message: str = "go",
    store: InMemoryStore | None = None,
    scope: Scope = ACME,
    context: Any = None,
    deadline_seconds: float | None = None,
    **options: Any,
) -> AsyncIterator[Dispatched]:
    """Publish ``spec``, dispatch one Run of it, and hold a fast Worker while it runs."""
    store = store if store is not None else InMemoryStore()
    version = await publish(store, spec, scope=scope, context=context)
    async with running_worker(store, model, registry_of(*tools), **options):
        run = await dispatch(
            store, version, message, scope=scope, deadline_seconds=deadline_seconds
        )
        yield Dispatched(store, run.run_id)


async def run_once(
    spec: AgentSpec,
    model: ModelClient,
    *tools: Callable[..., Any],
    timeout: float = 10.0,
    **options: Any,
) -> Settled:
    """One Run of ``spec`` through a fast Worker, to its settlement."""
    async with dispatched(spec, model, *tools, **options) as (store, run_id):
        log = await settled_log(store, run_id, timeout=timeout)
    return Settled(store, run_id, log)


async def crash_once(
    spec: AgentSpec,
    model: ModelClient,
    *tools: Callable[..., Any],
    runtime_options: Mapping[str, Any] | None = None,
    message: str = "go",
    store: InMemoryStore | None = None,
    context: Any = None,
    **crash: Any,
) -> CrashRecovery:
    """Publish ``spec`` in ACME, then kill its one Run at the crash point and recover it.

    ``crash`` is handed to ``crash_and_recover`` (``crash_before``, ``occurrence``...);
    both Workers' Runtimes get ``runtime_options``.
    """
    store = store if store is not None else InMemoryStore()
    version = await publish(store, spec, scope=ACME, context=context)
    registry = registry_of(*tools)
    return await crash_and_recover(
        store,
        model,
        registry,
        version,
        message,
        scope=ACME,
        runtime_for=lambda on: Runtime(on, model, registry, **(runtime_options or {})),
        **crash,
    )


@pytest.fixture
async def store() -> AsyncIterator[InMemoryStore]:
    """An in-memory store, closed when the test ends."""
    store = InMemoryStore()
    yield store
    await store.close()


def session_on(
    store: Store, model: ModelClient, registry: ToolRegistry, **runtime: Any
) -> AbstractAsyncContextManager[Session]:
    """A session in ACME over ``store`` whose Worker polls fast; ``runtime`` are its settings."""
    return session(
        model,
        registry=registry,
        store=store,
        scope=ACME,
        runtime=RuntimeSettings(**runtime),
        worker=WorkerSettings(poll_interval=0.05),
    )


def types(log: list[Record]) -> list[str]:
    return [r.type for r in log]


def tool_call(name: str, call_id: str, /, **arguments: Any) -> ToolCallScript:
    """A scripted call with an id of the test's choosing."""
    return ToolCallScript(name=name, arguments=arguments, call_id=call_id)


def recording_tool(
    name: str, answer: str
) -> tuple[Callable[[str], Coroutine[Any, Any, str]], list[str]]:
    """An async tool ``name(order_id)`` that answers ``answer``, and the ids it ran with.

    The list grows by one each time the tool really runs, so a test can count the calls
    a guard refused or a crash let through.
    """
    ran_with: list[str] = []

    async def tool(order_id: str) -> str:
        ran_with.append(order_id)
        return answer

    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = f"Answer {answer!r} for an order."
    return tool, ran_with


def tool_finishes(log: list[Record]) -> list[Any]:
    return [r for r in log if r.type == "tool_call_finished"]


def finish_of(log: list[Record], call_id: str) -> Any:
    """The finish of the call with ``call_id``."""
    return next(r for r in tool_finishes(log) if r.call_id == call_id)
