"""A small incremental parser for server-sent events.

Bytes arrive in whatever pieces the network delivers: a chunk can end in the middle of
a line, of a UTF-8 character, or between the CR and LF of one line ending. The parser
keeps the unfinished tail and only emits an event once the blank line that ends it
has arrived, so a connection cut mid-event produces no half event.

It implements the parts of the WHATWG event-stream format that model APIs use:
``data`` (several lines join with newlines), ``event``, ``id``, comments (lines
starting with a colon, used as keep-alives) and all three line endings. ``retry`` is
read and ignored: reconnecting is the caller's decision, not the stream's.
"""

import codecs
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass


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
        self._buffer = ""
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
        self._buffer += text
        events: list[SseEvent] = []
        while True:
            line, found = self._next_line()
            if not found:
                break
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def _next_line(self) -> tuple[str, bool]:
        buffer = self._buffer
        cr = buffer.find("\r")
        lf = buffer.find("\n")
        if cr == -1 and lf == -1:
            return "", False
        if cr != -1 and (lf == -1 or cr < lf):
            if cr == len(buffer) - 1:
                # Maybe the first half of CRLF: wait until the next byte says.
                return "", False
            end = cr + 2 if buffer[cr + 1] == "\n" else cr + 1
            self._buffer = buffer[end:]
            return buffer[:cr], True
        self._buffer = buffer[lf + 1 :]
        return buffer[:lf], True

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
        """Mark the end of the stream and return any event a final CR completed.

        An event is only complete once its blank line arrives, so whatever is still
        pending after that was cut off: it is discarded rather than guessed at, and
        ``truncated`` says it happened.
        """
        self._buffer += self._decoder.decode(b"", final=True)
        events: list[SseEvent] = []
        if self._buffer.endswith("\r"):
            # Nothing can follow any more, so a trailing CR is a whole line ending.
            self._buffer += "\n"
            events = self.feed("")
        self.truncated = bool(self._data) or bool(self._buffer)
        self._buffer, self._data, self._event = "", [], ""
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
