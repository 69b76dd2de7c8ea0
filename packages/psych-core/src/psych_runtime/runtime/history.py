"""What a continuation Run's model is shown of the Runs it continues.

A chat's second message is a new Run dispatched with ``continues=`` the previous one.
Its model sees the earlier conversation first: the Runs of the chain, oldest first,
each projected exactly as its own model saw it, then the ``next_run`` messages queued
on the immediate predecessor (in the order they were sent), then the new Run's own
input. The Spec's ``limits.max_history_records`` bounds how many records are
replayed: the immediate predecessor always counts whole, older Runs whole or not at
all, so the model never sees half a conversation. 0 replays nothing.

Settled Runs never change, so every Attempt of the continuation computes the same
history; it is loaded once per Attempt.
"""

from psych_runtime.core.ids import RunId
from psych_runtime.core.messages import Message
from psych_runtime.core.messages import UserMessage
from psych_runtime.core.records import Record
from psych_runtime.core.reducer import reduce
from psych_runtime.runtime.conversation import Conversation
from psych_runtime.runtime.conversation import input_text
from psych_runtime.store.port import Store

_PAGE = 1000


async def _whole_log(store: Store, run_id: RunId, tenant: str) -> list[Record]:
    records: list[Record] = []
    while True:
        page = await store.read(run_id, after=len(records), limit=_PAGE, tenant=tenant)
        records.extend(page)
        if len(page) < _PAGE:
            return records


def carried_messages(records: list[Record]) -> list[Message]:
    """The ``next_run`` messages a Run holds for its continuation, in the order sent."""
    if not records:
        return []
    state = reduce(records)
    texts = (input_text(entry.payload) for entry in state.pending_next_run)
    return [UserMessage(content=text) for text in texts if text is not None]


async def continuation_history(
    store: Store, continues: RunId | None, tenant: str, max_records: int
) -> tuple[Message, ...]:
    """The messages replayed ahead of a continuation's own conversation.

    Args:
        store: where the chain's logs are.
        continues: the Run this one continues (None: nothing to replay).
        tenant: the continuation's tenant; a Run of another tenant ends the chain.
        max_records: the Spec's ``max_history_records``.
    """
    if continues is None or max_records <= 0:
        return ()
    logs: list[list[Record]] = []
    budget = max_records
    seen: set[str] = set()
    current: RunId | None = continues
    while current is not None and current not in seen:
        seen.add(current)
        header = await store.get_run(current, tenant=tenant)
        if header is None:
            break
        records = await _whole_log(store, current, tenant)
        if logs and len(records) > budget:
            break  # an older Run replays whole or not at all
        logs.append(records)
        budget -= len(records)
        current = header.continues_run_id
    messages: list[Message] = []
    for records in reversed(logs):
        conversation = Conversation()
        conversation.update(records)
        messages.extend(conversation.messages())
    if logs:
        messages.extend(carried_messages(logs[0]))
    return tuple(messages)


__all__ = ["carried_messages", "continuation_history"]
