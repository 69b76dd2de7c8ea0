"""One narrowing function decides access, for publish-time validation and for every turn."""

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import psych_runtime
from psych_runtime.core import narrowing
from psych_runtime.core import validation
from psych_runtime.core.narrowing import matches
from psych_runtime.core.narrowing import narrow
from psych_runtime.core.state import RunStateView
from psych_runtime.runtime.agent import catalog


def test_the_planes_nest() -> None:
    offered = ["crm_read", "crm_write", "mail_send", "search"]
    assert narrow(offered, granted=None) == tuple(sorted(offered))
    assert narrow(offered, granted=()) == ()
    assert narrow(offered, granted=["crm_*", "search"]) == ("crm_read", "crm_write", "search")
    assert narrow(offered, granted=["crm_*"], permitted=["crm_read"]) == ("crm_read",)
    assert narrow(offered, granted=None, withheld={"search"}) == (
        "crm_read",
        "crm_write",
        "mail_send",
    )
    assert narrow(["b", "a", "a"], granted=None) == ("a", "b")  # stable, no repeats


def test_a_pattern_is_exact_or_a_trailing_prefix() -> None:
    assert matches("crm_read", "crm_*") and matches("crm_read", "crm_read")
    assert not matches("crm_read", "crm") and not matches("xcrm_read", "crm_*")
    assert matches("anything", "*")


def test_publish_and_the_runtime_use_the_same_function() -> None:
    assert validation.narrow is narrowing.narrow
    assert catalog.narrow is narrowing.narrow


NAMES = st.sampled_from(["alpha", "beta", "gamma", "delta", "omega"])


def _registry(names: set[str]) -> psych_runtime.ToolRegistry:
    registry = psych_runtime.ToolRegistry()
    for name in sorted(names):

        async def tool() -> str:
            """A tool."""
            return "ok"

        registry.register(tool, name=name)
    return registry


@settings(max_examples=150, deadline=None)
@given(registered=st.sets(NAMES), granted=st.sets(NAMES, min_size=1))
def test_what_publish_accepts_is_exactly_what_a_turn_offers(
    registered: set[str], granted: set[str]
) -> None:
    spec = psych_runtime.AgentSpec(name="a", model="m", tools=tuple(sorted(granted)))
    context = psych_runtime.ValidationContext(
        registered_tools=registered, registry_is_complete=True
    )
    try:
        psych_runtime.validate(spec, context=context)
        refused: set[str] = set()
    except psych_runtime.SpecValidationError as error:
        refused = {issue.message.split("'")[1] for issue in error.issues}
    state = RunStateView(run_id=psych_runtime.RunId("run_1"), scope=psych_runtime.Scope(tenant="t"))
    offered, _ = catalog.ToolCatalog(spec, _registry(registered)).offered(state, 3)
    assert {d.name for d in offered} == granted - refused
    assert refused == granted - registered
