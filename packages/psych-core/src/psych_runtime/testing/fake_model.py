"""FakeModel: a ModelClient that plays back a script, for tests without a network.

Each call to ``stream`` consumes the next scripted response, in order. Responses can be
ordinary turns (text, reasoning, tool calls, usage), or the failures a real provider
produces: a stream that goes silent, one that stops before its final event, an HTTP
error that is worth retrying, one that is not, and a prompt that is too long. The fake
only produces events; timeouts and retries are the runtime's business, which is exactly
what such a script lets a test exercise.

Example:
    >>> model = FakeModel().turn(tool_calls=[("lookup_order", {"order_id": "A1"})])
    >>> model = model.turn(text="A1 has shipped.")
"""

import asyncio
import json
import re
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Self

from pydantic import JsonValue

from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import Usage
from psych_runtime.model.port import ContextOverflow
from psych_runtime.model.port import ModelError
from psych_runtime.model.port import ModelRequest
from psych_runtime.model.port import ReasoningDelta
from psych_runtime.model.port import StreamDone
from psych_runtime.model.port import StreamEvent
from psych_runtime.model.port import TextDelta
from psych_runtime.model.port import ToolCallDelta
from psych_runtime.model.port import TransientModelError

DEFAULT_FRAGMENT_CHARS = 4
"""How many characters of a tool call's arguments each default fragment carries."""

_STALL_MARGIN_SECONDS = 0.05
_STALL_WHEN_DISABLED_SECONDS = 0.1
_WORD = re.compile(r"\s*\S+\s*")

Chunks = str | Sequence[str]
Delta = TextDelta | ReasoningDelta | ToolCallDelta


class FakeModelScriptExhausted(ModelError):
    """The fake was called more often than it was scripted.

    It is a (permanent) ``ModelError`` so the runtime records it as a failed model
    call instead of crashing the Worker, and the failure kind names this class, which
    makes a missing ``.turn(...)`` easy to spot in the Run's status.

    Attributes:
        scripted: how many responses were scripted.
        call_number: which call (1-based) found the script empty.
    """

    def __init__(self, scripted: int, call_number: int) -> None:
        super().__init__(
            f"FakeModel call {call_number} has no scripted response (only {scripted} "
            "scripted); add another .turn(...) or check why the runtime called again"
        )
        self.scripted = scripted
        self.call_number = call_number


