"""Store-backed reads: every one a projection of a fold over the Run's log.

Nothing derived is ever stored. To keep repeated reads cheap, this process remembers
the last fold of each recently read Run, keyed by how far it had read, and only folds
the new tail next time. The cache is derived data living in memory, so it cannot drift
from the log: the log only grows, and a continued fold equals a whole fold.
"""

import asyncio
import itertools
import weakref
from collections import OrderedDict
from collections.abc import AsyncGenerator
from dataclasses import dataclass

from psych_runtime.core.corruption import CorruptionReason
from psych_runtime.core.corruption import CorruptLog
from psych_runtime.core.errors import AccessDenied
from psych_runtime.core.errors import InvalidArgument
from psych_runtime.core.errors import PsychError
from psych_runtime.core.errors import RunNotFound
from psych_runtime.core.errors import VersionNotFound
from psych_runtime.core.errors import shown
from psych_runtime.core.ids import RunId
from psych_runtime.core.projections.answer import AnswerView
from psych_runtime.core.projections.answer import project_answer
from psych_runtime.core.projections.report import build_report
from psych_runtime.core.projections.report_types import RunReport
from psych_runtime.core.projections.status import RunStatus
from psych_runtime.core.projections.status import project_status
from psych_runtime.core.projections.thread import ThreadView
from psych_runtime.core.projections.thread import combine_thread
from psych_runtime.core.projections.thread import project_thread
from psych_runtime.core.records import Record
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.reducer import fold_into
from psych_runtime.core.reducer import reduce
from psych_runtime.core.scope import Scope
from psych_runtime.core.state import RunStateView
from psych_runtime.store.checks import no_run_can_match
from psych_runtime.store.port import RunHeader
from psych_runtime.store.port import Store

_PAGE = 500
_CACHE_SIZE = 512


class RunEndedWithoutAnswer(PsychError):
    """``stream_text`` reached a settlement that is not a completed answer."""

    def __init__(self, run_id: str, state: TerminalState, failure: ToolFailure | None) -> None:
        detail = f": {failure.message}" if failure is not None and failure.message else ""
        super().__init__(f"run {run_id!r} ended {state.value}{detail}")
        self.run_id = run_id
        self.state = state
        self.failure = failure


class RunFailed(RunEndedWithoutAnswer):
    """The Run settled ``failed``."""


class RunAborted(RunEndedWithoutAnswer):
    """The Run settled aborted, abandoned or force-settled."""


@dataclass
class _Fold:
    records: list[Record]
    state: RunStateView


class FoldCache:
    """The most recent folds, per (store, run); derived, bounded, never persisted.

    Entries are keyed by a token this cache hands each store it meets, not by
    ``id(store)``: Python reuses the id of a collected object, and a new store that
    happened to get it must never be served another store's Runs. The cache holds each
    store only weakly; once a store is collected its folds are dropped. A store that
    cannot be weakly referenced is simply never cached.
    """

    def __init__(self, size: int = _CACHE_SIZE) -> None:
        self._size = size
        self._folds: OrderedDict[tuple[int, str], _Fold] = OrderedDict()
        self._stores: dict[int, tuple[weakref.ref[Store], int]] = {}
        self._tokens = itertools.count(1)
        # Filled by weakref callbacks, which may run at any allocation (the garbage
        # collector calls them), so they only append here and the cache itself is
        # tidied at the start of the next call, never in the middle of one.
        self._collected: list[tuple[int, int]] = []

    def __len__(self) -> int:
        """How many folds are held right now (tests and diagnostics only)."""
        return len(self._folds)

    async def fold(self, store: Store, run_id: RunId) -> _Fold:
        """The Run's records and state, reading only what is new since last time.

        The cached fold is extended in place: callers only read it for the duration of
        one call (``state()`` hands out a copy), so nothing outside sees it change.
        Other readers may fill, extend or evict the same entry while this one awaits
        the store; whatever happened, the entry left behind (and returned) includes
        everything this reader read, so a read never goes back in time.
        """
        self._forget_collected()
        token = self._token(store)
        if token is None:
            return await _fold_uncached(store, run_id)
        key = (token, run_id)
        held = self._folds.get(key)
        if held is None:
            records = await _read_all(store, run_id, 0)
            if not records:
                raise RunNotFound(run_id)
        else:
            _extend(held, await _read_all(store, run_id, held.state.head_seq))
            records = held.records
        current = self._folds.get(key)
        if current is None:
            # Nobody filled it meanwhile, or it was evicted while we awaited.
            current = held if held is not None else _Fold(records, reduce(records))
            self._folds[key] = current
        elif current is not held:
            # Another reader filled it while we awaited; it may be behind what we read.
            _extend(current, records)
        self._folds.move_to_end(key)
        while len(self._folds) > self._size:
            self._folds.popitem(last=False)
        return current

    def offer(self, store: Store, records: list[Record], state: RunStateView) -> None:
        """Keep a fold already made elsewhere in this process, so readers need not redo it.

        A Worker whose Attempt ended offers its Journal's records and state: a reader
        waiting for that Run (``Session.wait``, then ``answer``) then reads and folds only
        what was appended after, instead of the whole log again. ``records`` must be the
        Run's whole durable log, from seq 1 on, and ``state`` its fold; both become the
        cache's, so the caller must not change them afterwards. A fold held already
        that reaches as far, or further, is kept instead.
        """
        self._forget_collected()
        token = self._token(store)
        if token is None or len(records) != state.head_seq:
            return
        key = (token, state.run_id)
        held = self._folds.get(key)
        if held is not None and held.state.head_seq >= state.head_seq:
            return
        self._folds[key] = _Fold(records, state)
        self._folds.move_to_end(key)
        while len(self._folds) > self._size:
            self._folds.popitem(last=False)

    def _token(self, store: Store) -> int | None:
        """This cache's token for ``store``; None when the store cannot be watched."""
        address = id(store)
        known = self._stores.get(address)
        if known is not None and known[0]() is store:
            return known[1]
        token = next(self._tokens)
        collected = self._collected
        try:
            watch = weakref.ref(store, lambda _ref: collected.append((address, token)))
        except TypeError:
            return None
        self._stores[address] = (watch, token)
        return token

    def _forget_collected(self) -> None:
        while self._collected:
            address, token = self._collected.pop()
            known = self._stores.get(address)
            if known is not None and known[1] == token:
                del self._stores[address]
            for key in [key for key in self._folds if key[0] == token]:
                del self._folds[key]


