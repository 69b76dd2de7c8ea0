"""``psych show``: a Run's timeline in the terminal, read from its log.

Each record of the log becomes at most one line, in the order it was written, so the
same renderer serves a finished Run (read once) and a live one (``--follow``, which
reads the records as they land until the Run settles). Nothing here writes to the store.
"""

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from datetime import datetime
from datetime import timedelta
from typing import TextIO

from psych_runtime.cli._common import Painter
from psych_runtime.cli._common import add_store_arguments
from psych_runtime.cli._common import fail
from psych_runtime.cli._common import format_cost
from psych_runtime.cli._common import format_seconds
from psych_runtime.cli._common import format_usage
from psych_runtime.cli._common import opened_store
from psych_runtime.cli._common import scope_for
from psych_runtime.cli._common import short_hash
from psych_runtime.cli.command import Command
from psych_runtime.cli.runs import ListingUnsupported
from psych_runtime.core.errors import PsychError
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.metering import Usage
from psych_runtime.core.records import Record
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.runtime.reads import checked_header
from psych_runtime.runtime.reads import read_log
from psych_runtime.runtime.reads import report
from psych_runtime.runtime.reads import stream
from psych_runtime.store.port import RunHeader
from psych_runtime.store.port import RunListing
from psych_runtime.store.port import Store

LATEST = "latest"
"""Stands for the newest Run in the store, so a first look needs no id to copy."""

_ARGUMENT_WIDTH = 60
_TEXT_WIDTH = 100


def _arguments(parser: argparse.ArgumentParser) -> None:
    """Add the Run id and follow options of ``psych show``."""
    parser.add_argument(
        "run_id",
        metavar="RUN_ID",
        help=f"the Run to show, or `{LATEST}` for the newest one (of --tenant, when given)",
    )
    add_store_arguments(parser)
    parser.add_argument(
        "--follow",
        action="store_true",
        help="keep printing new records as they land, until the Run settles",
    )
    parser.add_argument(
        "--poll",
        type=float,
        default=0.25,
        metavar="SECONDS",
        help="with --follow, how often to look for new records (default: %(default)s)",
    )


def run(args: argparse.Namespace) -> int:
    """Carry out ``psych show``; 1 when the Run cannot be read."""
    if args.poll <= 0:
        return fail("show", ValueError("--poll must be a positive number of seconds"))
    try:
        return asyncio.run(
            show_run(
                args.store,
                RunId(args.run_id),
                tenant=args.tenant,
                follow=args.follow,
                poll_seconds=args.poll,
                out=sys.stdout,
            )
        )
    except PsychError as exc:
        return fail("show", exc)
    except KeyboardInterrupt:
        return 130


async def show_run(
    url: str,
    run_id: RunId,
    *,
    tenant: str | None,
    follow: bool,
    poll_seconds: float,
    out: TextIO,
) -> int:
    """Print the Run's timeline to ``out``; with ``follow``, until it settles.

    Raises:
        RunNotFound: no such Run (for ``tenant``, when given).
        AccessDenied: the Run belongs to another tenant.
        StoreError: the store cannot be opened or read.
    """
    paint = Painter.for_stream(out)

    def emit(line: str) -> None:
        print(line, file=out, flush=True)

    scope = scope_for(tenant)
    async with opened_store(url) as store:
        if run_id == LATEST:
            run_id = await newest_run(store, tenant)
        header = await checked_header(store, run_id, scope)
        spec_name = await _spec_name(store, header)
        emit(paint(f"Run {run_id}", "bold"))
        emit(f"  agent:   {spec_name or '?'} (version {short_hash(header.version_hash)})")
        emit(f"  tenant:  {header.scope.tenant}")
        emit(f"  created: {header.created_at.isoformat(timespec='seconds')}")
        if header.parent_run_id is not None:
            emit(f"  parent:  {header.parent_run_id}")
        if header.continues_run_id is not None:
            emit(f"  continues: {header.continues_run_id}")
        emit("")
        timeline = Timeline(paint)
        if follow:
            async for record in stream(store, run_id, scope=scope, poll_seconds=poll_seconds):
                for line in timeline.lines(record):
                    emit(line)
        else:
            for record in await read_log(store, run_id, scope=scope):
                for line in timeline.lines(record):
                    emit(line)
        emit("")
        if not timeline.settled:
            latest = await store.get_run(run_id)
            state = latest.state.value if latest is not None else header.state.value
            emit(f"Not settled yet (state {state}); use --follow to watch it finish.")
            return 0
        summary = await report(store, run_id, scope=scope)
        totals = summary.totals
        emit(
            f"Totals: {totals.model_calls} model call(s), {totals.tool_calls} tool call(s), "
            f"tokens {format_usage(totals.usage)}, cost {format_cost(totals.cost)}"
        )
        if summary.subagents:
            subtree = summary.subtree
            emit(
                f"With subagents: {subtree.runs} Run(s), tokens {format_usage(subtree.usage)}, "
                f"cost {format_cost(subtree.cost)}"
            )
    return 0


class NoRunsYet(PsychError):
    """``latest`` was asked of a store (or a tenant) that holds no Run."""


