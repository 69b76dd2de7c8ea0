"""Random sequences of port calls, checked step by step against ``ReferenceStore``.

Hypothesis drives a state machine whose every rule is one Store call with arguments
drawn so that the interesting cases are common: times are a handful of whole and half
seconds, so a lease, a parking time or a deadline often ends exactly at ``now``, and
a few sub-millisecond ones, so a store that keeps milliseconds disagrees; run ids are
random, so ties are not broken by admission order by luck; most calls name a Run the
example admitted; appends often carry a stale fence or a wrong expected seq; tenants
and keys are chosen so that joining them naively collides. After every write the
affected Run's header is read back from both sides and compared. Each rule makes the
same call on the store under test and on the reference model and compares what comes
back (values, or the type of the error), and, for writes, that the store's notifier
signalled what it had to.

The store under test belongs to the test's event loop; Hypothesis runs in a worker
thread and hands each call to that loop. Every example uses ids of its own, and its
Runs are settled when it ends, so one store serves every example without being
emptied. A failing example shrinks to a short, printed sequence of calls.
"""

import asyncio
import itertools
import os
from collections.abc import Awaitable
from collections.abc import Callable
from typing import ClassVar
from typing import TypeVar

from hypothesis import HealthCheck
from hypothesis import Phase
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine
from hypothesis.stateful import initialize
from hypothesis.stateful import rule
from hypothesis.stateful import run_state_machine_as_test

from psych_contract import _data as data
from psych_contract.reference import ReferenceStore
from psych_runtime import PsychError
from psych_runtime import RunId
from psych_runtime import Scope
from psych_runtime import Store
from psych_runtime import VersionHash
from psych_runtime.adapters.store import WORK
from psych_runtime.adapters.store import Fence
from psych_runtime.adapters.store import Notifier
from psych_runtime.adapters.store import RunHeader
from psych_runtime.adapters.store import RunState
from psych_runtime.records import WorkerId

T = TypeVar("T")

_TENANTS = ("a", "a:b", "t-2")
"""Tenant names; with the keys below, ``a:b`` + ``c`` and ``a`` + ``b:c`` join alike."""
_KEYS = (None, None, "c", "b:c", "k")
_WORKERS = ("w1", "w2", "w3")
_SECONDS = (
    st.sampled_from((0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20)).map(float)
    | st.sampled_from((0.5, 2.5, 4.5))
    | st.sampled_from((0.000501, 1.0005, 2.000001, 3.0015, 4.999999))
)
"""Whole and half seconds, so times often coincide, and sub-millisecond ones, so a store
that keeps milliseconds (or rounds) disagrees with the model."""
_LEASES = st.sampled_from((0.5, 1.0, 1.5, 2.0, 5.0, 0.0015, 1.000499, 2.000001))
_ID_PARTS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=4)
"""Random run id parts: ids that do not sort in admission order, so tie-breaks show."""
_FAR = 1_000_000.0
"""Seconds after ``T0`` that outlast every time an example uses (for the clean-up)."""
_CALL_TIMEOUT = 60.0
_RUN_INDEXES = st.integers(0, 15)
_UNKNOWN_FROM = 14
"""Run indexes below this name a Run of the example (seven in eight draws)."""

_examples = itertools.count(1)

DERANDOMIZE_ENV = "PSYCH_CONTRACT_DERANDOMIZE"
"""Set to ``1`` to run the same examples every time (for a reproducible failure)."""
SKIP_SHRINK_ENV = "PSYCH_CONTRACT_SKIP_SHRINK"
"""Set to ``1`` to report the first failing sequence as found, without shortening it."""


