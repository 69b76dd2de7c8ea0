"""Property tests: generated valid logs fold cleanly, and a continued fold equals a whole one.

The strategy below plays a small model of a Run and only emits records that are
legal at that point (admission, attempts and reclaims, turns with model calls, tool
calls of every outcome including program-issued ones and handle reads, queues, aborts,
suspensions and resumes, steps with retries, subagents, compactions, settlement).
"""

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from decimal import Decimal

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from psych_runtime.core.corruption import CorruptionReason
from psych_runtime.core.corruption import CorruptLog
from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import CostSource
from psych_runtime.core.metering import Usage
from psych_runtime.core.records import QueueKind
from psych_runtime.core.records import Record
from psych_runtime.core.records import ResultAttachment
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.reducer import fold_into
from psych_runtime.core.reducer import reduce
from psych_runtime.core.scope import Scope
from psych_runtime.core.state import RunStateView
from psych_runtime.testing import LogBuilder

Draw = st.DrawFn

SMALL_JSON = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["a", "b", "shipped"])
)
ARGUMENTS = st.dictionaries(st.sampled_from(["order", "amount", "q"]), SMALL_JSON, max_size=2)
RESULTS = st.one_of(SMALL_JSON, st.dictionaries(st.sampled_from(["status", "n"]), SMALL_JSON))
COSTS = st.one_of(
    st.none(),
    st.builds(
        Cost,
        amount=st.decimals(min_value=0, max_value=1, places=4).map(Decimal),
        source=st.sampled_from([CostSource.COMPUTED, CostSource.PROVIDER]),
    ),
)
USAGES = st.builds(
    Usage,
    input=st.integers(0, 500),
    output=st.integers(0, 100),
    cache_read=st.integers(0, 300),
)


@dataclass
class StepModel:
    attempt: int
    completed: bool
    will_retry: bool