class FakeTransientFailure(TransientModelError):
    """A scripted failure the runtime should treat as worth retrying."""

    def __init__(
        self, status_code: int, *, message: str | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(
            message or f"scripted transient failure (HTTP {status_code})",
            status_code=status_code,
            retry_after=retry_after,
        )


class FakePermanentFailure(ModelError):
    """A scripted failure that retrying cannot fix."""

    def __init__(self, status_code: int, *, message: str | None = None) -> None:
        super().__init__(
            message or f"scripted permanent failure (HTTP {status_code})",
            status_code=status_code,
        )


@dataclass(frozen=True)
class ToolCallScript:
    """One scripted tool call, when a ``(name, arguments)`` pair is not enough.

    Attributes:
        name: the tool name the model asks for (not checked against anything).
        arguments: arguments to send as compact JSON.
        raw_arguments: the exact argument text to send; use it for malformed calls.
        call_id: the call's id; minted as ``call_<n>`` when omitted.
        fragments: how the argument text is cut into deltas; must join back into it.
        fragment_chars: cut the argument text into deltas of this many characters
            instead (``DEFAULT_FRAGMENT_CHARS`` when neither is given). Deltas are
            made as the stream is read, so a large argument in tiny deltas costs no
            memory up front: the way to script a provider that trickles megabytes.

    Raises:
        ValueError: not exactly one of ``arguments`` and ``raw_arguments`` was given,
            ``fragments`` is empty or does not join into the argument text, both
            ``fragments`` and ``fragment_chars`` were given, or ``fragment_chars`` is
            not positive.
    """

    name: str
    arguments: Mapping[str, JsonValue] | None = None
    raw_arguments: str | None = None
    call_id: str | None = None
    fragments: Sequence[str] | None = None
    fragment_chars: int | None = None

    def __post_init__(self) -> None:
        if (self.arguments is None) == (self.raw_arguments is None):
            raise ValueError("give exactly one of arguments= and raw_arguments=")
        if self.fragment_chars is not None:
            if self.fragments is not None:
                raise ValueError("give at most one of fragments= and fragment_chars=")
            if self.fragment_chars < 1:
                raise ValueError(f"fragment_chars must be positive, got {self.fragment_chars}")
        if self.fragments is None:
            return
        if isinstance(self.fragments, str):
            raise ValueError("fragments must be a sequence of strings, not one string")
        pieces = tuple(self.fragments)
        if not pieces:
            raise ValueError("fragments must hold at least one piece (it carries the id)")
        if "".join(pieces) != self.wire_arguments:
            raise ValueError(
                f"fragments join to {''.join(pieces)!r}, not the arguments {self.wire_arguments!r}"
            )
        object.__setattr__(self, "fragments", pieces)

    @property
    def wire_arguments(self) -> str:
        """The argument text exactly as the stream carries it."""
        if self.raw_arguments is not None:
            return self.raw_arguments
        return json.dumps(dict(self.arguments or {}), separators=(",", ":"))

    def pieces(self) -> tuple[str, ...]:
        """The argument text cut into the fragments the stream will carry."""
        return tuple(_cut(self))


def _cut(script: ToolCallScript) -> Iterator[str]:
    """A call's argument fragments one at a time, without holding them all."""
    if script.fragments is not None:
        yield from script.fragments
        return
    wire = script.wire_arguments
    step = script.fragment_chars or DEFAULT_FRAGMENT_CHARS
    if not wire:
        yield ""
    for start in range(0, len(wire), step):
        yield wire[start : start + step]


@dataclass(frozen=True, slots=True)
class _CallStream:
    """One scripted tool call, cut into its deltas only while the stream is read."""

    index: int
    call_id: str
    script: ToolCallScript

    def deltas(self) -> Iterator[ToolCallDelta]:
        pieces = _cut(self.script)
        first = next(pieces, "")
        yield ToolCallDelta(
            index=self.index, id=self.call_id, name=self.script.name, arguments=first
        )
        for piece in pieces:
            yield ToolCallDelta(index=self.index, arguments=piece)


@dataclass(frozen=True, slots=True)
class _Reply:
    deltas: tuple[Delta | _CallStream, ...]
    delay: float
    complete: bool
    finish_reason: str = "stop"
    usage: Usage | None = None
    cost: Cost | None = None


@dataclass(frozen=True, slots=True)
class _Stall:
    seconds: float | None


@dataclass(frozen=True, slots=True)
class _Raise:
    make: Callable[[], ModelError]
    """Builds a fresh exception per call, so no traceback is shared between raises."""


_Step = _Reply | _Stall | _Raise


def _chunks(value: Chunks) -> tuple[str, ...]:
    """Cut a string into one word per chunk (spaces kept), or keep given chunks as they are."""
    if not isinstance(value, str):
        return tuple(value)
    words = _WORD.findall(value)
    return tuple(words) if words else ((value,) if value else ())


def _delay(seconds: float) -> float:
    if seconds < 0:
        raise ValueError("chunk_delay_seconds cannot be negative")
    return seconds


class FakeModel:
    """A scriptable ``ModelClient``.

    Script responses with the chainable methods, hand the fake to the runtime, then
    inspect ``requests`` to see exactly what the runtime sent.

    Attributes:
        requests: every request received, in order, including ones never iterated.
    """

    def __init__(self, *, known_models: Iterable[str] | None = None) -> None:
        """Create an empty script.

        Args:
            known_models: model ids to report from ``known_models()``; None reports an
                empty set, which publish-time validation reads as "do not check".
        """
        self._known = frozenset(known_models or ())
        self._script: list[_Step] = []
        self._requests: list[ModelRequest] = []
        self._minted = 0
        self._given_ids: set[str] = set()

    # --- scripting ----------------------------------------------------------------

    def turn(
        self,
        *,
        text: Chunks = "",
        tool_calls: Sequence[tuple[str, Mapping[str, JsonValue]] | ToolCallScript] = (),
        reasoning: Chunks | None = None,
        usage: Usage | Mapping[str, int] | None = None,
        cost: Cost | None = None,
        finish_reason: str | None = None,
        chunk_delay_seconds: float = 0.0,
    ) -> Self:
        """Script an ordinary response.

        Args:
            text: visible text; a string is streamed one word per delta, a sequence
                of strings is streamed exactly as given.
            tool_calls: ``(name, arguments)`` pairs or ``ToolCallScript`` objects.
            reasoning: reasoning text, streamed before the visible text.
            usage: reported token usage; None means the provider reported none.
            cost: a cost the provider reported itself.
            finish_reason: defaults to ``tool_calls`` when there are calls, else ``stop``.
            chunk_delay_seconds: pause before every delta.
        """
        deltas: list[Delta | _CallStream] = [
            ReasoningDelta(text=chunk) for chunk in _chunks(reasoning or "")
        ]
        deltas.extend(TextDelta(text=chunk) for chunk in _chunks(text))
        scripts = [self._as_script(call) for call in tool_calls]
        for index, script in enumerate(scripts):
            call_id = script.call_id if script.call_id is not None else self._mint_id()
            deltas.append(_CallStream(index, call_id, script))
        reported = Usage.model_validate(usage) if isinstance(usage, Mapping) else usage
        self._script.append(
            _Reply(
                deltas=tuple(deltas),
                delay=_delay(chunk_delay_seconds),
                complete=True,
                finish_reason=finish_reason or ("tool_calls" if scripts else "stop"),
                usage=reported,
                cost=cost,
            )
        )
        return self

    def stalls(self, seconds: float | None = None) -> Self:
        """Script a response that goes silent, then completes with nothing.

        Args:
            seconds: how long to stay silent; by default a little longer than the
                request's idle timeout (0.1 s when the request disables it), so the
                runtime's idle check fires first. The fake never times out itself.
        """
        if seconds is not None and seconds < 0:
            raise ValueError("a stall cannot last a negative time")
        self._script.append(_Stall(seconds))
        return self

    def aborts_mid_token(self, text: Chunks = "", *, chunk_delay_seconds: float = 0.0) -> Self:
        """Script a stream that sends some text and then ends without its final event."""
        deltas = tuple(TextDelta(text=chunk) for chunk in _chunks(text))
        self._script.append(
            _Reply(deltas=deltas, delay=_delay(chunk_delay_seconds), complete=False)
        )
        return self

    def raises_transient(
        self,
        status_code: int = 503,
        *,
        message: str | None = None,
        retry_after: float | None = None,
    ) -> Self:
        """Script a failure worth retrying (``FakeTransientFailure``)."""
        self._script.append(
            _Raise(
                lambda: FakeTransientFailure(status_code, message=message, retry_after=retry_after)
            )
        )
        return self

    def raises_permanent(self, status_code: int = 400, *, message: str | None = None) -> Self:
        """Script a failure not worth retrying (``FakePermanentFailure``)."""
        self._script.append(_Raise(lambda: FakePermanentFailure(status_code, message=message)))
        return self

    def raises_overflow(self, *, message: str | None = None) -> Self:
        """Script the provider refusing the prompt as too long (``ContextOverflow``)."""
        text = message or "scripted context overflow: the prompt is too long for the model"
        self._script.append(_Raise(lambda: ContextOverflow(text, status_code=400)))
        return self

    # --- inspection ---------------------------------------------------------------

    @property
    def requests(self) -> tuple[ModelRequest, ...]:
        """Every request received so far, oldest first."""
        return tuple(self._requests)

    @property
    def last_request(self) -> ModelRequest:
        """The most recent request.

        Raises:
            LookupError: nothing has called the fake yet.
        """
        if not self._requests:
            raise LookupError("FakeModel has not received a request yet")
        return self._requests[-1]

    @property
    def remaining(self) -> int:
        """How many scripted responses have not been asked for yet."""
        return max(len(self._script) - len(self._requests), 0)

    # --- the ModelClient port -----------------------------------------------------

    async def known_models(self) -> frozenset[str]:
        """The model ids given at construction (empty means "do not check")."""
        return self._known

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Record ``request`` now and return the next scripted response as a stream.

        The request is recorded before anything is iterated, so a test sees it even
        when the consumer never reads the stream. Scripted errors surface on the first
        iteration, as they would from a real HTTP client.
        """
        self._requests.append(request)
        call_number = len(self._requests)
        step = self._script[call_number - 1] if call_number <= len(self._script) else None
        return self._play(step, request, call_number)

    async def _play(
        self, step: _Step | None, request: ModelRequest, call_number: int
    ) -> AsyncIterator[StreamEvent]:
        if step is None:
            raise FakeModelScriptExhausted(len(self._script), call_number)
        if isinstance(step, _Raise):
            raise step.make()
        if isinstance(step, _Stall):
            await asyncio.sleep(_stall_seconds(step, request))
            yield StreamDone(model=request.model)
            return
        for delta in _flattened(step.deltas):
            if step.delay:
                await asyncio.sleep(step.delay)
            yield delta
        if step.complete:
            yield StreamDone(
                finish_reason=step.finish_reason,
                usage=step.usage,
                cost=step.cost,
                model=request.model,
            )

    # --- helpers ------------------------------------------------------------------

    def _as_script(
        self, call: tuple[str, Mapping[str, JsonValue]] | ToolCallScript
    ) -> ToolCallScript:
        if isinstance(call, ToolCallScript):
            script = call
        else:
            name, arguments = call
            script = ToolCallScript(name, arguments=arguments)
        if script.call_id is not None:
            self._given_ids.add(script.call_id)
        return script

    def _mint_id(self) -> str:
        while True:
            self._minted += 1
            candidate = f"call_{self._minted}"
            if candidate not in self._given_ids:
                return candidate


def _flattened(deltas: Iterable[Delta | _CallStream]) -> Iterator[Delta]:
    for delta in deltas:
        if isinstance(delta, _CallStream):
            yield from delta.deltas()
        else:
            yield delta


def _stall_seconds(step: _Stall, request: ModelRequest) -> float:
    if step.seconds is not None:
        return step.seconds
    if request.idle_timeout_seconds > 0:
        return request.idle_timeout_seconds + _STALL_MARGIN_SECONDS
    return _STALL_WHEN_DISABLED_SECONDS


__all__ = [
    "DEFAULT_FRAGMENT_CHARS",
    "FakeModel",
    "FakeModelScriptExhausted",
    "FakePermanentFailure",
    "FakeTransientFailure",
    "ToolCallScript",
]
