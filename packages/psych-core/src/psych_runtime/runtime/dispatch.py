"""Publishing Specs, admitting Runs, and the control calls a consumer makes on them."""

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from psych_runtime.core.errors import PsychError, RunNotFound, VersionNotFound
from psych_runtime.core.ids import EntryId, RunId, VersionHash
from psych_runtime.core.records import (
    AbortRequested,
    JsonObject,
    QueueEnqueued,
    QueueKind,
    Record,
    RunAdmitted,
)
from psych_runtime.core.reducer import fold_into
from psych_runtime.core.scope import DEFAULT_SCOPE, Scope
from psych_runtime.core.spec import AgentSpec, WorkflowSpec, walk_steps
from psych_runtime.core.state import RunStateView
from psych_runtime.core.storable import check_storable
from psych_runtime.core.validation import ValidationContext, validate
from psych_runtime.core.version import HASH_PATTERN, Version
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.ids import new_entry_id, new_run_id
from psych_runtime.runtime.reads import FOLDS, checked_header
from psych_runtime.store.checks import check_key, key_problem, no_run_can_match
from psych_runtime.store.errors import SeqConflict
from psych_runtime.store.port import RunHeader, RunState, Store

_APPEND_RETRIES = 16
_HASH = re.compile(HASH_PATTERN)

MAX_DEADLINE_SECONDS = 86_400.0
"""The longest deadline a dispatch may set: a day, the bound a Spec's limits have too."""


class InvalidDispatch(PsychError, ValueError):
    """A ``dispatch`` argument is out of range; nothing was written.

    Attributes:
        argument: the parameter's name.
        value: the value given.
    """

    def __init__(self, argument: str, value: object, rule: str) -> None:
        super().__init__(f"dispatch: {argument}={value!r} is refused: {rule}")
        self.argument = argument
        self.value = value


def _check_deadline(deadline_seconds: float | None) -> None:
    """Refuse a deadline override that is not a finite, positive span of at most a day.

    A zero or negative deadline would abort the Run the moment it is claimed, and a
    NaN, an infinity or a huge number cannot be added to a date at all.
    """
    if deadline_seconds is None:
        return
    if isinstance(deadline_seconds, bool) or not isinstance(deadline_seconds, int | float):
        raise InvalidDispatch("deadline_seconds", deadline_seconds, "it must be a number")
    try:
        seconds = float(deadline_seconds)
    except OverflowError:  # an int too large for a float
        seconds = math.inf
    if not math.isfinite(seconds):
        raise InvalidDispatch("deadline_seconds", deadline_seconds, "it must be finite")
    if not 0 < seconds <= MAX_DEADLINE_SECONDS:
        raise InvalidDispatch(
            "deadline_seconds",
            deadline_seconds,
            f"it must be above 0 and at most {MAX_DEADLINE_SECONDS:g} seconds",
        )


