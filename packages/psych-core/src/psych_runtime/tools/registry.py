"""The ToolRegistry: code tools by name, for one process.

A Spec only names its code tools; this is where those names meet the functions behind
them. Registration does all the expensive work (reading hints and docstrings, building
the pydantic argument model and the JSON schema) so that a call costs one validation,
the function itself and one serialization of its result.
"""

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import TypeVar
from typing import cast
from typing import overload

from pydantic import JsonValue
from pydantic import ValidationError
from pydantic_core import ErrorDetails
from pydantic_core import PydanticSerializationError

from psych_runtime.core.messages import ToolDefinition
from psych_runtime.tools.context import ToolContext
from psych_runtime.tools.errors import ToolArgumentsInvalid
from psych_runtime.tools.errors import ToolResultInvalid
from psych_runtime.tools.errors import ToolSchemaError
from psych_runtime.tools.errors import UnknownTool
from psych_runtime.tools.names import tool_name_problem
from psych_runtime.tools.schema import ToolSignature
from psych_runtime.tools.schema import build_signature

F = TypeVar("F", bound=Callable[..., object])

_INPUT_PREVIEW = 60


class RegisteredTool:
    """One registered tool: what the model is shown, and how to call it.

    Instances are built by ``ToolRegistry.register`` and never change afterwards.
    ``input_schema`` is shared with every definition handed out, so treat it as
    read-only.

    Attributes:
        name: the name the model calls it by.
        function: the registered function, unchanged.
        description: what the model reads to decide whether to call it.
        input_schema: JSON schema of the arguments object.
        idempotent: safe to execute again after a crash left the call in doubt.
        annotations: MCP-style hints (``read-only``, ``write``, ``destructive``...).
    """

    __slots__ = ("_definition", "_signature", "annotations", "function", "idempotent", "name")

    def __init__(
        self,
        *,
        name: str,
        function: Callable[..., object],
        signature: ToolSignature,
        idempotent: bool,
        annotations: frozenset[str],
    ) -> None:
        self.name = name
        self.function = function
        self.idempotent = idempotent
        self.annotations = annotations
        self._signature = signature
        self._definition = ToolDefinition(
            name=name,
            description=signature.description,
            input_schema=signature.input_schema,
            annotations=annotations,
        )

    @property
    def description(self) -> str:
        """What the model reads to decide whether to call the tool."""
        return self._signature.description

    @property
    def input_schema(self) -> dict[str, JsonValue]:
        """The JSON schema of the arguments object (do not mutate it)."""
        return self._signature.input_schema

    @property
    def wants_context(self) -> bool:
        """Whether the function asked for a ``ToolContext``."""
        return any(param.field is None for param in self._signature.parameters)

    def definition(self) -> ToolDefinition:
        """The tool as offered to a model; built once and reused for every turn."""
        return self._definition

    async def invoke(self, arguments: Mapping[str, JsonValue], context: ToolContext) -> JsonValue:
        """Validate ``arguments``, run the function and return its result as JSON data.

        Synchronous functions run in a worker thread so a slow one cannot stall the
        event loop that other Runs share, and their result is converted to JSON data in
        that thread too, since a large result takes real time to convert. Exceptions
        raised by the function propagate unchanged, ``SystemExit`` and
        ``KeyboardInterrupt`` included; the caller records them as the call's failure.

        Raises:
            ToolArgumentsInvalid: the arguments do not fit the parameters.
            ToolResultInvalid: the result cannot be converted to JSON.
        """
        signature = self._signature
        try:
            parsed = signature.arguments_model.model_validate(arguments)
        except ValidationError as exc:
            raise ToolArgumentsInvalid(self.name, _describe(exc.errors())) from None
        positional: list[object] = []
        keywords: dict[str, object] = {}
        for param in signature.parameters:
            value = context if param.field is None else getattr(parsed, param.field)
            if param.positional_only:
                positional.append(value)
            else:
                keywords[param.name] = value
        if not signature.is_async:
            return await asyncio.to_thread(self._call_and_convert, positional, keywords)
        coroutine_function = cast(Callable[..., Awaitable[object]], self.function)
        return self._converted(await coroutine_function(*positional, **keywords))

    def _call_and_convert(self, positional: list[object], keywords: dict[str, object]) -> JsonValue:
        """Call a synchronous function and convert its result, both in the calling thread."""
        return self._converted(self.function(*positional, **keywords))

    def _converted(self, result: object) -> JsonValue:
        """The function's result as JSON data.

        Raises:
            ToolResultInvalid: the result is not JSON data, or nests deeper than the
                serialiser goes (it refuses such values with a ``ValueError``).
        """
        returns = self._signature.returns
        if returns is None:
            return None
        try:
            data = returns.dump_python(result, mode="json", warnings=False)
        except (PydanticSerializationError, ValueError, RecursionError) as exc:
            raise ToolResultInvalid(self.name, str(exc)) from exc
        return cast(JsonValue, data)

    def __repr__(self) -> str:
        return f"RegisteredTool(name={self.name!r}, idempotent={self.idempotent})"


