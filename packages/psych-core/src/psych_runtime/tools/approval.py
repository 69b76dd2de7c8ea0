"""Which tool calls wait for a person: tool classes, approval rules and the Policy port.

Two sources decide, both process configuration rather than Spec data, so the same
published agent can run with approvals in production and without them in tests:

* ``ApprovalRules``: selectors naming a class of tool (``@write``, ``@destructive``,
  ``@read-only``) or a tool by name, plus ``always`` and ``never`` lists of tool names.
  ``never`` is checked first and wins, then ``always``, then the selectors.
* a ``Policy``: the consumer's own judgement of one call (``allow``, ``deny`` or
  ``ask``), given the tenant, the tool and the arguments. A policy that raises denies.

A tool's class comes from its annotations: ``destructive`` outranks ``write``, which
outranks ``read-only``; a tool that says nothing is a ``write`` tool, never exempt.
"""

import inspect
import logging
from collections.abc import Awaitable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from enum import Enum
from enum import StrEnum
from typing import Protocol
from typing import runtime_checkable

from psych_runtime.core.records import JsonObject
from psych_runtime.core.scope import Scope

log = logging.getLogger(__name__)


class ToolClass(StrEnum):
    """How much harm a call of a tool could do, from its annotations."""

    READ_ONLY = "read-only"
    WRITE = "write"
    DESTRUCTIVE = "destructive"


def classify(annotations: Iterable[str]) -> ToolClass:
    """The class a tool's annotations give it; no annotation at all means ``write``."""
    hints = {hint.strip().lower() for hint in annotations}
    if ToolClass.DESTRUCTIVE.value in hints:
        return ToolClass.DESTRUCTIVE
    if ToolClass.WRITE.value in hints:
        return ToolClass.WRITE
    if ToolClass.READ_ONLY.value in hints:
        return ToolClass.READ_ONLY
    return ToolClass.WRITE


@dataclass(frozen=True, slots=True)
class Decision:
    """A Policy's answer for one call.

    Attributes:
        allowed: False refuses the call; the model is told ``reason``.
        reason: why, for the model (on a denial) or the person asked (on ``ask``).
        requires_approval: the call waits for a person even if no rule asks for it.
    """

    allowed: bool
    reason: str = ""
    requires_approval: bool = False

    @classmethod
    def allow(cls) -> "Decision":
        """Let the call run (unless an approval rule still asks for a person)."""
        return cls(allowed=True)

    @classmethod
    def deny(cls, reason: str) -> "Decision":
        """Refuse the call; the model is told ``reason``."""
        return cls(allowed=False, reason=reason)

    @classmethod
    def ask(cls, reason: str = "") -> "Decision":
        """Suspend the Run until a person approves or denies the call."""
        return cls(allowed=True, reason=reason, requires_approval=True)


@runtime_checkable
class Policy(Protocol):
    """The consumer's judgement of one tool call, asked before the call runs."""

    def allow_tool(
        self, scope: Scope, tool: str, arguments: JsonObject
    ) -> Decision | Awaitable[Decision]:
        """Allow, deny or ask about a call of ``tool`` with ``arguments`` for ``scope``."""
        ...


class AllowAll:
    """The default Policy: every call may run (approval rules still apply)."""

    def allow_tool(self, scope: Scope, tool: str, arguments: JsonObject) -> Decision:
        """Allow every call."""
        return Decision.allow()


class InvalidApprovalRule(ValueError):
    """An approval selector or list names no tool class and no valid tool name."""


def _selector_class(selector: str) -> ToolClass | None:
    if not selector.startswith("@"):
        return None
    name = selector[1:].strip().lower()
    try:
        return ToolClass(name)
    except ValueError:
        classes = ", ".join(f"@{c.value}" for c in ToolClass)
        raise InvalidApprovalRule(
            f"unknown approval selector {selector!r}; use one of {classes} or a tool name"
        ) from None


