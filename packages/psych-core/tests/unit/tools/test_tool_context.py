"""ToolContext and the idempotency key derived for each call."""

import dataclasses
import re

import pytest

from psych_runtime.core.ids import AttemptId
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.scope import Scope
from psych_runtime.tools import ToolContext
from psych_runtime.tools import idempotency_key_for


def test_key_is_deterministic_and_prefixed() -> None:
    key = idempotency_key_for("run_1", "call_1")
    assert key == idempotency_key_for("run_1", "call_1")
    assert re.fullmatch(r"idk_[0-9a-f]{64}", key)


def test_key_differs_per_run_and_per_call() -> None:
    keys = {
        idempotency_key_for("run_1", "call_1"),
        idempotency_key_for("run_1", "call_2"),
        idempotency_key_for("run_2", "call_1"),
    }
    assert len(keys) == 3


def test_key_cannot_be_confused_by_moving_the_boundary() -> None:
    assert idempotency_key_for("ab", "c") != idempotency_key_for("a", "bc")


def test_for_call_derives_the_key_and_survives_a_new_attempt() -> None:
    scope = Scope(tenant="acme")
    first = ToolContext.for_call(
        run_id=RunId("run_1"),
        call_id=ToolCallId("call_1"),
        scope=scope,
        attempt_id=AttemptId("att_1"),
    )
    reclaimed = ToolContext.for_call(
        run_id=RunId("run_1"),
        call_id=ToolCallId("call_1"),
        scope=scope,
        attempt_id=AttemptId("att_2"),
    )
    assert first.idempotency_key == idempotency_key_for("run_1", "call_1")
    assert first.idempotency_key == reclaimed.idempotency_key
    assert first.attempt_id != reclaimed.attempt_id


def test_context_is_frozen() -> None:
    context = ToolContext.for_call(
        run_id=RunId("r"),
        call_id=ToolCallId("c"),
        scope=Scope(tenant="t"),
        attempt_id=AttemptId("a"),
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        context.call_id = ToolCallId("other")  # type: ignore[misc]
