"""Noticing, during a long call, that someone asked the Run to stop.

An ``abort_requested`` record may be appended by any process while an Attempt holds
the Run. Between two durable points the agent loop reads it from its own log, but a
tool call or a model stream can last minutes, and the promise is that an interrupt
cuts such a call short. Two paths bring the news to the Attempt:

- in the same process, ``interrupt()`` fires the Attempt's abort signal directly
  (``abort.LIVE_ATTEMPTS``), with no store round trip;
- from another process, this watcher sees the record land. It stays asleep for the
  first ``ARM_AFTER_SECONDS`` of an Attempt (most Attempts are over by then, and a
  watcher woken by each of the Attempt's own appends would tax every turn), then
  either follows the store's notifier, when that notifier hears every writer, or
  polls the log's head.

Either way the Attempt's abort signal fires with ``INTERRUPT``, the Runtime cancels
the work (uninterruptible calls finish first) and settles the Run ``aborted``.
"""

import asyncio
import logging

from psych_runtime.runtime.abort import AbortReason
from psych_runtime.runtime.abort import AbortSignal
from psych_runtime.runtime.journal import Journal
from psych_runtime.store.port import Store

log = logging.getLogger(__name__)

ARM_AFTER_SECONDS = 0.01
"""How long an Attempt runs before its watcher starts looking at the store."""


async def watch_for_interrupt(
    store: Store,
    journal: Journal,
    abort: AbortSignal,
    *,
    poll_seconds: float,
    quiet_seconds: float,
) -> None:
    """Fire ``abort`` with ``INTERRUPT`` once an abort request for the Run is durable.

    Args:
        store: the Run's store.
        journal: the Attempt's Journal (its durable head tells foreign records apart).
        abort: the Attempt's abort signal; the watch ends when it fires for any reason.
        poll_seconds: how often the log's head is read when the store's notifier does
            not hear other processes' writes.
        quiet_seconds: how long to wait for a signal, with a notifier that hears every
            writer, before looking anyway (a lost notification costs only this).
    """
    if _aborted(journal):
        # Asked before this Attempt began: the loop's first check settles the Run
        # without starting anything, and closes a call that waited for a decision as
        # never executed rather than cut short.
        return
    await asyncio.sleep(ARM_AFTER_SECONDS)
    run_id = journal.run_id
    notifier = store.notifier
    follows_signals = notifier is not None and notifier.complete
    seen = notifier.generation(run_id) if notifier is not None and follows_signals else 0
    checked = 0
    while not abort.fired:
        committed, current = await journal.settled_view()
        if _aborted(journal):
            abort.fire(AbortReason.INTERRUPT)
            return
        after = max(committed, checked)
        if not current:
            try:
                # Shielded: the watch is cancelled when its Attempt ends, and a store
                # call cut off half way can leave its driver's connection behind.
                if follows_signals or await asyncio.shield(store.head(run_id)) > after:
                    records = await asyncio.shield(store.read(run_id, after=after))
                    if any(record.type == "abort_requested" for record in records):
                        abort.fire(AbortReason.INTERRUPT)
                        return
                    if records:
                        checked = records[-1].seq
            except Exception:
                # The Attempt's own writes meet the same outage and deal with it; the
                # watch only looks again later.
                log.debug("run %s: interrupt watch could not read the log", run_id)
        if notifier is not None and follows_signals:
            await notifier.wait(run_id, seen, quiet_seconds)
            seen = notifier.generation(run_id)
        else:
            await asyncio.sleep(poll_seconds)


def _aborted(journal: Journal) -> bool:
    """Whether the Journal's folded log holds an abort (a call, so no stale narrowing)."""
    return journal.state.aborted


__all__ = ["ARM_AFTER_SECONDS", "watch_for_interrupt"]
