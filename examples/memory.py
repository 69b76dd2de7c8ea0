"""Facts an agent keeps about a person between conversations, and erases on request.

Runs with no API key. The facts live in ``concierge.db`` beside the Runs (the SQLite
adapter's MemoryStore), keyed by tenant and end user: the second conversation, a new
Run, starts knowing what the first one learnt, and ``erase`` forgets the person.
"""

import asyncio

import psych_runtime
from psych_runtime.testing import FakeModel

concierge = psych_runtime.AgentSpec(name="concierge", model="gpt-4o-mini")
model = (
    FakeModel()
    .turn(tool_calls=[("remember", {"fact": "Prefers the window seat."})])
    .turn(text="Noted: window seats from now on.")
    .turn(text="Booked on the 9:40, window seat as usual.")
)


async def main() -> None:
    url = "sqlite:///concierge.db"
    memory = await psych_runtime.open_memory_store(url, migrate=True)
    settings = psych_runtime.RuntimeSettings(memory=memory)
    try:
        async with psych_runtime.session(model, store=url, runtime=settings) as s:
            await s.ask(concierge, "I always take the window seat.", end_user_id="alice")
            answer = await s.ask(concierge, "Book me on the 9:40.", end_user_id="alice")
            print(answer.text)
            alice = psych_runtime.MemoryKey(tenant=s.scope.tenant, end_user_id="alice")
            print([fact.content for fact in await memory.recall(alice)])
            print("erased", await memory.erase(alice))
    finally:
        await memory.close()


asyncio.run(main())