def _describe(errors: list[ErrorDetails]) -> list[str]:
    """Render pydantic's errors as one ``field: reason`` line each, for the model to read."""
    lines: list[str] = []
    for error in errors:
        where = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        kind = error["type"]
        if kind == "missing":
            lines.append(f"{where}: required but missing")
        elif kind == "extra_forbidden":
            lines.append(f"{where}: not a parameter of this tool")
        else:
            shown = repr(error["input"])
            if len(shown) > _INPUT_PREVIEW:
                shown = shown[: _INPUT_PREVIEW - 3] + "..."
            lines.append(f"{where}: {error['msg']} (got {shown})")
    return lines


class ToolRegistry:
    """The code tools a process can run, looked up by name.

    Fill it while the application starts up, from a single thread: ``register`` takes
    no lock, on purpose. Once filled it is only read, so any task or thread may look
    tools up and call them.

    Example:
        >>> registry = ToolRegistry()
        >>> @registry.tool
        ... async def lookup_order(order_id: str) -> dict[str, str]:
        ...     '''Look up an order by its id.'''
        ...     return {"order_id": order_id}
        >>> "lookup_order" in registry
        True
    """

    def __init__(self) -> None:
        self._tools: dict[str, RegisteredTool] = {}
        self._names: frozenset[str] = frozenset()

    def register(
        self,
        fn: Callable[..., object],
        *,
        name: str | None = None,
        idempotent: bool = False,
        annotations: Iterable[str] = (),
        description: str | None = None,
    ) -> RegisteredTool:
        """Register ``fn`` as a tool.

        Args:
            fn: a sync or async function (or callable object) with type hints on every
                parameter and on its return, and a docstring.
            name: the tool's name; defaults to the function's ``__name__``.
            idempotent: the function may safely run twice for the same call (it
                deduplicates on ``ToolContext.idempotency_key``, or has no side
                effect), so a call left in doubt by a crash is executed again instead
                of being reported to the model as possibly done.
            annotations: MCP-style hints such as ``read-only`` or ``destructive``,
                consulted by approval selectors.
            description: overrides the docstring as the model-facing description.

        Returns:
            The registered tool.

        Raises:
            ToolSchemaError: the name is invalid, reserved or taken, or the function
                lacks hints or a docstring.
        """
        chosen = name if name is not None else getattr(fn, "__name__", None)
        if not isinstance(chosen, str):
            raise ToolSchemaError(repr(fn), ["it has no __name__; pass name=..."])
        problem = tool_name_problem(chosen)
        if problem is None and chosen in self._tools:
            problem = f"a tool named {chosen!r} is already registered; pass name=... to rename"
        if problem is not None:
            raise ToolSchemaError(chosen, [problem])
        hints = (annotations,) if isinstance(annotations, str) else tuple(annotations)
        tool = RegisteredTool(
            name=chosen,
            function=fn,
            signature=build_signature(chosen, fn, description=description),
            idempotent=idempotent,
            annotations=frozenset(hints),
        )
        self._tools[chosen] = tool
        self._names = frozenset(self._tools)
        return tool

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(
        self,
        /,
        *,
        name: str | None = None,
        idempotent: bool = False,
        annotations: Iterable[str] = (),
        description: str | None = None,
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        fn: F | None = None,
        /,
        *,
        name: str | None = None,
        idempotent: bool = False,
        annotations: Iterable[str] = (),
        description: str | None = None,
    ) -> F | Callable[[F], F]:
        """Register a function as a tool, as a decorator with or without arguments.

        The decorated function is returned unchanged, so it stays directly callable.
        """

        def decorate(function: F) -> F:
            self.register(
                function,
                name=name,
                idempotent=idempotent,
                annotations=annotations,
                description=description,
            )
            return function

        return decorate if fn is None else decorate(fn)

    @property
    def names(self) -> frozenset[str]:
        """Every registered name; what publish-time validation checks a Spec against."""
        return self._names

    def get(self, name: str) -> RegisteredTool | None:
        """The tool registered as ``name``, or None."""
        return self._tools.get(name)

    def definitions(self, names: Iterable[str] | None = None) -> tuple[ToolDefinition, ...]:
        """Definitions for ``names`` in the order given, or for every tool by name.

        Raises:
            UnknownTool: a name is not registered.
        """
        if names is None:
            return tuple(self._tools[key].definition() for key in sorted(self._tools))
        return tuple(self._require(name).definition() for name in names)

    async def invoke(
        self, name: str, arguments: Mapping[str, JsonValue], context: ToolContext
    ) -> JsonValue:
        """Call the tool ``name`` with the model's ``arguments``.

        Raises:
            UnknownTool: nothing is registered under ``name``.
            ToolArgumentsInvalid: the arguments do not fit the tool's parameters.
            ToolResultInvalid: the result cannot be converted to JSON.
        """
        return await self._require(name).invoke(arguments, context)

    def _require(self, name: str) -> RegisteredTool:
        tool = self._tools.get(name)
        if tool is None:
            raise UnknownTool(name, self._tools)
        return tool

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"ToolRegistry({sorted(self._tools)!r})"


__all__ = ["RegisteredTool", "ToolRegistry"]
