"""``catalog.ToolCatalog``: which tools a turn offers, and what the loop knows of each."""

from collections.abc import Collection
from typing import Any

from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.reducer import READ_TOOL_OUTPUT
from psych_runtime.core.reducer import reduce
from psych_runtime.core.spec import CodeExecution
from psych_runtime.core.spec import CodeTool
from psych_runtime.core.spec import HttpTool
from psych_runtime.core.spec import Skill
from psych_runtime.core.spec import SuspensionPolicy
from psych_runtime.core.state import RunStateView
from psych_runtime.runtime.agent.built_ins import BUILT_INS
from psych_runtime.runtime.agent.catalog import ToolCatalog
from psych_runtime.testing import LogBuilder
from psych_runtime.tools.approval import ToolClass

from .conftest import Orders
from .conftest import agent
from .conftest import started
from .conftest import tool_turn

FRESH = reduce(started().build())


def _catalog(remembers: bool = False, **spec: Any) -> ToolCatalog:
    return ToolCatalog(agent(**spec), Orders().registry, remembers=remembers, built_ins=BUILT_INS)


def _names(
    catalog: ToolCatalog, state: RunStateView = FRESH, permitted: Collection[str] | None = None
) -> list[str]:
    definitions, _ = catalog.offered(state, 3, permitted=permitted)
    return [d.name for d in definitions]


def _state(log: LogBuilder) -> RunStateView:
    return reduce(log.build())


def _failing(tool: str, times: int) -> LogBuilder:
    log = tool_turn(started(), *(f"f{n}" for n in range(times)))
    for n in range(times):
        log.tool_started(f"f{n}", tool=tool).tool_finished(f"f{n}", ToolOutcome.ERROR)
    return log


QUOTE = HttpTool(
    name="quote",
    description="Get a shipping quote.",
    url="https://shipping.example/quote",
    method="GET",
)
CANCEL = HttpTool(
    name="cancel",
    description="Cancel a shipment.",
    url="https://shipping.example/x",
    method="DELETE",
)


async def test_only_granted_tools_this_process_can_run_are_offered_in_name_order() -> None:
    # Sorted, so the prompt a provider caches stays the same from turn to turn.
    catalog = _catalog(tools=("refund", "lookup", "unregistered", QUOTE))
    assert _names(catalog) == ["lookup", "quote", "refund"]
    assert _names(_catalog(tools=("lookup",))) == ["lookup"]  # refund is registered, not granted
    assert catalog.offered_now == {"refund", "lookup", "quote"}


async def test_a_tool_failing_up_to_the_threshold_is_withheld_and_the_model_told() -> None:
    catalog = _catalog(tools=("lookup", "refund"))
    definitions, advisories = catalog.offered(_state(_failing("refund", 3)), 3)
    assert [d.name for d in definitions] == ["lookup"]
    assert len(advisories) == 1 and "refund" in advisories[0]
    definitions, advisories = catalog.offered(_state(_failing("refund", 2)), 3)
    assert [d.name for d in definitions] == ["lookup", "refund"] and advisories == []


async def test_only_a_tool_the_model_was_offered_can_have_been_withheld() -> None:
    catalog = _catalog(tools=("lookup",))
    state = _state(_failing("refund", 5))
    assert catalog.withheld_by_streak("refund", state, 3) is None  # never granted
    _, advisories = catalog.offered(state, 3)
    assert advisories == []
    state = _state(_failing("lookup", 4))
    assert catalog.withheld_by_streak("lookup", state, 3) == 4
    assert catalog.withheld_by_streak("lookup", state, 5) is None


async def test_the_tenants_plane_narrows_the_spec_tools_but_never_the_built_ins() -> None:
    catalog = _catalog(
        tools=("lookup", "refund", QUOTE),
        suspension=SuspensionPolicy(may_ask_questions=True),
    )
    assert _names(catalog, permitted=["look*"]) == ["lookup", "ask_question"]
    assert _names(catalog, permitted=()) == ["ask_question"]
    assert _names(catalog, permitted=None) == ["lookup", "quote", "refund", "ask_question"]


