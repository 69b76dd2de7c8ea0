"""Send several SQL statements in one round trip and read every result.

MySQL accepts ``stmt1; stmt2; ...`` in a single query packet when the client enables
multi-statements (aiomysql always does). The store uses that to put a whole
transaction -- ``START TRANSACTION``, the checks, the writes and ``COMMIT`` -- on the
wire at once, so the hot paths cost one network round trip instead of one per
statement. The server stops at the first failing statement, so nothing after a
failure runs.

Every value is escaped by the driver (``Cursor.mogrify``) before the text is joined,
so no caller ever builds SQL out of unescaped data.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import psych_runtime
from psych_store_mysql._connection import Connection
from psych_store_mysql._connection import Cursor
from psych_store_mysql._connection import Row

Statement = tuple[str, Sequence[object]]
"""SQL with ``%s`` placeholders and the values that fill them."""

PACKET_MARGIN = 1024
"""Bytes kept free below ``max_allowed_packet`` for the protocol's own framing."""


@dataclass(frozen=True, slots=True)
class Result:
    """What one statement of a batch returned.

    Attributes:
        rowcount: rows matched by an UPDATE (FOUND_ROWS is on), or inserted.
        rows: the result set of a SELECT; empty for other statements.
    """

    rowcount: int
    rows: Sequence[Row]


class Batch:
    """One connection's way of sending statements, alone or several per round trip."""

    def __init__(self, conn: Connection, budget: int) -> None:
        self._conn = conn
        self._budget = budget

    @property
    def budget(self) -> int:
        """The most bytes of SQL text one round trip may carry on this server."""
        return self._budget

    async def run(self, *statements: Statement) -> list[Result]:
        """Send ``statements`` in one round trip and return one Result per statement.

        Raises:
            RecordTooLarge: the text is longer than the server accepts in one packet.
        """
        cursor = await self._conn.cursor()
        try:
            text = ";\n".join(_render(cursor, sql, values) for sql, values in statements)
            return await self._send(cursor, text, len(statements))
        finally:
            await cursor.close()

    async def render(self, statements: Sequence[Statement]) -> list[str]:
        """Escape each statement into final SQL text without sending anything."""
        cursor = await self._conn.cursor()
        try:
            return [_render(cursor, sql, values) for sql, values in statements]
        finally:
            await cursor.close()

    async def send_rendered(self, texts: Sequence[str]) -> list[Result]:
        """Send statements already rendered by ``render`` in one round trip."""
        cursor = await self._conn.cursor()
        try:
            return await self._send(cursor, ";\n".join(texts), len(texts))
        finally:
            await cursor.close()

    async def scalar(self, sql: str, *values: object) -> object:
        """The first column of the first row of one SELECT, or None when it has no rows."""
        (result,) = await self.run((sql, values))
        return result.rows[0][0] if result.rows else None

    async def _send(self, cursor: Cursor, text: str, count: int) -> list[Result]:
        size = len(text.encode())
        if size > self._budget:
            raise psych_runtime.adapters.RecordTooLarge(
                f"a statement of {size} bytes exceeds what this MySQL server accepts in one "
                f"packet ({self._budget} bytes under max_allowed_packet); raise "
                "max_allowed_packet on the server or write smaller records"
            )
        await cursor.execute(text)
        results = [await _collect(cursor)]
        while len(results) < count:
            if not await cursor.nextset():
                break
            results.append(await _collect(cursor))
        return results


async def _collect(cursor: Cursor) -> Result:
    rows = await cursor.fetchall() if cursor.description is not None else ()
    return Result(rowcount=cursor.rowcount, rows=rows)


def _render(cursor: Cursor, sql: str, values: Sequence[object]) -> str:
    return cursor.mogrify(sql, tuple(values)) if values else sql


def pack(texts: Sequence[str], budget: int) -> list[list[str]]:
    """Group rendered statements, in order, into round trips of at most ``budget`` bytes.

    Raises:
        RecordTooLarge: one statement alone is larger than ``budget``.
    """
    packets: list[list[str]] = []
    current: list[str] = []
    used = 0
    for text in texts:
        size = len(text.encode()) + 2  # the ";\n" that joins it to the next one
        if size > budget:
            raise psych_runtime.adapters.RecordTooLarge(
                f"one statement of {size} bytes exceeds the {budget}-byte packet budget "
                "of this MySQL server; raise max_allowed_packet or write a smaller record"
            )
        if current and used + size > budget:
            packets.append(current)
            current, used = [], 0
        current.append(text)
        used += size
    if current:
        packets.append(current)
    return packets


__all__ = ["PACKET_MARGIN", "Batch", "Result", "Statement", "pack"]