@dataclass
class RunModel:
    """Just enough of a Run's state to know which records are legal next."""

    log: LogBuilder = field(default_factory=LogBuilder)
    attempts: int = 0
    turn_open: bool = False
    model_open: bool = False
    suspended: bool = False
    aborted: bool = False
    calls: int = 0
    open_calls: dict[str, str] = field(default_factory=dict)
    handles: list[str] = field(default_factory=list)
    pending_entries: list[str] = field(default_factory=list)
    entries: int = 0
    steps: dict[str, StepModel] = field(default_factory=dict)
    live_children: dict[str, str] = field(default_factory=dict)
    finished_children: list[str] = field(default_factory=list)
    children: int = 0

    def natural_next(self) -> Callable[[Draw], None]:
        """The step an agent loop would take next, so generated logs look like real runs."""
        if self.suspended:
            return self.resume
        if not self.attempts:
            return self.attempt
        if self.model_open:
            return self.model_finish
        if self.open_calls:
            return self.tool_finish
        if self.turn_open:
            return self.model_start
        return self.turn

    def options(self) -> list[Callable[[Draw], None]]:
        found: list[Callable[[Draw], None]] = [self.natural_next()] * 4
        if self.attempts and not self.suspended:
            found.append(self.tool_start)
            if not self.turn_open:
                found.append(self.turn)
        if self.model_open:
            found.append(self.model_fail)
        if self.open_calls:
            found.append(self.tool_finish)
        if not self.suspended:
            found += [self.attempt, self.suspend]
        found += [self.enqueue, self.step_start, self.spawn, self.advance]
        if self.pending_entries:
            found += [self.cancel, self.consume]
        if self.log.next_seq > 2:
            found.append(self.compact)
        if any(not step.completed for step in self.steps.values()):
            found.append(self.step_complete)
        if self.live_children or self.finished_children:
            found.append(self.message_child)
        if self.live_children:
            found.append(self.child_finish)
        found += [self.tasks, self.component]
        if not self.aborted:
            found.append(self.abort)
        return found

    # attempts, turns, model calls

    def attempt(self, draw: Draw) -> None:
        self.log.attempt(reclaimed=bool(draw(st.booleans())))
        self.attempts += 1
        self.turn_open = self.model_open = False

    def turn(self, draw: Draw) -> None:
        self.log.turn()
        self.turn_open = True

    def model_start(self, draw: Draw) -> None:
        self.log.model_started(model=str(draw(st.sampled_from(["gpt-4o", "small"]))))
        self.model_open = True

    def model_finish(self, draw: Draw) -> None:
        self.log.model_finished(
            usage=draw(USAGES),
            usage_reported=draw(st.booleans()),
            cost=draw(COSTS),
            text=str(draw(st.sampled_from(["", "hello"]))),
        )
        self.turn_open = self.model_open = False
        for _ in range(int(draw(st.integers(0, 2)))):
            self.tool_start(draw)

    def model_fail(self, draw: Draw) -> None:
        self.log.model_failed(will_retry=draw(st.booleans()))
        self.turn_open = self.model_open = False

    # tools

    def tool_start(self, draw: Draw) -> None:
        self.calls += 1
        call_id = f"call_{self.calls}"
        tools = ["lookup", "refund", "run_code"] + (["read_tool_output"] if self.handles else [])
        tool = str(draw(st.sampled_from(tools)))
        arguments: object = draw(ARGUMENTS)
        if tool == "read_tool_output":
            arguments = {"handle": draw(st.sampled_from(self.handles))}
        programs = [cid for cid, name in self.open_calls.items() if name == "run_code"]
        parent = draw(st.sampled_from([None, *programs])) if programs else None
        self.log.tool_started(
            call_id,
            tool=tool,
            arguments=arguments,
            parent_call_id=parent,
            interruptible=draw(st.booleans()),
            safe_to_retry=draw(st.booleans()),
        )
        self.open_calls[call_id] = tool

    def tool_finish(self, draw: Draw) -> None:
        call_id = str(draw(st.sampled_from(sorted(self.open_calls))))
        del self.open_calls[call_id]
        outcome = draw(st.sampled_from(list(ToolOutcome)))
        extra: dict[str, object] = {"result_bytes": draw(st.integers(0, 5000))}
        if outcome is ToolOutcome.OK:
            shape = draw(st.sampled_from(["plain", "handle", "blob", "attachment"]))
            if shape == "blob":
                extra["result_blob_key"] = f"blob/{draw(st.integers(0, 2))}"
                extra["result_content_type"] = "application/json"
            else:
                extra["result"] = draw(RESULTS)
            if shape == "handle":
                extra["result_handle"] = f"h_{call_id}"
                self.handles.append(f"h_{call_id}")
            if shape == "attachment":
                readable = bool(draw(st.booleans()))
                extra["attachments"] = (
                    ResultAttachment(
                        name="stdout",
                        handle=f"a_{call_id}",
                        data=b"out",
                        size_bytes=3,
                        observed_bytes=3,
                        readable=readable,
                    ),
                )
                if readable:
                    self.handles.append(f"a_{call_id}")
        self.log.tool_finished(call_id, outcome, **extra)

    # interrupts, queues, suspension

    def abort(self, draw: Draw) -> None:
        self.log.abort()
        self.aborted = True

    def enqueue(self, draw: Draw) -> None:
        kinds = [QueueKind.NEXT_RUN] if self.aborted else list(QueueKind)
        self.entries += 1
        entry_id = f"entry_{self.entries}"
        self.log.enqueued(
            entry_id, draw(st.sampled_from(kinds)), payload={"message": f"m{self.entries}"}
        )
        self.pending_entries.append(entry_id)

    def cancel(self, draw: Draw) -> None:
        entry_id = str(draw(st.sampled_from(self.pending_entries)))
        self.pending_entries.remove(entry_id)
        self.log.cancelled(entry_id)

    def consume(self, draw: Draw) -> None:
        entry_id = str(draw(st.sampled_from(self.pending_entries)))
        self.pending_entries.remove(entry_id)
        self.log.consumed(entry_id)

    def suspend(self, draw: Draw) -> None:
        reason = draw(st.sampled_from(list(SuspendReason)))
        open_calls = sorted(self.open_calls)
        pending = draw(st.sampled_from([None, *open_calls])) if open_calls else None
        step_id = draw(st.sampled_from([None, *sorted(self.steps)])) if self.steps else None
        self.log.suspended(reason, pending_call_id=pending, step_id=step_id, question="?")
        self.suspended = True
        self.turn_open = self.model_open = False

    def resume(self, draw: Draw) -> None:
        self.log.advance(float(draw(st.integers(0, 7200))))
        payload = draw(st.sampled_from([{}, {"step_mode": True}, {"step_mode": False}, {"a": 1}]))
        self.log.resumed(approved=draw(st.sampled_from([None, True, False])), payload=payload)
        self.suspended = False

    def advance(self, draw: Draw) -> None:
        self.log.advance(float(draw(st.integers(0, 600))))

    def compact(self, draw: Draw) -> None:
        last = self.log.next_seq - 1
        start = int(draw(st.integers(1, last)))
        end = int(draw(st.integers(start, last)))
        self.log.compacted(
            start,
            end,
            model=draw(st.sampled_from(["", "summariser"])),
            usage=draw(USAGES),
            usage_reported=draw(st.booleans()),
            cost=draw(COSTS),
        )

    # steps

    def step_start(self, draw: Draw) -> None:
        restartable = sorted(
            sid for sid, step in self.steps.items() if not step.completed or step.will_retry
        )
        choice = draw(st.sampled_from([None, *restartable]))
        if choice is None:
            step_id = f"step_{len(self.steps) + 1}"
            number = 1
        else:
            step_id = str(choice)
            number = self.steps[step_id].attempt + 1
        kind = draw(st.sampled_from(["tool", "set_state", "agent"]))
        self.log.step_started(step_id, kind=kind, attempt_number=number, input={"n": number})
        self.steps[step_id] = StepModel(attempt=number, completed=False, will_retry=False)

    def step_complete(self, draw: Draw) -> None:
        open_steps = sorted(sid for sid, step in self.steps.items() if not step.completed)
        step_id = str(draw(st.sampled_from(open_steps)))
        shape = draw(st.sampled_from(["output", "failure", "retry", "skipped"]))
        failure = ToolFailure(kind="boom")
        if shape == "output":
            self.log.step_completed(step_id, output={"v": draw(SMALL_JSON)})
        elif shape == "failure":
            self.log.step_completed(step_id, failure=failure)
        elif shape == "retry":
            self.log.step_completed(step_id, failure=failure, will_retry=True)
        else:
            self.log.step_completed(step_id, skipped=True)
        self.steps[step_id] = StepModel(
            attempt=self.steps[step_id].attempt, completed=True, will_retry=shape == "retry"
        )

    # content and children

    def tasks(self, draw: Draw) -> None:
        self.log.tasks(*draw(st.lists(st.sampled_from(["plan", "do", "check"]), max_size=3)))

    def component(self, draw: Draw) -> None:
        self.log.component(kind=str(draw(st.sampled_from(["card", "metric", "chart"]))))

    def spawn(self, draw: Draw) -> None:
        free = [
            n for n in ("researcher", "writer", "critic") if n not in self.live_children.values()
        ]
        if not free:
            return
        self.children += 1
        child = f"run_child_{self.children}"
        name = str(draw(st.sampled_from(free)))
        self.log.spawned(child, name=name, background=draw(st.booleans()))
        self.live_children[child] = name

    def message_child(self, draw: Draw) -> None:
        known = sorted(self.live_children) + self.finished_children
        child = str(draw(st.sampled_from(known)))
        self.log.messaged_child(child)

    def child_finish(self, draw: Draw) -> None:
        child = str(draw(st.sampled_from(sorted(self.live_children))))
        name = self.live_children.pop(child)
        self.finished_children.append(child)
        self.log.child_finished(
            child,
            name=name,
            state=draw(st.sampled_from(list(TerminalState))),
            usage=draw(USAGES),
            cost=draw(COSTS),
        )