def _extend(fold: _Fold, records: list[Record]) -> None:
    """Fold into ``fold`` the records it has not seen yet.

    ``records`` must be consecutive and start at or before the seq just after the
    fold's head. Records at or below the head are skipped: another reader already
    folded them while this one was waiting for the store.
    """
    head = fold.state.head_seq
    for record in records:
        if record.seq > head:
            fold_into(fold.state, record)
            fold.records.append(record)
            head = record.seq


async def _fold_uncached(store: Store, run_id: RunId) -> _Fold:
    records = await _read_all(store, run_id, 0)
    if not records:
        raise RunNotFound(run_id)
    return _Fold(records, reduce(records))


FOLDS = FoldCache()
"""This process's cache of recent folds."""


async def _read_all(store: Store, run_id: RunId, after: int) -> list[Record]:
    out: list[Record] = []
    while True:
        page = await store.read(run_id, after=after, limit=_PAGE)
        out.extend(page)
        if len(page) < _PAGE:
            return out
        after = page[-1].seq


async def checked_header(store: Store, run_id: RunId, scope: Scope | None) -> RunHeader:
    """The Run's header, after checking it exists and belongs to ``scope``'s tenant.

    Raises:
        RunNotFound: no such Run, including an id no store could hold (one with a NUL
            or a lone surrogate), which is never passed to the store.
        AccessDenied: the Run belongs to another tenant.
    """
    if scope is not None and not isinstance(scope, Scope):
        raise InvalidArgument(
            f"scope={shown(scope)} is refused: it must be a Scope", argument="scope"
        )
    if not isinstance(run_id, str) or no_run_can_match(run_id):
        raise RunNotFound(run_id)
    header = await store.get_run(run_id)
    if header is None:
        raise RunNotFound(run_id)
    if scope is not None and header.scope.tenant != scope.tenant:
        raise AccessDenied(f"run {run_id!r} belongs to another tenant")
    return header


async def folded(store: Store, run_id: RunId, scope: Scope | None) -> _Fold:
    """The Run's records and folded state after the access check (do not mutate)."""
    await checked_header(store, run_id, scope)
    return await FOLDS.fold(store, run_id)


async def read_log(
    store: Store,
    run_id: RunId,
    *,
    after: int = 0,
    limit: int | None = None,
    scope: Scope | None = None,
) -> list[Record]:
    """The Run's records with ``seq > after``, at most ``limit`` of them."""
    await checked_header(store, run_id, scope)
    if limit is not None:
        return await store.read(run_id, after=after, limit=limit)
    return await _read_all(store, run_id, after)


async def state(store: Store, run_id: RunId, *, scope: Scope | None = None) -> RunStateView:
    """The raw folded state of the Run (a private copy the caller may keep)."""
    return (await folded(store, run_id, scope)).state.copy()


async def status(store: Store, run_id: RunId, *, scope: Scope | None = None) -> RunStatus:
    """Where the Run stands, in a JSON-friendly shape a screen can draw."""
    fold = await folded(store, run_id, scope)
    return project_status(fold.state)


async def answer(store: Store, run_id: RunId, *, scope: Scope | None = None) -> AnswerView:
    """The Run's final answer, separated from the work that led to it."""
    fold = await folded(store, run_id, scope)
    return project_answer(fold.records)