def _names(values: Iterable[str], what: str) -> frozenset[str]:
    if isinstance(values, str):
        raise InvalidApprovalRule(f"{what} takes a collection of tool names, not one string")
    names = frozenset(values)
    for name in names:
        if not name or name.startswith("@"):
            raise InvalidApprovalRule(f"{what} holds tool names; got {name!r}")
    return names


@dataclass(frozen=True)
class ApprovalRules:
    """Which calls wait for a person before they run.

    Args:
        selectors: ``@read-only``, ``@write`` or ``@destructive`` (a whole class of
            tool, case-insensitive) or a tool's name. Empty, the default, asks about
            nothing; ``("@write", "@destructive")`` asks about every call that could
            change something.
        always: tools whose every call waits for a person.
        never: tools that never wait, whatever the selectors say; wins over ``always``.

    Raises:
        InvalidApprovalRule: a selector names no tool class, or a list holds a selector.
    """

    selectors: tuple[str, ...] = ()
    always: frozenset[str] = field(default_factory=frozenset)
    never: frozenset[str] = field(default_factory=frozenset)
    _classes: frozenset[ToolClass] = field(init=False, repr=False, compare=False)
    _tools: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        raw: object = self.selectors
        if isinstance(raw, str):
            raise InvalidApprovalRule("selectors takes a collection, not one string")
        selectors = tuple(self.selectors)
        if any(not s.strip() for s in selectors):
            raise InvalidApprovalRule("an approval selector may not be empty")
        classes = {c for c in map(_selector_class, selectors) if c is not None}
        tools = {s for s in selectors if not s.startswith("@")}
        object.__setattr__(self, "selectors", selectors)
        object.__setattr__(self, "always", _names(self.always, "always"))
        object.__setattr__(self, "never", _names(self.never, "never"))
        object.__setattr__(self, "_classes", frozenset(classes))
        object.__setattr__(self, "_tools", frozenset(tools))

    def require(self, tool: str, tool_class: ToolClass) -> bool:
        """Whether a call of ``tool`` (of ``tool_class``) waits for a person."""
        if tool in self.never:
            return False
        if tool in self.always:
            return True
        return tool in self._tools or tool_class in self._classes


class Verdict(Enum):
    """What becomes of one call once the rules and the Policy have spoken."""

    RUN = "run"
    DENY = "deny"
    ASK = "ask"


@dataclass(frozen=True, slots=True)
class Judgement:
    """A verdict and the reason given with it."""

    verdict: Verdict
    reason: str = ""


async def judge(
    rules: ApprovalRules,
    policy: Policy,
    scope: Scope,
    tool: str,
    tool_class: ToolClass,
    arguments: JsonObject,
) -> Judgement:
    """Decide whether a call runs now, is refused, or waits for a person.

    The Policy speaks first: a denial (or any exception it raises, or an answer that
    is not a ``Decision``) refuses the call. An ``ask``, or an allowed call the rules
    select, waits for a person.
    """
    try:
        answer = policy.allow_tool(scope, tool, arguments)
        decision = await answer if inspect.isawaitable(answer) else answer
    except Exception as error:
        log.warning("approval policy raised for tool %s; the call is denied", tool, exc_info=True)
        return Judgement(Verdict.DENY, f"the approval policy failed ({type(error).__name__})")
    checked: object = decision
    if not isinstance(checked, Decision):
        return Judgement(Verdict.DENY, "the approval policy gave no decision")
    if not decision.allowed:
        return Judgement(Verdict.DENY, decision.reason or "denied by policy")
    if decision.requires_approval or rules.require(tool, tool_class):
        return Judgement(Verdict.ASK, decision.reason)
    return Judgement(Verdict.RUN)


__all__ = [
    "AllowAll",
    "ApprovalRules",
    "Decision",
    "InvalidApprovalRule",
    "Judgement",
    "Policy",
    "ToolClass",
    "Verdict",
    "classify",
    "judge",
]