def hypothesis_settings(examples: int, steps: int) -> settings:
    """The settings both model-based cases run with, honouring the two variables above."""
    phases = tuple(Phase)
    if os.environ.get(SKIP_SHRINK_ENV) == "1":
        phases = tuple(phase for phase in Phase if phase is not Phase.shrink)
    return settings(
        derandomize=os.environ.get(DERANDOMIZE_ENV) == "1",
        phases=phases,
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


class _Loop:
    """Runs coroutines on the event loop that owns the store, from Hypothesis's thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def run(self, make: Callable[[], Awaitable[T]]) -> T:
        async def call() -> T:
            return await make()

        return asyncio.run_coroutine_threadsafe(call(), self.loop).result(_CALL_TIMEOUT)


def _waiter(notifier: Notifier, key: str, seen: int) -> Callable[[], Awaitable[bool]]:
    return lambda: notifier.wait(key, seen, 2.0)


class _Outcome:
    """A value or the error raised instead, so two outcomes can be compared."""

    def __init__(self, value: object = None, error: BaseException | None = None) -> None:
        self.value = value
        self.error = error

    def describe(self) -> str:
        if self.error is not None:
            return f"raised {type(self.error).__name__}: {self.error}"
        return f"returned {self.value!r}"


def _outcome_of[V](call: Callable[[], V]) -> _Outcome:
    try:
        return _Outcome(call())
    except (PsychError, ValueError) as exc:  # the port's refusals
        return _Outcome(error=exc)


class StoreMachine(RuleBasedStateMachine):
    """One example: a fresh model, ids of its own, and the shared store under test."""

    store: ClassVar[Store]
    loop: ClassVar[_Loop]

    def __init__(self) -> None:
        super().__init__()
        self.model = ReferenceStore()
        self.tag = f"{data.new_key('mb')}-{next(_examples)}"
        self.runs: list[RunId] = []
        self.hashes: list[VersionHash] = []

    # --- helpers -----------------------------------------------------------------------

    def _tenant(self, index: int) -> str:
        return f"{self.tag}-{_TENANTS[index % len(_TENANTS)]}"

    def _worker(self, index: int) -> WorkerId:
        return WorkerId(f"{self.tag}-{_WORKERS[index % len(_WORKERS)]}")

    def _run(self, index: int) -> RunId:
        """Mostly a Run of this example; an unknown id for the top two indexes."""
        if not self.runs or index >= _UNKNOWN_FROM:
            return RunId(f"{self.tag}-unknown")
        return self.runs[index % len(self.runs)]

    def _reread(self, *run_ids: RunId | None) -> None:
        """After a write, the store's header of each Run must still equal the model's."""
        for run_id in dict.fromkeys(r for r in run_ids if r is not None):
            self._both(
                "get_run after a write",
                lambda run_id=run_id: self.store.get_run(run_id),  # type: ignore[misc]
                lambda run_id=run_id: self.model.get_run(run_id, None),  # type: ignore[misc]
            )

    def _both(
        self, name: str, store_call: Callable[[], Awaitable[T]], model_call: Callable[[], T]
    ) -> T | None:
        """Make one call on both sides and insist they agree; return the store's value."""
        notifier = self.store.notifier
        watched = [WORK, *self.runs]
        seen = {key: notifier.generation(key) for key in watched} if notifier else {}
        self.model.signals = set()
        expected = _outcome_of(model_call)
        try:
            got = _Outcome(self.loop.run(store_call))
        except (PsychError, ValueError) as exc:
            got = _Outcome(error=exc)
        if expected.error is not None or got.error is not None:
            assert expected.error is not None and isinstance(got.error, type(expected.error)), (
                f"{name}: the store {got.describe()}, the reference model {expected.describe()}"
            )
            return None
        assert got.value == expected.value, (
            f"{name}: the store returned\n  {got.value!r}\n"
            f"the reference model\n  {expected.value!r}"
        )
        if notifier is not None:
            for key in sorted(self.model.signals):
                woke = self.loop.run(_waiter(notifier, key, seen.get(key, 0)))
                assert woke, f"{name}: the notifier was not signalled for {key!r}"
        return got.value  # type: ignore[return-value]

    # --- admission and headers ---------------------------------------------------------

    @initialize()
    def start(self) -> None:
        """Every example starts with one plain runnable Run."""
        self.admit(0, 0, 0.0, None, 60.0, 0, True, False, "a")

    @rule(
        tenant=st.integers(0, 2),
        key=st.integers(0, len(_KEYS) - 1),
        created=_SECONDS,
        parked=st.none() | _SECONDS,
        deadline=_SECONDS | st.just(60.0),
        state=st.integers(0, 5),
        child=st.booleans(),
        reuse=st.booleans(),
        part=_ID_PARTS,
    )
    def admit(
        self,
        tenant: int,
        key: int,
        created: float,
        parked: float | None,
        deadline: float,
        state: int,
        child: bool,
        reuse: bool,
        part: str,
    ) -> None:
        """``create_run``: random ids, repeated keys, and now and then a repeated run id."""
        fresh = RunId(f"{self.tag}-{part}-{len(self.runs)}")
        run_id = self.runs[-1] if reuse and self.runs else fresh
        chosen = (
            RunState.RUNNABLE,
            RunState.RUNNABLE,
            RunState.RUNNABLE,
            RunState.SUSPENDED,
            RunState.NESTED,
            RunState.RUNNABLE,
        )[state]
        idempotency = _KEYS[key]
        header = RunHeader(
            run_id=run_id,
            scope=Scope(tenant=self._tenant(tenant), principal="p", labels={"l": "v"}),
            version_hash=data.VERSION_HASH,
            state=chosen,
            created_at=data.at(created),
            deadline_at=data.at(deadline),
            idempotency_key=None if idempotency is None else f"{idempotency}",
            runnable_at=None if parked is None else data.at(parked),
            parent_run_id=RunId(f"{self.tag}-parent") if child else None,
            delegation_depth=2 if child else 0,
            continues_run_id=RunId(f"{self.tag}-before") if child else None,
        )
        admitted = data.admitted_for(header)
        result = self._both(
            "create_run",
            lambda: self.store.create_run(header, admitted),
            lambda: self.model.create_run(header, admitted),
        )
        if result is not None and result.created and run_id not in self.runs:
            self.runs.append(run_id)
        self._reread(run_id, None if result is None else result.header.run_id)

    @rule(run=_RUN_INDEXES, tenant=st.none() | st.integers(0, 2))
    def get_run(self, run: int, tenant: int | None) -> None:
        """``get_run``, with the owner's tenant, another tenant's or none."""
        run_id = self._run(run)
        scoped = None if tenant is None else self._tenant(tenant)
        self._both(
            "get_run",
            lambda: self.store.get_run(run_id, tenant=scoped),
            lambda: self.model.get_run(run_id, scoped),
        )

    # --- the log -----------------------------------------------------------------------

    @rule(
        run=_RUN_INDEXES,
        offset=st.sampled_from((0, 0, 0, 1, -1, 2)),
        size=st.integers(1, 3),
        fence=st.sampled_from(("none", "holder", "holder", "stale", "other")),
    )
    def append(self, run: int, offset: int, size: int, fence: str) -> None:
        """Fenced and unfenced batches at the right seq, a wrong one, or an unknown Run."""
        run_id = self._run(run)
        header = self.model.headers.get(run_id)
        first = self.model.head(run_id) + 1 + offset
        if first < 1:
            first = 1
        target = header if header is not None else data.header(run_id)
        records = data.batch(target, first, size)
        chosen: Fence | None = None
        if fence != "none" and header is not None:
            holder = header.lease_holder or self._worker(0)
            if fence == "holder":
                chosen = Fence(holder, header.attempt_count)
            elif fence == "stale":
                chosen = Fence(holder, header.attempt_count - 1)
            else:
                chosen = Fence(WorkerId(f"{holder}-other"), header.attempt_count)
        self._both(
            "append",
            lambda: self.store.append(run_id, first, records, fence=chosen),
            lambda: self.model.append(run_id, first, records, chosen),
        )
        self._reread(run_id)

    @rule(
        run=_RUN_INDEXES,
        after=st.integers(0, 6),
        limit=st.none() | st.integers(0, 3),
        tenant=st.none() | st.integers(0, 2),
    )
    def read(self, run: int, after: int, limit: int | None, tenant: int | None) -> None:
        """Windows of the log, through a tenant filter or not; and ``head``."""
        run_id = self._run(run)
        scoped = None if tenant is None else self._tenant(tenant)
        self._both(
            "read",
            lambda: self.store.read(run_id, after=after, limit=limit, tenant=scoped),
            lambda: self.model.read(run_id, after, limit, scoped),
        )
        self._both("head", lambda: self.store.head(run_id), lambda: self.model.head(run_id))

    # --- leases ------------------------------------------------------------------------

    @rule(worker=st.integers(0, 2), now=_SECONDS, lease=_LEASES)
    def claim(self, worker: int, now: float, lease: float) -> None:
        """``claim`` at a chosen instant: order, parking, expiry and fractional leases."""
        worker_id = self._worker(worker)
        claimed = self._both(
            "claim",
            lambda: self.store.claim(worker_id, data.at(now), lease),
            lambda: self.model.claim(worker_id, data.at(now), lease),
        )
        self._reread(None if claimed is None else claimed.run_id)

    @rule(
        run=_RUN_INDEXES,
        worker=st.integers(0, 2),
        now=_SECONDS,
        lease=_LEASES,
        attempt=st.sampled_from(("none", "current", "older")),
    )
    def renew(self, run: int, worker: int, now: float, lease: float, attempt: str) -> None:
        """``renew`` by the holder, someone else, and with a current or older attempt."""
        run_id = self._run(run)
        worker_id = self._holder_or(run_id, worker)
        count = self._attempt(run_id, attempt)
        self._both(
            "renew",
            lambda: self.store.renew(run_id, worker_id, data.at(now), lease, attempt_count=count),
            lambda: self.model.renew(run_id, worker_id, data.at(now), lease, count),
        )
        self._reread(run_id)

    @rule(
        run=_RUN_INDEXES,
        worker=st.integers(0, 2),
        state=st.sampled_from(
            (RunState.RUNNABLE, RunState.SUSPENDED, RunState.SETTLED, RunState.NESTED)
        ),
        parked=st.none() | _SECONDS,
        deadline=st.none() | _SECONDS,
        attempt=st.sampled_from(("none", "current", "older")),
    )
    def release(
        self,
        run: int,
        worker: int,
        state: RunState,
        parked: float | None,
        deadline: float | None,
        attempt: str,
    ) -> None:
        """``release`` to any state, parked or not, with a new deadline or not."""
        run_id = self._run(run)
        worker_id = self._holder_or(run_id, worker)
        count = self._attempt(run_id, attempt)
        until = None if parked is None else data.at(parked)
        new_deadline = None if deadline is None else data.at(deadline)
        self._both(
            "release",
            lambda: self.store.release(
                run_id,
                worker_id,
                state,
                runnable_at=until,
                deadline_at=new_deadline,
                attempt_count=count,
            ),
            lambda: self.model.release(run_id, worker_id, state, until, new_deadline, count),
        )
        self._reread(run_id)

    @rule(run=_RUN_INDEXES)
    def settle_inline(self, run: int) -> None:
        """``settle_inline`` on nested and on every other kind of Run."""
        run_id = self._run(run)
        self._both(
            "settle_inline",
            lambda: self.store.settle_inline(run_id),
            lambda: self.model.settle_inline(run_id),
        )
        self._reread(run_id)

    @rule(run=_RUN_INDEXES, until=st.none() | _SECONDS)
    def set_runnable_at(self, run: int, until: float | None) -> None:
        """Parking and unparking any Run, settled and suspended ones included."""
        run_id = self._run(run)
        when = None if until is None else data.at(until)
        self._both(
            "set_runnable_at",
            lambda: self.store.set_runnable_at(run_id, when),
            lambda: self.model.set_runnable_at(run_id, when),
        )
        self._reread(run_id)

    # --- sweeps ------------------------------------------------------------------------

    @rule(now=_SECONDS, limit=st.sampled_from((1, 2, 100)))
    def sweeps(self, now: float, limit: int) -> None:
        """``expired_leases`` and ``overdue_deadlines`` at a chosen instant."""
        when = data.at(now)
        self._both(
            "expired_leases",
            lambda: self.store.expired_leases(when, limit),
            lambda: self.model.expired_leases(when, limit),
        )
        self._both(
            "overdue_deadlines",
            lambda: self.store.overdue_deadlines(when, limit),
            lambda: self.model.overdue_deadlines(when, limit),
        )

    # --- versions ----------------------------------------------------------------------

    @rule(name=st.integers(0, 2), tenant=st.none() | st.integers(0, 2), published=_SECONDS)
    def put_version(self, name: int, tenant: int | None, published: float) -> None:
        """``put_version`` of a few Specs, owned by tenants or shared, published at times."""
        version = data.version(f"{self.tag}-v{name}", 0)
        version = version.model_copy(update={"published_at": data.at(published)})
        grantee = None if tenant is None else self._tenant(tenant)
        self._both(
            "put_version",
            lambda: self.store.put_version(version, tenant=grantee),
            lambda: self.model.put_version(version, grantee),
        )
        if version.hash not in self.hashes:
            self.hashes.append(version.hash)

    @rule(index=st.integers(0, 3), tenant=st.none() | st.integers(0, 2))
    def get_version(self, index: int, tenant: int | None) -> None:
        """``get_version`` with each tenant, none, and for an unknown hash."""
        known = index < len(self.hashes)
        version_hash = self.hashes[index] if known else VersionHash("sha256:" + "cd" * 32)
        if not known:
            version_hash = data.version(f"{self.tag}-never", 0).hash
        scoped = None if tenant is None else self._tenant(tenant)
        self._both(
            "get_version",
            lambda: self.store.get_version(version_hash, tenant=scoped),
            lambda: self.model.get_version(version_hash, scoped),
        )

    # --- the end of an example -----------------------------------------------------------

    def teardown(self) -> None:
        """Settle every Run this example left claimable, so later examples never see them."""
        cleaner = WorkerId(f"{self.tag}-cleaner")
        far = data.at(_FAR)

        async def settle_all() -> None:
            for run_id in self.runs:
                header = await self.store.get_run(run_id)
                if header is None:
                    continue
                if header.state is RunState.NESTED:
                    await self.store.settle_inline(run_id)
                elif header.state is not RunState.SETTLED:
                    await self.store.set_runnable_at(run_id, None)
            for _ in range(len(self.runs) + 5):
                claimed = await self.store.claim(cleaner, far, 60.0)
                if claimed is None:
                    return
                await self.store.release(
                    claimed.run_id,
                    cleaner,
                    RunState.SETTLED,
                    attempt_count=claimed.attempt_count,
                )

        self.loop.run(settle_all)

    def _holder_or(self, run_id: RunId, worker: int) -> WorkerId:
        header = self.model.headers.get(run_id)
        if worker == 0 and header is not None and header.lease_holder is not None:
            return header.lease_holder
        return self._worker(worker)

    def _attempt(self, run_id: RunId, attempt: str) -> int | None:
        header = self.model.headers.get(run_id)
        if attempt == "none" or header is None:
            return None
        return header.attempt_count if attempt == "current" else header.attempt_count - 1


async def check_against_reference(store: Store, *, examples: int, steps: int) -> None:
    """Run the state machine against ``store`` for ``examples`` random sequences.

    Called from an async test on the loop that owns ``store``; Hypothesis runs in a
    worker thread meanwhile, and each store call hops back onto this loop.
    """
    machine = type(
        "StoreMachineForTest",
        (StoreMachine,),
        {"store": store, "loop": _Loop(asyncio.get_running_loop())},
    )
    config = hypothesis_settings(examples, steps)
    await asyncio.to_thread(run_state_machine_as_test, machine, settings=config)


__all__ = ["StoreMachine", "check_against_reference"]