@st.composite
def valid_logs(draw: Draw) -> list[Record]:
    model = RunModel()
    model.log.admitted(input={"message": "hi"})
    for _ in range(int(draw(st.integers(0, 45)))):
        action = draw(st.sampled_from(model.options()))
        action(draw)
    if draw(st.booleans()):
        model.log.settled(draw(st.sampled_from(list(TerminalState))))
    return model.log.build()


PROPERTY_SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROPERTY_SETTINGS
@given(valid_logs())
def test_every_generated_log_folds(log: list[Record]) -> None:
    state = reduce(log)
    assert state.head_seq == len(log)
    assert state.admitted


@PROPERTY_SETTINGS
@given(valid_logs())
def test_a_continued_fold_equals_the_whole_fold_at_every_split(log: list[Record]) -> None:
    whole = reduce(log)
    for k in range(1, len(log) + 1):
        prior = reduce(log[:k])
        untouched = reduce(log[:k])
        assert reduce(log[k:], prior=prior) == whole, f"split at {k}"
        assert prior == untouched, f"prior mutated at split {k}"


@PROPERTY_SETTINGS
@given(valid_logs())
def test_folding_record_by_record_equals_reduce(log: list[Record]) -> None:
    state = RunStateView(run_id=log[0].run_id, scope=log[0].scope)
    for record in log:
        fold_into(state, record)
    assert state == reduce(log)