async def thread(
    store: Store,
    run_id: RunId,
    *,
    scope: Scope | None = None,
    limit: int | None = None,
) -> ThreadView:
    """The conversation of the Run and the Runs it continues, oldest first.

    Walks ``continues_run_id`` back from ``run_id``; stops at a missing ancestor, a
    cycle, or after ``limit`` Runs. An ancestor of another tenant is refused.
    """
    header = await checked_header(store, run_id, scope)
    tenant = header.scope.tenant
    chain: list[RunId] = []
    seen: set[str] = set()
    current: RunHeader | None = header
    while current is not None and current.run_id not in seen:
        if current.scope.tenant != tenant:
            raise AccessDenied(f"run {current.run_id!r} belongs to another tenant")
        chain.append(current.run_id)
        seen.add(current.run_id)
        if limit is not None and len(chain) >= limit:
            break
        previous = current.continues_run_id
        current = await store.get_run(previous) if previous is not None else None
    views = []
    for rid in reversed(chain):
        fold = await FOLDS.fold(store, rid)
        views.append(project_thread(fold.records))
    return combine_thread(views)


async def stream(
    store: Store,
    run_id: RunId,
    *,
    after: int = 0,
    scope: Scope | None = None,
    poll_seconds: float = 0.25,
) -> AsyncGenerator[Record]:
    """Every record after ``after``, then every new one as it lands, until settlement.

    The log is the stream: a client that reconnects with the last seq it saw misses
    nothing. A notifier, when the store has one, wakes the reader the moment a record
    lands; without one it polls every ``poll_seconds``.
    """
    await checked_header(store, run_id, scope)
    notifier = store.notifier
    cursor = after
    while True:
        generation = notifier.generation(run_id) if notifier is not None else 0
        page = await store.read(run_id, after=cursor, limit=_PAGE)
        for record in page:
            if record.seq != cursor + 1:
                raise CorruptLog(
                    CorruptionReason.NON_CONSECUTIVE_SEQ,
                    run_id,
                    record.seq,
                    f"the store returned seq {record.seq} after {cursor}",
                )
            cursor = record.seq
            yield record
            if record.type == "run_settled":
                return
        if len(page) == _PAGE:
            continue
        if notifier is not None:
            await notifier.wait(run_id, generation, poll_seconds)
        else:
            await asyncio.sleep(poll_seconds)


async def stream_text(
    store: Store,
    run_id: RunId,
    *,
    after: int = 0,
    scope: Scope | None = None,
    poll_seconds: float = 0.25,
) -> AsyncGenerator[str]:
    """The assistant's words only, as they are recorded; ends when the Run completes.

    Raises:
        RunFailed: the Run settled ``failed``.
        RunAborted: it was aborted, abandoned or force-settled.
    """
    async for record in stream(store, run_id, after=after, scope=scope, poll_seconds=poll_seconds):
        if record.type == "model_call_finished" and record.text:
            yield record.text
        elif record.type == "run_settled":
            if record.state is TerminalState.COMPLETED:
                return
            if record.state is TerminalState.FAILED:
                raise RunFailed(run_id, record.state, record.failure)
            raise RunAborted(run_id, record.state, record.failure)


async def report(
    store: Store, run_id: RunId, *, child_depth: int = 0, scope: Scope | None = None
) -> RunReport:
    """What a Run did, used, cost and spent its time on, recomputed from its log.

    Each subagent's consumption is already in ``subtree`` (its ending reports it);
    ``child_depth`` levels of subagents also get their own full report attached.

    Args:
        store: where the Run lives.
        run_id: the Run.
        child_depth: how many levels of subagents to report in full (0: none).
        scope: the caller's tenancy; another tenant's Run raises ``AccessDenied``.

    Raises:
        RunNotFound: no such Run.
        AccessDenied: the Run belongs to another tenant.
        VersionNotFound: the Version the Run pinned is missing from the store, or is
            neither the Run's tenant's own nor shared.
        CorruptLog: the log contradicts itself.
    """
    header = await checked_header(store, run_id, scope)
    fold = await FOLDS.fold(store, run_id)
    pinned = fold.state.version_hash
    # The Version is read as the Run's own tenant sees it, so a Run can never be used
    # to read a Version its tenant was not allowed to dispatch.
    version = (
        await store.get_version(pinned, tenant=header.scope.tenant) if pinned is not None else None
    )
    if version is None:
        raise VersionNotFound(str(pinned))
    spec = version.spec
    built = build_report(
        fold.records,
        spec_name=spec.name,
        failure_streak_threshold=spec.limits.failure_streak_threshold,
    )
    if child_depth < 1 or not built.subagents:
        return built
    children = []
    for child in built.subagents:
        nested = await report(store, child.child_run_id, child_depth=child_depth - 1, scope=scope)
        children.append(child.model_copy(update={"report": nested, "subtree": nested.subtree}))
    return built.model_copy(update={"subagents": tuple(children)})