async def test_built_ins_follow_the_spec_tools_in_the_tables_order_with_run_code_last() -> None:
    skill = Skill(name="refunds", description="How refunds work.", body="Refund within 30 days.")
    catalog = _catalog(
        remembers=True,
        tools=("lookup",),
        suspension=SuspensionPolicy(may_ask_questions=True),
        skills=(skill,),
        tasks_enabled=True,
        components_enabled=True,
        code_execution=CodeExecution(),
    )
    handles = tool_turn(started(), "c1").tool_started("c1", tool="lookup")
    handles.tool_finished("c1", result="x", result_handle="h_c1", result_bytes=1)
    assert _names(catalog, _state(handles)) == [
        "lookup",
        READ_TOOL_OUTPUT,
        "ask_question",
        "load_skill",
        "update_tasks",
        "show_component",
        "remember",
        "forget",
        "run_code",
    ]


async def test_read_tool_output_is_offered_once_there_is_a_handle_and_while_it_works() -> None:
    catalog = _catalog(tools=("lookup",))
    assert READ_TOOL_OUTPUT not in _names(catalog)
    log = tool_turn(started(), "c1").tool_started("c1", tool="lookup")
    log.tool_finished("c1", result="x", result_handle="h_c1", result_bytes=1)
    assert READ_TOOL_OUTPUT in _names(catalog, _state(log))
    tool_turn(log, *(f"r{n}" for n in range(3)))
    for n in range(3):
        log.tool_started(f"r{n}", tool=READ_TOOL_OUTPUT, arguments={"handle": "h_c1"})
        log.tool_finished(f"r{n}", ToolOutcome.ERROR)
    definitions, advisories = catalog.offered(_state(log), 3)
    assert READ_TOOL_OUTPUT not in [d.name for d in definitions]
    assert any(READ_TOOL_OUTPUT in line for line in advisories)


async def test_a_program_may_call_the_tools_offered_before_it() -> None:
    catalog = _catalog(tools=("lookup", "refund"), code_execution=CodeExecution())
    definitions, _ = catalog.offered(FRESH, 3, permitted=["lookup"])
    program = definitions[-1]
    assert program.name == "run_code"
    assert "tools.lookup(" in program.description and "refund" not in program.description


async def test_memory_tools_are_offered_only_when_the_run_has_an_end_user_to_remember() -> None:
    assert "remember" not in _names(_catalog())
    assert not _catalog().built_in("remember") and _catalog(remembers=True).built_in("forget")


async def test_what_the_catalog_says_of_a_code_tool() -> None:
    catalog = _catalog(tools=("lookup", CodeTool(name="refund", interruptible=False)))
    assert catalog.executable("lookup") and not catalog.executable("shred")
    assert catalog.interruptible("lookup") and not catalog.interruptible("refund")
    assert catalog.interruptible("shred")  # an unknown name may always be abandoned
    assert catalog.safe_to_retry("lookup") and not catalog.safe_to_retry("refund")
    assert catalog.tool_class("lookup") is ToolClass.READ_ONLY
    assert catalog.tool_class("refund") is ToolClass.WRITE
    assert catalog.tool_class("shred") is ToolClass.WRITE  # saying nothing is never exempt


async def test_what_the_catalog_says_of_an_http_tool_follows_its_method() -> None:
    catalog = _catalog(tools=(QUOTE, CANCEL))
    assert catalog.executable("quote") and catalog.executable("cancel")
    assert catalog.safe_to_retry("quote") and not catalog.safe_to_retry("cancel")
    assert catalog.tool_class("quote") is ToolClass.READ_ONLY
    assert catalog.tool_class("cancel") is ToolClass.DESTRUCTIVE


async def test_what_the_catalog_says_of_a_built_in_comes_from_its_entry() -> None:
    catalog = _catalog(code_execution=CodeExecution())
    assert catalog.built_in("run_code") and not catalog.built_in("delegate")
    assert catalog.tool_class("run_code") is ToolClass.WRITE
    assert not catalog.safe_to_retry("run_code") and catalog.safe_to_retry(READ_TOOL_OUTPUT)
    assert not catalog.executable("run_code")  # built-ins run in the loop, not as tools
