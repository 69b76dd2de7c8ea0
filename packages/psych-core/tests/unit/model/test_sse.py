"""The incremental server-sent-events parser."""

import itertools
from collections.abc import AsyncIterator

from hypothesis import given
from hypothesis import strategies as st

from psych_runtime.model.sse import SseEvent
from psych_runtime.model.sse import SseParser
from psych_runtime.model.sse import iter_sse


def parse_all(*pieces: bytes | str) -> tuple[list[SseEvent], bool]:
    parser = SseParser()
    events: list[SseEvent] = []
    for piece in pieces:
        events.extend(parser.feed(piece))
    events.extend(parser.close())
    return events, parser.truncated


def test_data_events_are_dispatched_on_the_blank_line() -> None:
    parser = SseParser()
    assert parser.feed(b"data: one\n") == []
    assert parser.feed(b"\n") == [SseEvent(data="one")]
    assert parser.feed(b"data: two\n\ndata: three\n\n") == [
        SseEvent(data="two"),
        SseEvent(data="three"),
    ]


def test_several_data_lines_join_with_newlines() -> None:
    events, _ = parse_all(b"data: first\ndata:second\ndata\ndata:  indented\n\n")
    # One leading space is the separator; a second one belongs to the value.
    assert events == [SseEvent(data="first\nsecond\n\n indented")]


def test_comments_and_unknown_fields_are_ignored() -> None:
    events, _ = parse_all(b": keep-alive\n\nretry: 10\nfoo: bar\ndata: x\n: mid\n\n")
    assert events == [SseEvent(data="x")]


def test_event_name_and_id_are_kept() -> None:
    events, _ = parse_all(b"event: error\nid: 7\ndata: {}\n\ndata: next\n\n")
    assert events == [SseEvent(data="{}", event="error", id="7"), SseEvent(data="next", id="7")]


def test_all_three_line_endings() -> None:
    events, _ = parse_all(b"data: a\r\n\r\ndata: b\r\rdata: c\n\n")
    assert [e.data for e in events] == ["a", "b", "c"]


def test_crlf_split_across_chunks_is_one_line_ending() -> None:
    # Had the CR been taken as a full line ending, the LF would have ended the event
    # early and "tail" would have become a separate event.
    events, _ = parse_all(b"data: head\r", b"\ndata: tail\r\n\r\n")
    assert events == [SseEvent(data="head\ntail")]


def test_a_trailing_cr_at_the_end_of_the_stream_ends_the_line() -> None:
    events, truncated = parse_all(b"data: last\r\r")
    assert events == [SseEvent(data="last")]
    assert not truncated


def test_multibyte_characters_split_between_chunks() -> None:
    raw = "data: héllo → ☃\n\n".encode()
    cut = raw.index("☃".encode()) + 1
    events, _ = parse_all(raw[:cut], raw[cut:])
    assert events == [SseEvent(data="héllo → ☃")]


def test_a_leading_byte_order_mark_is_dropped() -> None:
    events, _ = parse_all("\ufeffdata: x\n\n".encode())
    assert events == [SseEvent(data="x")]


def test_an_event_cut_off_by_the_end_of_the_stream_is_dropped_and_reported() -> None:
    events, truncated = parse_all(b'data: whole\n\ndata: {"choices": [')
    assert events == [SseEvent(data="whole")]
    assert truncated


def test_a_cleanly_ended_stream_is_not_truncated() -> None:
    _, truncated = parse_all(b"data: whole\n\n")
    assert not truncated


def test_an_empty_data_buffer_dispatches_nothing() -> None:
    events, _ = parse_all(b"event: ping\n\n\n\n")
    assert events == []


STREAM = (
    ": hello\r\n"
    'data: {"a": 1}\n\n'
    "event: update\r\ndata: line one\r\ndata: line two\r\n\r\n"
    "data: ünïcødé ✓\r\r"
    "id: 9\ndata: [DONE]\n\n"
).encode()
EXPECTED = [
    SseEvent(data='{"a": 1}'),
    SseEvent(data="line one\nline two", event="update"),
    SseEvent(data="ünïcødé ✓"),
    SseEvent(data="[DONE]", id="9"),
]


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_split_of_the_bytes_gives_the_same_events(cuts: list[int]) -> None:
    points = [0, *sorted(cuts), len(STREAM)]
    pieces = [STREAM[a:b] for a, b in itertools.pairwise(points)]
    events, truncated = parse_all(*pieces)
    assert events == EXPECTED
    assert not truncated


async def test_iter_sse_reads_an_async_byte_stream() -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b"data: a\n"
        yield b"\ndata: b\r"
        yield b"\r"

    assert [e async for e in iter_sse(body())] == [SseEvent(data="a"), SseEvent(data="b")]
