"""Admitting a Run: ``dispatch`` checks its arguments and writes the header and first record."""

import logging
import math
import re
import sys
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from psych_runtime.core.errors import InvalidArgument
from psych_runtime.core.errors import RunNotFound
from psych_runtime.core.errors import VersionNotFound
from psych_runtime.core.errors import shown
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import VersionHash
from psych_runtime.core.records import JsonObject
from psych_runtime.core.scope import Scope
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.spec import WorkflowSpec
from psych_runtime.core.spec import walk_steps
from psych_runtime.core.storable import check_storable
from psych_runtime.core.version import HASH_PATTERN
from psych_runtime.core.version import Version
from psych_runtime.plugins.installed import installed_telemetry
from psych_runtime.runtime.admitted import admission_records
from psych_runtime.runtime.arguments import checked_flag
from psych_runtime.runtime.arguments import checked_object
from psych_runtime.runtime.arguments import checked_text
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.ids import new_run_id
from psych_runtime.runtime.reads import checked_header
from psych_runtime.store.checks import check_key
from psych_runtime.store.checks import key_problem
from psych_runtime.store.checks import no_run_can_match
from psych_runtime.store.port import RunState
from psych_runtime.store.port import Store
from psych_runtime.telemetry.context import admission_trace
from psych_runtime.tools.memory import END_USER_INPUT_KEY

_HASH = re.compile(HASH_PATTERN)

_GRANTS_KEPT = 256
"""Versions remembered per store as visible to a tenant (see ``_visible_version``)."""

_granted: "weakref.WeakKeyDictionary[Store, OrderedDict[tuple[str, str], Version]]" = (
    weakref.WeakKeyDictionary()
)


async def _visible_version(store: Store, version_hash: VersionHash, tenant: str) -> Version | None:
    """The Version ``tenant`` may dispatch, looked up once per store, tenant and hash.

    A Version never changes once published and a grant is never withdrawn, so a
    Version found visible stays visible: repeated dispatches of the same Version skip
    the round trip. Absence is never remembered (it may be published a moment later).
    """
    try:
        known = _granted.get(store)
    except TypeError:  # a store that cannot be weakly referenced or hashed: no memory
        return await store.get_version(version_hash, tenant=tenant)
    key = (tenant, version_hash)
    if known is not None and (found := known.get(key)) is not None:
        known.move_to_end(key)
        return found
    found = await store.get_version(version_hash, tenant=tenant)
    if found is not None:
        if known is None:
            known = _granted.setdefault(store, OrderedDict())
        known[key] = found
        if len(known) > _GRANTS_KEPT:
            known.popitem(last=False)
    return found


log = logging.getLogger(__name__)

MAX_DEADLINE_SECONDS = 86_400.0
"""The longest deadline a dispatch may set: a day, the bound a Spec's limits have too."""


class InvalidDispatch(InvalidArgument):
    """A ``dispatch`` argument is of the wrong kind or out of range; nothing was written.

    Attributes:
        argument: the parameter's name.
        value: the value given.
    """

    def __init__(self, argument: str, value: object, rule: str) -> None:
        super().__init__(
            f"dispatch: {argument}={shown(value)} is refused: {rule}", argument=argument
        )
        self.value = value


MAX_KEY_LENGTH = 256
"""The longest idempotency key, run id or end user id a dispatch accepts."""


def _check_arguments(
    message: object,
    input: object,
    scope: object,
    idempotency_key: object,
    continues: object,
    breakpoints: object,
    step_mode: object,
) -> JsonObject | None:
    """Refuse arguments of the wrong kind before any is used; returns the input's copy."""
    if not isinstance(scope, Scope):
        raise InvalidDispatch("scope", scope, "it must be a Scope")
    checked_text(message, "message", InvalidDispatch, max_length=sys.maxsize)
    checked_text(idempotency_key, "idempotency_key", InvalidDispatch, max_length=MAX_KEY_LENGTH)
    if continues is not None and not isinstance(continues, str):
        # Only the type: an id no Run can have is answered like any unknown Run.
        raise InvalidDispatch("continues", continues, "it must be a run id (a string)")
    if isinstance(breakpoints, str) or not isinstance(breakpoints, Sequence):
        raise InvalidDispatch("breakpoints", breakpoints, "it must be a sequence of step names")
    for name in breakpoints:
        checked_text(name, "breakpoints", InvalidDispatch, max_length=MAX_KEY_LENGTH)
    if checked_flag(step_mode, "step_mode", InvalidDispatch) is None:
        raise InvalidDispatch("step_mode", step_mode, "it must be True or False")
    return checked_object(input, "input", InvalidDispatch)


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


