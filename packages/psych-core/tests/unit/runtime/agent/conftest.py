"""Opening one Attempt of an agent Run on a log built by hand, for the phase tests.

Each phase is a function of the ``AttemptContext``: a test writes the log the phase
meets with ``LogBuilder``, opens an Attempt on it (an in-memory store holding that
log, a Journal on it, ``AgentDeps`` with a ``FakeModel``), calls the phase and reads
what it staged on the Journal (``Attempt.new``) or wrote to the store
(``Attempt.durable``).
"""

import json
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from typing import TypeVar

from pydantic import JsonValue

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import CostSource
from psych_runtime.core.records import Record
from psych_runtime.core.records import RunAdmitted
from psych_runtime.core.records import RunSettled
from psych_runtime.core.records import ToolCallFinished
from psych_runtime.core.records import ToolCallStarted
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.reducer import reduce
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.state import RunStateView
from psych_runtime.models import ModelPrice
from psych_runtime.runtime.abort import AbortSignal
from psych_runtime.runtime.agent.built_ins import BUILT_INS
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import Execute
from psych_runtime.runtime.agent.deps import AgentDeps
from psych_runtime.runtime.agent.execute import execute
from psych_runtime.runtime.agent.loop import AgentLoop
from psych_runtime.runtime.agent.model_turn import Answer
from psych_runtime.runtime.journal import Journal
from psych_runtime.runtime.model_call import AssembledCall
from psych_runtime.store.memory import InMemoryStore
from psych_runtime.store.port import RunHeader
from psych_runtime.store.port import RunState
from psych_runtime.store.port import Store
from psych_runtime.testing import FakeModel
from psych_runtime.testing import LogBuilder
from psych_runtime.tools.large_results.render import DEFAULT_OFFLOAD_BYTES
from psych_runtime.tools.registry import ToolRegistry

R = TypeVar("R", bound=Record)


ONE_DOLLAR = Cost(amount=Decimal(1), currency="USD", model="m", source=CostSource.COMPUTED)
"""A computed cost of one dollar for model ``m``."""

EURO_PRICE = ModelPrice(
    input=Decimal(1),
    output=Decimal(1),
    cache_read=Decimal(0),
    cache_write=Decimal(0),
    currency="EUR",
)
"""A price for model ``m`` in euros: a call priced with it cannot join a dollar total."""


def agent(**fields: Any) -> AgentSpec:
    """An agent Spec on model ``m``; every other field as given."""
    fields.setdefault("model", "m")
    return AgentSpec(name="agent", **fields)


def no_delay(retries_used: int, retry_after: float | None) -> float:
    """A retry backoff that never waits."""
    return 0.0


def started() -> LogBuilder:
    """A Run admitted, with its first Attempt started."""
    return LogBuilder().admitted().attempt()


def tool_turn(log: LogBuilder, *call_ids: str) -> LogBuilder:
    """Open the next turn, in which the model answered by asking for ``call_ids``."""
    return log.turn().model_started().model_finished(tool_calls=call_ids)


@dataclass
class Attempt:
    """One Attempt opened on a hand-built log, and what its phases did to it.

    Attributes:
        ctx: the context every phase takes.
        store: the store holding the Run's log.
        model: the model client in ``ctx.deps``.
        seen: how many records the log held before the phase under test ran.
    """

    ctx: AttemptContext
    store: Store
    model: FakeModel
    seen: int

    @property
    def journal(self) -> Journal:
        """The Attempt's Journal."""
        return self.ctx.journal

    @property
    def state(self) -> RunStateView:
        """The folded state, staged records included."""
        return self.ctx.journal.state

    def mark(self) -> None:
        """Forget what was staged so far: ``new`` starts after it."""
        self.seen = len(self.journal.records)

    def new(self, kind: type[R] | None = None) -> list[Any]:
        """The records staged (or written) since the log was opened or marked."""
        records = self.journal.records[self.seen :]
        if kind is None:
            return list(records)
        return [record for record in records if isinstance(record, kind)]

    def types(self) -> list[str]:
        """The types of ``new()``, in order."""
        return [record.type for record in self.new()]

    def finish(self, call_id: str) -> ToolCallFinished:
        """The one finish staged for ``call_id``."""
        found = [r for r in self.new(ToolCallFinished) if r.call_id == call_id]
        assert len(found) == 1, f"{len(found)} finishes for {call_id}: {self.types()}"
        finished: ToolCallFinished = found[0]
        return finished

    def failure(self, call_id: str) -> ToolFailure:
        """The failure the finish of ``call_id`` carries."""
        failure = self.finish(call_id).failure
        assert failure is not None, f"{call_id} finished without a failure"
        return failure

    def start(self, call_id: str) -> ToolCallStarted:
        """The one start staged for ``call_id``."""
        found = [r for r in self.new(ToolCallStarted) if r.call_id == call_id]
        assert len(found) == 1, f"{len(found)} starts for {call_id}: {self.types()}"
        record: ToolCallStarted = found[0]
        return record

    def settlement(self) -> RunSettled:
        """The settlement staged for the Run."""
        found = self.new(RunSettled)
        assert len(found) == 1, f"no single settlement in {self.types()}"
        settled: RunSettled = found[0]
        return settled

    async def durable(self) -> list[Record]:
        """What the store holds beyond the log the Attempt was opened on."""
        return (await self.store.read(self.journal.run_id))[self.seen :]


