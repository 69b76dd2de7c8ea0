"""What the tool registry refuses, at registration and at call time.

Registration errors are raised while the process boots so a badly declared tool never
reaches a model; call-time errors carry a ``kind`` the agent loop copies into the
recorded failure, so the model is told what went wrong in words it can act on.
"""

from collections.abc import Iterable
from typing import ClassVar

from psych_runtime.core.errors import PsychError


class ToolCallFailed(PsychError):
    """A call ended without a result, for a reason the model is told by ``kind``.

    The base of the failures a source, an HTTP tool or the result store raises; each
    subclass says which ``kind`` values it uses.

    Attributes:
        kind: a stable classifier copied into the recorded failure.
        transient: whether the same call could succeed later.
    """

    def __init__(self, kind: str, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.transient = transient


class ToolSchemaError(PsychError):
    """A function cannot become a tool as written.

    Raised by ``ToolRegistry.register`` (and the decorator) for a bad or taken name, a
    missing type hint or docstring, or a type pydantic cannot describe. Every problem
    found is listed at once so the developer fixes them in one pass.

    Attributes:
        tool: the name the tool would have had.
        problems: one line per problem, each saying how to fix it.
    """

    def __init__(self, tool: str, problems: Iterable[str]) -> None:
        self.tool = tool
        self.problems = tuple(problems)
        listed = "\n".join(f"  - {problem}" for problem in self.problems)
        super().__init__(f"cannot register tool {tool!r}:\n{listed}")


class ToolArgumentsInvalid(PsychError):
    """The arguments a model sent do not fit the tool's parameters.

    The message lists every offending field, because the model reads it and a complete
    list lets it correct everything in its next attempt.

    Attributes:
        tool: the tool that was called.
        problems: one ``field: reason`` line per bad argument.
    """

    kind: ClassVar[str] = "invalid_arguments"

    def __init__(self, tool: str, problems: Iterable[str]) -> None:
        self.tool = tool
        self.problems = tuple(problems)
        listed = "; ".join(self.problems)
        super().__init__(f"invalid arguments for tool {tool!r}: {listed}")


class UnknownTool(PsychError):
    """No tool of this name is registered.

    Attributes:
        name: the name asked for.
        available: every registered name, sorted, so the message can suggest one.
    """

    kind: ClassVar[str] = "unknown_tool"

    def __init__(self, name: str, available: Iterable[str]) -> None:
        self.name = name
        self.available = tuple(sorted(available))
        offer = ", ".join(self.available) if self.available else "none"
        super().__init__(f"no tool named {name!r} is registered (registered: {offer})")


class ToolResultInvalid(PsychError):
    """A tool returned something that cannot be turned into JSON.

    Tool results are stored in the log and shown to the model, so they must be JSON
    data; this names the tool and the offending type instead of surfacing a serializer
    traceback.

    Attributes:
        tool: the tool whose result was refused.
    """

    kind: ClassVar[str] = "invalid_result"

    def __init__(self, tool: str, detail: str) -> None:
        self.tool = tool
        super().__init__(f"tool {tool!r} returned a value that is not JSON data: {detail}")


__all__ = [
    "ToolArgumentsInvalid",
    "ToolCallFailed",
    "ToolResultInvalid",
    "ToolSchemaError",
    "UnknownTool",
]