def _input(message: str | None, input: JsonObject | None, end_user_id: str | None) -> JsonObject:
    data: JsonObject = dict(input or {})
    if message is not None:
        data["message"] = message
    if end_user_id is not None:
        if not isinstance(end_user_id, str) or not 1 <= len(end_user_id) <= 256:
            raise InvalidDispatch("end_user_id", end_user_id, "a string of 1 to 256 characters")
        check_key(end_user_id, "end_user_id")
        data[END_USER_INPUT_KEY] = end_user_id
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
    end_user_id: str | None = None,
    trace_context: Mapping[str, str] | None = None,
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
        end_user_id: the person the Run serves, whose remembered facts it may read and
            add to (kept as ``input["end_user_id"]``); required when the Worker's
            Runtime has a MemoryStore, unless the Runtime names one for every Run.
        trace_context: the W3C trace context (``traceparent``, ``tracestate``) the
            Run's spans join, in whichever process runs it. None takes the caller's
            active span from the installed telemetry adapter. When that leaves none
            (or an empty mapping is given), the Run gets a trace of its own, rooted
            in a ``psych.dispatch`` span when telemetry is enabled here, else in a
            minted context; either way every Attempt of the Run joins it.

    Raises:
        VersionNotFound: the Version is not published for ``scope``'s tenant and not
            shared (the same error whether or not another tenant holds it).
        AccessDenied: ``continues`` names another tenant's Run.
        RunNotFound: ``continues`` names no Run.
        InvalidDispatch: ``end_user_id`` is empty or longer than 256 characters;
            ``deadline_seconds`` is not finite, not positive, or longer
            than ``MAX_DEADLINE_SECONDS``; or a replay or breakpoint names no step of
            the workflow, or is asked of an agent.
        UnstorableValue: the tenant, principal or idempotency key holds a character no
            store can keep (NUL, a lone surrogate), or the input a value not every
            store can keep.
    """
    # Everything the caller passed is checked before the store is asked anything, so a
    # refused dispatch neither writes nor sends a driver a value it would choke on.
    given = _check_arguments(
        message, input, scope, idempotency_key, continues, breakpoints, step_mode
    )
    _check_deadline(deadline_seconds)
    check_key(scope.tenant, "tenant")
    check_key(scope.principal, "principal")
    check_key(idempotency_key, "idempotency_key")
    admitted_input = _input(message, given, end_user_id)
    carried = _trace_context(trace_context)
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
    found = await _visible_version(store, version_hash, scope.tenant)
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
    with admission_trace(
        installed_telemetry(),
        carried,
        run_id=run_id,
        tenant=scope.tenant,
        version_hash=pinned.hash,
    ) as trace:
        header, admitted = admission_records(
            run_id,
            scope,
            pinned.hash,
            RunState.RUNNABLE,
            now,
            deadline,
            idempotency_key,
            input=admitted_input,
            trace_context=trace.carrier,
            continues=continues,
            replay_of=replay_of,
            replay_from=replay_from,
            breakpoints=tuple(breakpoints),
            step_mode=step_mode,
        )
        result = await store.create_run(header, admitted)
        trace.admitted(result.header.run_id)
    return Dispatched(run_id=result.header.run_id, created=result.created)


def _trace_context(given: Mapping[str, str] | None) -> dict[str, str]:
    """The trace context to store with the Run: the one given, else the caller's span's.

    A given context is checked like any argument; the installed adapter's is taken on
    trust, and an adapter that fails only costs the Run its link to the caller's trace.
    """
    if given is not None:
        if not isinstance(given, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) and len(k) <= 64 and len(v) <= 1024
            for k, v in given.items()
        ):
            raise InvalidDispatch(
                "trace_context", given, "it must map header names to strings (W3C trace context)"
            )
        if len(given) > 8:
            raise InvalidDispatch("trace_context", given, "it holds more than 8 entries")
        return dict(given)
    try:
        found = installed_telemetry().current_carrier()
    except Exception:
        log.warning("telemetry could not read the caller's trace context", exc_info=True)
        return {}
    return {k: v for k, v in found.items() if len(k) <= 64 and len(v) <= 1024}


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


__all__ = ["MAX_DEADLINE_SECONDS", "Dispatched", "InvalidDispatch", "dispatch"]