async def admit(store: Store, log: LogBuilder) -> None:
    """Put ``log`` in ``store`` as a Run's whole log so far."""
    records = log.build()
    admitted = records[0]
    assert isinstance(admitted, RunAdmitted)
    header = RunHeader(
        run_id=admitted.run_id,
        scope=admitted.scope,
        version_hash=admitted.version_hash,
        state=RunState.RUNNABLE,
        created_at=admitted.at,
        deadline_at=admitted.deadline_at,
    )
    await store.create_run(header, admitted)
    if len(records) > 1:
        await store.append(admitted.run_id, 2, records[1:])


async def _nested(ctx: AttemptContext, journal: Journal, spec: AgentSpec) -> None:
    await AgentLoop(ctx.deps, journal, spec, ctx.abort).run()


async def open_attempt(
    log: LogBuilder | None = None,
    *,
    spec: AgentSpec | None = None,
    model: FakeModel | None = None,
    registry: ToolRegistry | None = None,
    abort: AbortSignal | None = None,
    store: Store | None = None,
    executor: Execute = execute,
    **deps: Any,
) -> Attempt:
    """Open an Attempt on ``log`` (a Run with its first Attempt started by default).

    The log goes into ``store`` (a new in-memory one by default) as the Run's own.

    Every ``AgentDeps`` field not named is the Runtime's default, with no prices, no
    blob store, no egress and a backoff that never waits; ``deps`` overrides any.
    """
    log = log if log is not None else started()
    store = store if store is not None else InMemoryStore()
    await admit(store, log)
    run_id = log.run_id
    attempt_id = reduce(log.build()).current_attempt
    journal = await Journal.open(store, run_id, attempt_id=attempt_id)
    model = model if model is not None else FakeModel()
    fields: dict[str, Any] = {
        "registry": registry if registry is not None else ToolRegistry(),
        "model": model,
        "prices": None,
        "cost_policy": "prefer_provider",
        "retry_delay": no_delay,
        "blob": None,
        "blob_offload_bytes": DEFAULT_OFFLOAD_BYTES,
        "http": None,
        "secrets": None,
        "store": store,
    }
    fields.update(deps)
    ctx = AttemptContext.open(
        AgentDeps(**fields),
        journal,
        spec if spec is not None else agent(),
        abort if abort is not None else AbortSignal(),
        built_ins=BUILT_INS,
        execute=executor,
        run_nested=_nested,
    )
    return Attempt(ctx, store, model, len(journal.records))


def calls(
    *wanted: tuple[str, Mapping[str, object] | str],
) -> tuple[list[AssembledCall], list[ToolCallId]]:
    """Assembled calls ``c1``, ``c2``... of ``(name, arguments)``; a string is raw text."""
    assembled = [
        AssembledCall(
            f"c{index}",
            name,
            arguments if isinstance(arguments, str) else json.dumps(arguments),
        )
        for index, (name, arguments) in enumerate(wanted, start=1)
    ]
    return assembled, [ToolCallId(f"c{index}") for index in range(1, len(wanted) + 1)]


def answer(
    attempt: Attempt,
    *wanted: tuple[str, Mapping[str, object] | str],
    offered: Sequence[str] | None = None,
) -> Answer:
    """The model's answer of the current turn, asking for ``wanted`` calls.

    ``offered`` defaults to what the catalog offers this turn.
    """
    assembled, ids = calls(*wanted)
    if offered is None:
        definitions, _ = attempt.ctx.tools.offered(
            attempt.state, attempt.ctx.spec.limits.failure_streak_threshold
        )
        offered = [definition.name for definition in definitions]
    return Answer(attempt.state.turn, "", assembled, ids, frozenset(offered))


def asked(question: str = "Which order?") -> dict[str, JsonValue]:
    """``ask_question`` arguments asking one question with two options."""
    return {
        "questions": [
            {
                "question": question,
                "header": "Order",
                "options": [{"label": "A1"}, {"label": "B2"}],
            }
        ]
    }


class Orders:
    """Two code tools over orders that keep every call they get.

    ``lookup`` is read-only and registered idempotent (safe to run again after a
    crash); ``refund`` says nothing of itself, so it is a write, and is not.

    Attributes:
        calls: ``(tool, order_id)`` of every call, in order.
    """

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.registry = ToolRegistry()

        def lookup(order_id: str) -> str:
            """Look an order up."""
            self.calls.append(("lookup", order_id))
            return f"{order_id}: shipped"

        def refund(order_id: str) -> str:
            """Refund an order."""
            self.calls.append(("refund", order_id))
            return f"{order_id}: refunded"

        self.registry.register(lookup, idempotent=True, annotations=("read-only",))
        self.registry.register(refund)