class RunAlreadySettled(PsychError):
    """The Run has ended; it takes no more messages."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id!r} has already settled")
        self.run_id = run_id


@dataclass(frozen=True, slots=True)
class Dispatched:
    """What ``dispatch`` did.

    Attributes:
        run_id: the Run, new or (for a repeated idempotency key) existing.
        created: False when an earlier dispatch with the same key made the Run, so a
            retrying caller can tell whether its retry did the work.
    """

    run_id: RunId
    created: bool


class SharedVersionScope(PsychError, ValueError):
    """``publish`` was given both a tenant's Scope and ``shared=True``.

    A shared Version belongs to no tenant, so the two say opposite things.
    """

    def __init__(self, tenant: str) -> None:
        super().__init__(
            f"publish(shared=True) makes a Version every tenant may use; it takes no "
            f"scope (got tenant {tenant!r}). Pass one or the other."
        )
        self.tenant = tenant


async def publish(
    store: Store,
    spec: AgentSpec | WorkflowSpec | JsonObject,
    *,
    scope: Scope | None = None,
    shared: bool = False,
    context: ValidationContext | None = None,
) -> Version:
    """Validate a Spec, hash it into a Version, and store it for a tenant.

    A Version belongs to the tenant that published it: only that tenant can dispatch
    it or read it back. The hash depends on the Spec alone, so two tenants publishing
    the same Spec get the same hash, each with a grant of its own that the other never
    sees. Publishing the same Spec again for the same tenant returns the Version it
    already holds, with its original ``published_at``.

    Args:
        store: where the Version is kept.
        spec: the Spec, as a model or as plain data.
        scope: the tenant the Version belongs to. Left out, it is the default Scope
            (tenant ``"default"``), the same one ``session()`` uses, so a
            single-tenant program needs no scope anywhere.
        shared: publish for every tenant instead (a platform's catalogue agent, say):
            any tenant may dispatch it and read its Runs' reports. Only for Specs
            whose instructions every tenant may see.
        context: what validation checks tool names and models against.

    Raises:
        SpecValidationError: every problem found, each with its path.
        SharedVersionScope: ``shared=True`` was given together with a ``scope``.
        UnstorableValue: the tenant holds a character no store can keep (NUL, a lone
            surrogate).
    """
    if shared and scope is not None:
        raise SharedVersionScope(scope.tenant)
    owner = None if shared else (scope or DEFAULT_SCOPE).tenant
    # Refused before anything is stored, as dispatch refuses it, so no store's driver
    # ever meets a tenant it cannot keep.
    check_key(owner, "tenant")
    checked = validate(spec, context=context)
    return await store.put_version(Version.of(checked, utcnow()), tenant=owner)


def _input(message: str | None, input: JsonObject | None) -> JsonObject:
    data: JsonObject = dict(input or {})
    if message is not None:
        data["message"] = message
    return data


async def dispatch(
    store: Store,
    version: Version | VersionHash,
    message: str | None = None,
    *,
    input: JsonObject | None = None,
    scope: Scope,
    idempotency_key: str | None = None,
    continues: RunId | None = None,
    deadline_seconds: float | None = None,
    replay_of: RunId | None = None,
    replay_from: str | None = None,
    breakpoints: Sequence[str] = (),
    step_mode: bool = False,
) -> Dispatched:
    """Admit a Run of ``version`` for ``scope``; a Worker will pick it up.

    Admission writes the Run's header and its ``run_admitted`` record in one store
    operation, so no Worker can ever claim a Run whose log is empty.

    Args:
        store: where the Run is admitted.
        version: a Version published for ``scope``'s tenant or shared, or its hash.
        message: the user's message; becomes ``input["message"]``.
        input: structured input for the Run.
        scope: the tenant (and principal) the Run acts for.
        idempotency_key: a repeated key (within the tenant) returns the existing Run.
        continues: the previous Run of the same conversation, whose history the new
            Run carries; it must belong to the same tenant.
        deadline_seconds: overrides the Spec's ``limits.deadline_seconds``.
        replay_of: (workflows) an earlier Run of the same tenant whose completed
            top-level steps before ``replay_from`` are reused instead of run again.
        replay_from: (workflows) the top-level step from which the replay executes.
        breakpoints: (workflows) step names the Run suspends before (``breakpoint``);
            a resume with ``{"step_mode": true}`` then stops before every step.
        step_mode: (workflows) suspend before every step from the start.

    Raises:
        VersionNotFound: the Version is not published for ``scope``'s tenant and not
            shared (the same error whether or not another tenant holds it).
        AccessDenied: ``continues`` names another tenant's Run.
        RunNotFound: ``continues`` names no Run.
        InvalidDispatch: ``deadline_seconds`` is not finite, not positive, or longer
            than ``MAX_DEADLINE_SECONDS``; or a replay or breakpoint names no step of
            the workflow, or is asked of an agent.
        UnstorableValue: the tenant, principal or idempotency key holds a character no
            store can keep (NUL, a lone surrogate), or the input a value not every
            store can keep.
    """
    # Everything the caller passed is checked before the store is asked anything, so a
    # refused dispatch neither writes nor sends a driver a value it would choke on.
    _check_deadline(deadline_seconds)
    check_key(scope.tenant, "tenant")
    check_key(scope.principal, "principal")
    check_key(idempotency_key, "idempotency_key")
    admitted_input = _input(message, input)
    check_storable(admitted_input, what="the Run's input")
    check_storable(scope.labels, what="the scope's labels")
    if continues is not None and no_run_can_match(continues):
        raise RunNotFound(continues)
    if isinstance(version, str) and key_problem(version) is not None:
        raise VersionNotFound(version)
    # Even a Version object is looked up: holding one (built or imported locally)
    # proves nothing about whether this tenant published it or it was shared.
    version_hash = version.hash if isinstance(version, Version) else version
    # A string that is not a hash names no Version; it never reaches the store.
    if not isinstance(version_hash, str) or _HASH.fullmatch(version_hash) is None:
        raise VersionNotFound(str(version_hash))
    found = await store.get_version(version_hash, tenant=scope.tenant)
    if found is None:
        raise VersionNotFound(version_hash)
    pinned = found
    if continues is not None:
        await checked_header(store, continues, scope)
    _check_debugging(pinned.spec, replay_of, replay_from, breakpoints, step_mode)
    if replay_of is not None:
        await checked_header(store, replay_of, scope)
    now = utcnow()
    seconds = (
        deadline_seconds if deadline_seconds is not None else pinned.spec.limits.deadline_seconds
    )
    deadline = now + timedelta(seconds=seconds)
    run_id = new_run_id()
    header = RunHeader(
        run_id=run_id,
        scope=scope,
        version_hash=pinned.hash,
        state=RunState.RUNNABLE,
        created_at=now,
        deadline_at=deadline,
        idempotency_key=idempotency_key,
        continues_run_id=continues,
    )
    admitted = RunAdmitted(
        run_id=run_id,
        seq=1,
        at=now,
        scope=scope,
        version_hash=pinned.hash,
        input=admitted_input,
        idempotency_key=idempotency_key,
        deadline_at=deadline,
        continues_run_id=continues,
        replays_run_id=replay_of,
        replay_from_step=replay_from,
        breakpoints=tuple(breakpoints),
        step_mode=step_mode,
    )
    result = await store.create_run(header, admitted)
    return Dispatched(run_id=result.header.run_id, created=result.created)


def _check_debugging(
    spec: AgentSpec | WorkflowSpec,
    replay_of: RunId | None,
    replay_from: str | None,
    breakpoints: Sequence[str],
    step_mode: bool,
) -> None:
    """Refuse replay and breakpoint settings that could never take effect."""
    asked = replay_of is not None or replay_from is not None or breakpoints or step_mode
    if not asked:
        return
    if not isinstance(spec, WorkflowSpec):
        argument = "replay_of" if replay_of is not None else "breakpoints"
        value = replay_of if replay_of is not None else (breakpoints or step_mode)
        raise InvalidDispatch(argument, value, "replays and breakpoints apply to workflows")
    if (replay_of is None) != (replay_from is None):
        raise InvalidDispatch(
            "replay_from", replay_from, "a replay needs both replay_of and replay_from"
        )
    top = [step.name for step in spec.steps]
    if replay_from is not None and replay_from not in top:
        raise InvalidDispatch("replay_from", replay_from, "it names no top-level step")
    names = {step.name for _, step in walk_steps(spec.steps)}
    unknown = sorted(set(breakpoints) - names)
    if unknown:
        raise InvalidDispatch("breakpoints", unknown, "they name no step of the workflow")


async def _append_external(
    store: Store,
    run_id: RunId,
    header: RunHeader,
    build: Callable[[RunStateView, int, Scope], Record | Sequence[Record] | None],
) -> Record | None:
    """Append consumer records at the head, retrying when a Worker writes first.

    ``build`` sees the current state, the next seq and the Run's own scope, and returns
    the record (or the records, numbered from that seq) to write, or None to write
    nothing. The records are folded onto the current state before they are written,
    so a message the protocol forbids (a steer after an abort) raises ``CorruptLog``
    here and never reaches the log. Returns the last record written.
    """
    for _ in range(_APPEND_RETRIES):
        fold = await FOLDS.fold(store, run_id)
        built = build(fold.state, fold.state.head_seq + 1, header.scope)
        if built is None:
            return None
        batch: list[Record] = list(built) if isinstance(built, Sequence) else [built]
        probe = fold.state.copy()
        for record in batch:
            fold_into(probe, record)
        try:
            await store.append(run_id, batch[0].seq, batch)
        except SeqConflict:
            continue
        return batch[-1]
    raise SeqConflict(run_id, -1)


async def interrupt(
    store: Store,
    run_id: RunId,
    *,
    reason: str = "",
    by: str | None = None,
    scope: Scope | None = None,
) -> bool:
    """Ask a Run to stop; returns False when it had already settled or been asked.

    The Worker sees the request at its next check (after the tool call in progress,
    or before the next turn) and settles the Run ``aborted``. A suspended Run is woken
    for that, and a call that waited for a decision is closed without running.
    """
    header = await checked_header(store, run_id, scope)
    waiting = False

    def build(state: RunStateView, seq: int, run_scope: Scope) -> Record | None:
        nonlocal waiting
        if state.settled or state.aborted:
            return None
        waiting = state.suspended
        return AbortRequested(
            run_id=run_id, seq=seq, at=utcnow(), scope=run_scope, reason=reason, requested_by=by
        )

    asked = await _append_external(store, run_id, header, build) is not None
    if asked and waiting:
        # Nobody holds a suspended Run: wake it so a Worker settles it now.
        await store.set_runnable_at(run_id, None)
    return asked


async def send(
    store: Store,
    run_id: RunId,
    message: str | JsonObject,
    *,
    queue: QueueKind = QueueKind.STEER,
    scope: Scope | None = None,
) -> EntryId:
    """Queue a message for a Run: into its next turn, after its work, or its successor.

    Raises:
        RunAlreadySettled: the Run has ended (start a continuation instead).
        CorruptLog: a steer or follow-up after the Run was asked to stop.
    """
    header = await checked_header(store, run_id, scope)
    payload: JsonObject = {"message": message} if isinstance(message, str) else dict(message)
    entry_id = new_entry_id()

    def build(state: RunStateView, seq: int, run_scope: Scope) -> Record | None:
        if state.settled:
            raise RunAlreadySettled(run_id)
        return QueueEnqueued(
            run_id=run_id,
            seq=seq,
            at=utcnow(),
            scope=run_scope,
            queue=queue,
            entry_id=entry_id,
            payload=payload,
        )

    await _append_external(store, run_id, header, build)
    return entry_id