@PROPERTY_SETTINGS
@given(valid_logs(), st.data())
def test_a_chain_of_continued_folds_equals_the_whole_fold(
    log: list[Record], data: st.DataObject
) -> None:
    cuts = sorted(data.draw(st.sets(st.integers(1, len(log)), max_size=5)))
    state = reduce(log[: cuts[0]] if cuts else log)
    previous = cuts[0] if cuts else len(log)
    for cut in [*cuts[1:], len(log)]:
        state = reduce(log[previous:cut], prior=state)
        previous = cut
    assert state == reduce(log)


@PROPERTY_SETTINGS
@given(valid_logs(), st.data())
def test_a_record_out_of_place_is_refused_at_that_record(
    log: list[Record], data: st.DataObject
) -> None:
    index = data.draw(st.integers(0, len(log) - 1))
    wrong = data.draw(st.integers(1, len(log) + 5).filter(lambda seq: seq != index + 1))
    broken = [*log[:index], log[index].model_copy(update={"seq": wrong}), *log[index + 1 :]]
    with pytest.raises(CorruptLog) as info:
        reduce(broken)
    assert info.value.reason is CorruptionReason.NON_CONSECUTIVE_SEQ
    assert info.value.seq == wrong


@PROPERTY_SETTINGS
@given(valid_logs(), st.data(), st.sampled_from(["run_id", "scope"]))
def test_a_foreign_record_is_refused_wherever_it_appears(
    log: list[Record], data: st.DataObject, field_name: str
) -> None:
    index = data.draw(st.integers(1, len(log) - 1)) if len(log) > 1 else 0
    foreign = {"run_id": "run_elsewhere", "scope": Scope(tenant="globex")}[field_name]
    broken = [*log[:index], log[index].model_copy(update={field_name: foreign}), *log[index + 1 :]]
    if index == 0:
        # the first record defines the fold's run and tenant, so it cannot be foreign
        assert reduce(broken).head_seq == len(log)
        return
    with pytest.raises(CorruptLog) as info:
        reduce(broken)
    assert info.value.reason is CorruptionReason.UNKNOWN_OPERATION
    assert info.value.seq == index + 1