async def newest_run(store: Store, tenant: str | None) -> RunId:
    """The id of the most recently admitted Run, of ``tenant`` when given.

    Raises:
        ListingUnsupported: the store's adapter cannot list its Runs.
        NoRunsYet: there is no Run to show.
    """
    if not isinstance(store, RunListing):
        raise ListingUnsupported(
            f"the {type(store).__name__} adapter cannot list Runs, so give a RUN_ID"
        )
    newest = await store.recent_runs(tenant=tenant, states=None, limit=1)
    if not newest:
        whose = f" of tenant {tenant!r}" if tenant is not None else ""
        raise NoRunsYet(f"there is no Run{whose} in this store yet")
    return newest[0].run_id


async def _spec_name(store: Store, header: RunHeader) -> str:
    version = await store.get_version(header.version_hash)
    return version.spec.name if version is not None else ""


class Timeline:
    """Turns records into timeline lines, remembering what later records refer to.

    Args:
        paint: colours the parts worth noticing (failures, the settlement).
    """

    def __init__(self, paint: Painter | None = None) -> None:
        self._paint = paint or Painter(False)
        self._start: datetime | None = None
        self._tools: dict[ToolCallId, str] = {}
        self._steps: dict[str, str] = {}
        self._in_step = False
        self.settled = False
        self._render = self._renderers()

    def lines(self, record: Record) -> list[str]:
        """The lines for one record (often one, sometimes none)."""
        if self._start is None:
            self._start = record.at
        offset = (record.at - self._start) / timedelta(seconds=1)
        render = self._render.get(record.type)
        if render is None:
            return []
        found = render(record)
        if found is None:
            return []
        depth, text = found
        return [f"{'+' + format_seconds(max(offset, 0.0)):>9}  {'  ' * depth}{text}"]

    def _renderers(self) -> dict[str, Callable[[Record], tuple[int, str] | None]]:
        return {
            "run_admitted": self._admitted,
            "attempt_started": self._attempt,
            "turn_started": self._turn,
            "model_call_finished": self._model_finished,
            "model_call_failed": self._model_failed,
            "tool_call_started": self._tool_started,
            "tool_call_finished": self._tool_finished,
            "step_started": self._step_started,
            "step_completed": self._step_completed,
            "suspended": self._suspended,
            "resumed": self._resumed,
            "abort_requested": self._abort,
            "queue_enqueued": self._enqueued,
            "compaction_applied": self._compaction,
            "subagent_spawned": self._spawned,
            "subagent_finished": self._child_finished,
            "run_settled": self._settled,
        }

    def _nested(self, depth: int) -> int:
        return depth + 1 if self._in_step else depth

    def _admitted(self, record: Record) -> tuple[int, str] | None:
        assert record.type == "run_admitted"
        return 0, f"admitted  input {_short_json(record.input, _TEXT_WIDTH)}"

    def _attempt(self, record: Record) -> tuple[int, str] | None:
        assert record.type == "attempt_started"
        again = " (took over an expired lease)" if record.reclaimed_expired_lease else ""
        return 0, f"attempt {record.attempt_number} on worker {record.worker_id}{again}"

    def _turn(self, record: Record) -> tuple[int, str] | None:
        assert record.type == "turn_started"
        return self._nested(0), f"turn {record.turn}"

    def _model_finished(self, record: Record) -> tuple[int, str] | None:
        assert record.type == "model_call_finished"
        parts = [
            f"model {record.model}",
            _tokens(record.usage, record.usage_reported),
            f"cost {format_cost(record.cost)}",
            f"{format_seconds(record.timings.total_seconds)}",
            f"finish {record.finish_reason}",
        ]
        text = ": " + _one_line(record.text, _TEXT_WIDTH) if record.text else ""
        return self._nested(1), ", ".join(parts) + text

    def _model_failed(self, record: Record) -> tuple[int, str] | None:
        assert record.type == "model_call_failed"
        retry = " (will retry)" if record.will_retry else ""
        failed = self._paint(f"model {record.model} failed{retry}", "red")
        return self._nested(1), f"{failed}: {_failure(record.failure)}"

    def _tool_started(self, record: Record) -> tuple[int, str] | None:
        assert record.type == "tool_call_started"
        self._tools[record.call_id] = record.tool
        arguments = _short_json(record.arguments, _ARGUMENT_WIDTH)
        return self._nested(1), f"tool {record.tool} {arguments} started"

    def _tool_finished(self, record: Record) -> tuple[int, str] | None:
        assert record.type == "tool_call_finished"
        tool = self._tools.get(record.call_id, record.call_id)
        outcome = record.outcome.value
        if record.outcome is ToolOutcome.OK:
            shown = self._paint(outcome, "green")
            detail = _short_json(record.result, _ARGUMENT_WIDTH) if record.result else ""
            if record.result_blob_key is not None or record.result_handle is not None:
                detail = f"{record.result_bytes} bytes kept aside"
        else:
            shown = self._paint(outcome, "red")
            detail = _failure(record.failure)
        text = f"tool {tool} -> {shown} in {format_seconds(record.duration_seconds)}"
        return self._nested(1), f"{text}: {detail}" if detail else text

    def _step_started(self, record: Record) -> tuple[int, str] | None:
        assert record.type == "step_started"
        self._steps[record.step_id] = record.name
        self._in_step = True
        again = f" (attempt {record.attempt_number})" if record.attempt_number > 1 else ""
        return 0, f"step {record.name} [{record.kind}]{again} started"

    def _step_completed(self, record: Record) -> tuple[int, str] | None:
        assert record.type == "step_completed"
        self._in_step = False
        name = self._steps.get(record.step_id, record.step_id)
        if record.skipped:
            return 0, f"step {name} skipped"
        if record.failure is not None:
            retry = " (will retry)" if record.will_retry else ""
            failed = self._paint(f"step {name} failed{retry}", "red")
            return 0, f"{failed}: {_failure(record.failure)}"
        child = f" via child Run {record.child_run_id}" if record.child_run_id else ""
        output = _short_json(record.output, _ARGUMENT_WIDTH) if record.output else ""
        return 0, f"step {name} completed{child}" + (f": {output}" if output else "")

    def _suspended(self, record: Record) -> tuple[int, str] | None:
        assert record.type == "suspended"
        what = record.reason.value
        if record.pending_call_id is not None:
            what += f" for tool {self._tools.get(record.pending_call_id, record.pending_call_id)}"
        if record.question:
            what += f": {_one_line(record.question, _TEXT_WIDTH)}"
        elif record.questions:
            what += f": {len(record.questions)} question(s)"
        if record.event:
            what += f" (event {record.event})"
        until = record.wake_at or record.expires_at
        label = "until" if record.wake_at else "expires"
        text = f"suspended, waiting on {what}; {label} {until.isoformat(timespec='seconds')}"
        return self._nested(0), self._paint(text, "yellow")

    def _resumed(self, record: Record) -> tuple[int, str] | None:
        assert record.type == "resumed"
        verdict = ""
        if record.approved is not None:
            verdict = " approved" if record.approved else " denied"
        by = f" by {record.resumed_by}" if record.resumed_by else ""
        return self._nested(0), f"resumed{verdict}{by}"

    def _abort(self, record: Record) -> tuple[int, str] | None:
        assert record.type == "abort_requested"
        by = f" by {record.requested_by}" if record.requested_by else ""
        reason = f": {record.reason}" if record.reason else ""
        return 0, self._paint(f"abort requested{by}{reason}", "red")

    def _enqueued(self, record: Record) -> tuple[int, str] | None:
        assert record.type == "queue_enqueued"
        return 0, f"{record.queue.value} message queued: {_short_json(record.payload, 60)}"

    def _compaction(self, record: Record) -> tuple[int, str] | None:
        assert record.type == "compaction_applied"
        return self._nested(1), (
            f"compacted records {record.replaced_from_seq}-{record.replaced_to_seq} "
            f"({record.reason.value}), cost {format_cost(record.cost)}"
        )

    def _spawned(self, record: Record) -> tuple[int, str] | None:
        assert record.type == "subagent_spawned"
        mode = "background" if record.background else "inline"
        return self._nested(
            1
        ), f"subagent {record.name} spawned ({mode}) as Run {record.child_run_id}"

    def _child_finished(self, record: Record) -> tuple[int, str] | None:
        assert record.type == "subagent_finished"
        state = _state(self._paint, record.state)
        return self._nested(1), (
            f"subagent {record.name} {state}: {record.runs} Run(s), "
            f"tokens {format_usage(record.usage)}, cost {format_cost(record.cost)}"
        )

    def _settled(self, record: Record) -> tuple[int, str] | None:
        assert record.type == "run_settled"
        self.settled = True
        text = f"settled {_state(self._paint, record.state)}"
        if record.failure is not None:
            text += f": {_failure(record.failure)}"
        elif record.output is not None:
            text += f": {_short_json(record.output, _TEXT_WIDTH)}"
        return 0, text


def _state(paint: Painter, state: TerminalState) -> str:
    colour = "green" if state is TerminalState.COMPLETED else "red"
    return paint(state.value, colour)


def _tokens(usage: Usage, reported: bool) -> str:
    text = f"tokens {format_usage(usage)}"
    return text if reported else text + " (not reported)"


def _failure(failure: ToolFailure | None) -> str:
    if failure is None:
        return "no reason given"
    return (
        f"{failure.kind}: {_one_line(failure.message, _TEXT_WIDTH)}"
        if failure.message
        else failure.kind
    )


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def _short_json(value: object, width: int) -> str:
    return _one_line(json.dumps(value, ensure_ascii=False, default=str), width)


COMMAND = Command(
    "show",
    help="print a Run's timeline: turns, model and tool calls, suspensions, steps",
    description=(
        "Render one Run's log as a timeline: turns, model calls with tokens, cost and "
        "latency, tool calls with their outcomes, suspensions, workflow steps, "
        "subagents and the settlement. Read-only."
    ),
    arguments=_arguments,
    run=run,
)


__all__ = ["COMMAND", "LATEST", "NoRunsYet", "Timeline", "newest_run", "show_run"]
