"""A small incremental parser for server-sent events.

Bytes arrive in whatever pieces the network delivers: a chunk can end in the middle of
a line, of a UTF-8 character, or between the CR and LF of one line ending. The parser
keeps the unfinished tail and only emits an event once the blank line that ends it
has arrived, so a connection cut mid-event produces no half event. A CR ends its line
at once; a LF right after it, even in the next piece, is the rest of that CRLF.

Parsing is linear in the size of the stream however it is cut: the unfinished line is
kept as a list of pieces and joined once, never grown by repeated concatenation.

It implements the parts of the WHATWG event-stream format that model APIs use:
``data`` (several lines join with newlines), ``event``, ``id``, comments (lines
starting with a colon, used as keep-alives) and all three line endings. ``retry`` is
read and ignored: reconnecting is the caller's decision, not the stream's.
"""

import codecs
import re
from collections.abc import AsyncIterable
from collections.abc import AsyncIterator
from dataclasses import dataclass

_LINE_ENDING = re.compile("\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event.

    Attributes:
        data: the data lines joined with newlines.
        event: the event type; ``message`` when the server named none.
        id: the last event id seen, if any.
    """

    data: str
    event: str = "message"
    id: str | None = None


class SseParser:
    """Feed it text or bytes as they arrive; it returns the events that completed.

    Attributes:
        truncated: set by ``close`` when the stream ended partway through an event,
            which is how a caller tells a cut connection from a clean end.
    """

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        # The unfinished line, in the pieces it arrived in: joined once, when its line
        # ending arrives, so a long line costs time in proportion to its length however
        # finely the network cut it.
        self._pending: list[str] = []
        self._after_cr = False
        self._data: list[str] = []
        self._event = ""
        self._last_id: str | None = None
        self._first = True
        self.truncated = False

    def feed(self, chunk: bytes | str) -> list[SseEvent]:
        """Add the next piece of the stream and return every event it completed."""
        text = chunk if isinstance(chunk, str) else self._decoder.decode(chunk)
        if self._first and text:
            # A byte-order mark may open the stream; it is not part of the first field.
            text = text.removeprefix("\ufeff")
            self._first = False
        start = 0
        if self._after_cr and text:
            # The CR that ended the last piece was the first half of a CRLF.
            self._after_cr = False
            if text.startswith("\n"):
                start = 1
        events: list[SseEvent] = []
        for ending in _LINE_ENDING.finditer(text, start):
            piece = text[start : ending.start()]
            if self._pending:
                self._pending.append(piece)
                piece = "".join(self._pending)
                self._pending = []
            start = ending.end()
            event = self._line(piece)
            if event is not None:
                events.append(event)
        if start < len(text):
            self._pending.append(text[start:])
        elif text.endswith("\r"):
            # Maybe the first half of CRLF: a LF opening the next piece is skipped.
            self._after_cr = True
        return events

    def _line(self, line: str) -> SseEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._last_id = value
        return None

    def _dispatch(self) -> SseEvent | None:
        data, event = self._data, self._event
        self._data, self._event = [], ""
        if not data:
            return None
        return SseEvent(data="\n".join(data), event=event or "message", id=self._last_id)

    def close(self) -> list[SseEvent]:
        """Mark the end of the stream and return any event its last bytes completed.

        An event is only complete once its blank line arrives, so whatever is still
        pending after that was cut off: it is discarded rather than guessed at, and
        ``truncated`` says it happened.
        """
        events = self.feed(self._decoder.decode(b"", final=True))
        self.truncated = bool(self._data) or any(self._pending)
        self._pending, self._data, self._event = [], [], ""
        self._after_cr = False
        return events


async def iter_sse(chunks: AsyncIterable[bytes]) -> AsyncIterator[SseEvent]:
    """Parse a byte stream into events as they complete."""
    parser = SseParser()
    async for chunk in chunks:
        for event in parser.feed(chunk):
            yield event
    for event in parser.close():
        yield event


__all__ = ["SseEvent", "SseParser", "iter_sse"]
