"""``psych runs``: the most recent Runs in a store, one line each. Read-only."""

import argparse
import asyncio
import sys
from datetime import UTC
from datetime import datetime
from typing import TextIO

from psych_runtime.cli._common import Painter
from psych_runtime.cli._common import add_store_arguments
from psych_runtime.cli._common import fail
from psych_runtime.cli._common import format_age
from psych_runtime.cli._common import format_cost
from psych_runtime.cli._common import opened_store
from psych_runtime.cli._common import short_hash
from psych_runtime.cli.command import Command
from psych_runtime.core.errors import PsychError
from psych_runtime.core.ids import VersionHash
from psych_runtime.core.records import TerminalState
from psych_runtime.runtime.reads import report
from psych_runtime.store.port import RunListing
from psych_runtime.store.port import RunState
from psych_runtime.store.port import Store


class ListingUnsupported(PsychError):
    """The store's adapter does not implement ``RunListing``."""


def _arguments(parser: argparse.ArgumentParser) -> None:
    """Add the store, limit and state options of ``psych runs``."""
    add_store_arguments(parser)
    parser.add_argument(
        "--limit",
        type=int,
        default=20,
        metavar="N",
        help="how many Runs to list (default: %(default)s)",
    )
    parser.add_argument(
        "--state",
        action="append",
        choices=[state.value for state in RunState],
        metavar="STATE",
        help=(
            "only Runs in this state (runnable, running, suspended, nested, settled); "
            "repeat for several"
        ),
    )


def run(args: argparse.Namespace) -> int:
    """Carry out ``psych runs``; 1 when the store cannot be listed."""
    if args.limit < 1:
        return fail("runs", ValueError("--limit must be at least 1"))
    states = [RunState(value) for value in args.state or ()]
    try:
        return asyncio.run(
            list_runs(
                args.store, tenant=args.tenant, states=states, limit=args.limit, out=sys.stdout
            )
        )
    except PsychError as exc:
        return fail("runs", exc)


async def list_runs(
    url: str,
    *,
    tenant: str | None,
    states: list[RunState],
    limit: int,
    out: TextIO,
    now: datetime | None = None,
) -> int:
    """Print a table of the newest Runs to ``out``.

    Raises:
        ListingUnsupported: the store cannot list its Runs.
        StoreError: the store cannot be opened or read.
    """
    paint = Painter.for_stream(out)
    async with opened_store(url) as store:
        if not isinstance(store, RunListing):
            raise ListingUnsupported(
                f"the {type(store).__name__} adapter cannot list Runs (no recent_runs)"
            )
        headers = await store.recent_runs(tenant=tenant, states=states or None, limit=limit)
        moment = now or datetime.now(UTC)
        names: dict[VersionHash, str] = {}
        rows: list[tuple[str, ...]] = []
        for header in headers:
            summary = await report(store, header.run_id)
            state = header.state.value
            if summary.terminal_state is not None:
                state = f"{state} ({summary.terminal_state.value})"
            agent = await _agent(store, header.version_hash, names)
            rows.append(
                (
                    header.run_id,
                    state,
                    format_age(header.created_at, moment),
                    format_cost(summary.totals.cost),
                    header.scope.tenant,
                    f"{agent}@{short_hash(header.version_hash)}",
                )
            )
    if not rows:
        print("No Runs found.", file=out)
        return 0
    titles = ("RUN ID", "STATE", "AGE", "COST", "TENANT", "AGENT@VERSION")
    widths = [max(len(row[i]) for row in (titles, *rows)) for i in range(len(titles))]
    print(paint(_line(titles, widths), "bold"), file=out)
    for row in rows:
        line = _line(row, widths)
        if TerminalState.COMPLETED.value not in row[1] and "settled" in row[1]:
            line = paint(line, "red")
        print(line, file=out)
    return 0


def _line(cells: tuple[str, ...], widths: list[int]) -> str:
    return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()


async def _agent(store: Store, version_hash: VersionHash, names: dict[VersionHash, str]) -> str:
    if version_hash not in names:
        version = await store.get_version(version_hash)
        names[version_hash] = version.spec.name if version is not None else "?"
    return names[version_hash]


COMMAND = Command(
    "runs",
    help="list the most recent Runs in a store (state, age, cost, agent)",
    description=(
        "List the most recently admitted Runs, newest first: id, state, age, cost "
        "and the agent and Version they pinned. Read-only."
    ),
    arguments=_arguments,
    run=run,
)


__all__ = ["COMMAND", "ListingUnsupported", "list_runs"]
