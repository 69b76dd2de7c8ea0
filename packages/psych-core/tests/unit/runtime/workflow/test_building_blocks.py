"""Step ids, data paths, conditions and retry decisions of the workflow engine."""

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from psych_runtime.records import RunId
from psych_runtime.runtime.workflow.ids import step_id
from psych_runtime.runtime.workflow.retry import backoff
from psych_runtime.runtime.workflow.retry import will_retry
from psych_runtime.runtime.workflow.values import MISSING
from psych_runtime.runtime.workflow.values import Frame
from psych_runtime.runtime.workflow.values import StepView
from psych_runtime.runtime.workflow.values import holds
from psych_runtime.runtime.workflow.values import render
from psych_runtime.runtime.workflow.values import resolve
from psych_runtime.runtime.workflow.values import value_of
from psych_runtime.spec import Condition
from psych_runtime.spec import LiteralValue
from psych_runtime.spec import RetryPolicy
from psych_runtime.spec import ValuePath

RUN = RunId("run_1")


def test_a_step_id_is_stable_and_matches_its_definition() -> None:
    path = ("orders", 0, "fetch")
    digest = hashlib.sha256(b"run_1")
    for tag, text in ((b"s", b"orders"), (b"i", b"0"), (b"s", b"fetch")):
        digest.update(b"\x1f" + tag + text)
    assert step_id(RUN, path) == "stp_" + digest.hexdigest()[:32]
    assert step_id(RUN, path) == step_id(RunId("run_1"), list(path))


def test_step_ids_tell_types_runs_and_paths_apart() -> None:
    assert step_id(RUN, ("w", 1)) != step_id(RUN, ("w", "1"))
    assert step_id(RUN, ("w", 0, "a")) != step_id(RunId("run_2"), ("w", 0, "a"))
    assert step_id(RUN, ("w", 0, "a")) != step_id(RUN, ("w", 0, "a", 0))
    assert step_id(RUN, ("ab", "c")) != step_id(RUN, ("a", "bc"))


FRAME = Frame(
    input={"order": {"id": "A1", "lines": [{"sku": "X"}, {"sku": "Y"}]}, "n": 3},
    state={"count": 2},
    steps={
        "fetch": StepView("completed", {"items": [1, 2, 3], "ok": True}),
        "fetch.v2": StepView("completed", {"items": []}),
        "charge": StepView("failed", None, {"kind": "http_500", "message": "boom"}),
        "maybe": StepView("skipped"),
    },
    item={"sku": "Z"},
    index=4,
    iteration=2,
)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("input.order.id", "A1"),
        ("input.order.lines[1].sku", "Y"),
        ("input.n", 3),
        ("state.count", 2),
        ("item.sku", "Z"),
        ("item", {"sku": "Z"}),
        ("index", 4),
        ("iteration", 2),
        ("steps.fetch.output.items[2]", 3),
        ("steps.fetch.output.ok", True),
        ("steps.fetch.v2.output.items", []),  # a dotted name wins over a shorter one
        ("steps.fetch.status", "completed"),
        ("steps.charge.failure.kind", "http_500"),
        ("steps.charge.status", "failed"),
        ("steps.maybe.skipped", True),
        ("steps.fetch.skipped", False),
    ],
)
def test_paths_read_values(path: str, expected: object) -> None:
    assert resolve(path, FRAME) == expected


@pytest.mark.parametrize(
    "path",
    [
        "input.missing",
        "input.order.lines[5]",
        "input.order.id.deeper",
        "steps.unknown.output",
        "steps.charge.output.anything",
        "state.count[0]",
    ],
)
def test_a_path_that_leads_nowhere_is_missing(path: str) -> None:
    assert resolve(path, FRAME) is MISSING
    assert value_of(ValuePath(path=path), FRAME) is None


def test_item_index_and_iteration_are_missing_outside_their_step() -> None:
    bare = Frame(input={})
    for path in ("item", "index", "iteration", "item.sku"):
        assert resolve(path, bare) is MISSING


def test_render_reads_literals_and_paths() -> None:
    mapping = {"id": ValuePath(path="input.order.id"), "fixed": LiteralValue(value=[1])}
    assert render(mapping, FRAME) == {"id": "A1", "fixed": [1]}


def _cond(**kw: object) -> Condition:
    return Condition(**kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (_cond(path="input.n", op="eq", value=3), True),
        (_cond(path="input.n", op="ne", value=3), False),
        (_cond(path="input.n", op="gt", value=2), True),
        (_cond(path="input.n", op="gte", value=3), True),
        (_cond(path="input.n", op="lt", value=3), False),
        (_cond(path="input.n", op="lte", value=3), True),
        (_cond(path="input.n", op="gt", value="a"), False),  # no ordering: false, no error
        (_cond(path="input.order.id", op="in", value=["A1", "B2"]), True),
        (_cond(path="input.order.id", op="contains", value="1"), True),
        (_cond(path="steps.fetch.output.items", op="contains", value=2), True),
        (_cond(path="input.order", op="contains", value="id"), True),
        (_cond(path="input.order.id", op="matches", value="^A\\d$"), True),
        (_cond(path="input.missing", op="exists"), False),
        (_cond(path="input.missing", op="exists", negate=True), True),
        (_cond(path="input.missing"), False),
        (_cond(path="input.missing", op="ne", value=1), False),  # missing compares false
        (_cond(path="steps.fetch.output.items"), True),
        (_cond(path="steps.fetch.v2.output.items"), False),  # empty list is falsy
        (_cond(path="steps.maybe.skipped"), True),
        (
            _cond(all_of=(_cond(path="input.n"), _cond(path="input.missing", op="exists"))),
            False,
        ),
        (
            _cond(any_of=(_cond(path="input.n"), _cond(path="input.missing", op="exists"))),
            True,
        ),
        (_cond(any_of=(_cond(path="input.n"),), negate=True), False),
    ],
)
def test_conditions(condition: Condition, expected: bool) -> None:
    assert holds(condition, FRAME) is expected


@given(st.integers(-5, 5), st.integers(-5, 5))
def test_comparisons_agree_with_python(found: int, wanted: int) -> None:
    frame = Frame(input={"x": found})
    reference = {
        "eq": found == wanted,
        "ne": found != wanted,
        "gt": found > wanted,
        "gte": found >= wanted,
        "lt": found < wanted,
        "lte": found <= wanted,
    }
    for op, expected in reference.items():
        assert holds(_cond(path="input.x", op=op, value=wanted), frame) is expected
        assert holds(_cond(path="input.x", op=op, value=wanted, negate=True), frame) is not (
            expected
        )


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(max_attempts=6, backoff_seconds=2, multiplier=3, max_backoff_seconds=20)
    assert [backoff(policy, n) for n in range(1, 6)] == [0.0, 2.0, 6.0, 18.0, 20.0]
    assert backoff(RetryPolicy(max_attempts=3), 3) == 0.0


def test_which_failures_are_retried() -> None:
    policy = RetryPolicy(max_attempts=3)
    assert will_retry(policy, "http_500", 1) and will_retry(policy, "http_500", 2)
    assert not will_retry(policy, "http_500", 3)  # attempts are counted in total
    assert not will_retry(policy, "denied", 1)  # a person said no
    assert not will_retry(policy, "orphaned", 1)  # it may have acted
    named = RetryPolicy(max_attempts=3, retry_on=("timeout", "orphaned"))
    assert will_retry(named, "orphaned", 1) and will_retry(named, "timeout", 1)
    assert not will_retry(named, "http_500", 1)
    assert not will_retry(RetryPolicy(max_attempts=5, retry_on=("denied",)), "denied", 1)
