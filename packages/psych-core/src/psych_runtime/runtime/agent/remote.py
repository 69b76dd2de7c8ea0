"""The remote-tools phase: ask every tool source what it offers, at the start of a turn.

Servers and peers named in the Spec are asked afresh each turn, so a server connected
(or a tool added) while the Run is under way is usable on the next turn, with no
restart. What they offer joins the catalog for that turn only. A required server that
cannot be reached ends the Run ``failed`` with the ``tool_resolution`` failure (marked
transient when retrying may help); an optional one is left out, and the source's
advisory tells the model so.
"""

from collections.abc import Collection

from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.context import settle
from psych_runtime.tools.deferred import defer
from psych_runtime.tools.sources import SourceTool
from psych_runtime.tools.sources import ToolSource
from psych_runtime.tools.sources import ToolSourceUnavailable
from psych_runtime.tools.sources import owners_of


async def resolve_remote(ctx: AttemptContext, permitted: Collection[str] | None) -> Next | None:
    """Refresh this turn's remote tools; ``Next.STOP`` when a required source is down."""
    down = await refresh_remote(ctx, permitted)
    if down is None:
        return None
    failure = ToolFailure(kind="tool_resolution", message=str(down), transient=down.transient)
    return settle(ctx, TerminalState.FAILED, failure=failure)


async def refresh_remote(
    ctx: AttemptContext, permitted: Collection[str] | None
) -> ToolSourceUnavailable | None:
    """Ask every source serving the Spec what it offers; the outage, if one is down.

    The catalog keeps what it had when a source is down. Tools over the catalogue budget
    (or of a server that asks for it) are deferred behind ``call_tool``.
    """
    sources = owners_of(ctx.deps.sources, ctx.spec)
    if not sources:
        return None
    remote: dict[str, tuple[ToolSource, SourceTool]] = {}
    advisories: list[str] = []
    try:
        for source in sources:
            offered = await source.resolve(ctx.spec, ctx.journal.scope, permitted=permitted)
            advisories.extend(offered.advisories)
            for tool in offered.tools:
                remote.setdefault(tool.name, (source, tool))
    except ToolSourceUnavailable as error:
        return error
    catalog = ctx.tools
    _, deferred = defer(ctx.spec, [tool for _, tool in remote.values()], ctx.deps.catalogue_budget)
    catalog.deferred = {tool.name: tool for tool in deferred}
    catalog.remote = remote
    catalog.remote_advisories = tuple(advisories)
    catalog.permitted = permitted
    return None


__all__ = ["refresh_remote", "resolve_remote"]
