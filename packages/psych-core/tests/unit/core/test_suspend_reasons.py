"""Every reason a Run can wait for has its rules in one table, and the runtime reads them."""

import pytest

from psych_runtime.core.projections.status import project_status
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.reducer import reduce
from psych_runtime.core.spec import SuspensionPolicy
from psych_runtime.core.suspend_reasons import SUSPEND_REASONS
from psych_runtime.core.suspend_reasons import Shown
from psych_runtime.core.suspend_reasons import rules
from psych_runtime.runtime.suspension import expires_in
from psych_runtime.testing import LogBuilder


def test_every_reason_has_rules() -> None:
    assert set(SUSPEND_REASONS) == set(SuspendReason)


@pytest.mark.parametrize("reason", list(SuspendReason))
def test_expiry_is_read_from_the_table(reason: SuspendReason) -> None:
    policy = SuspensionPolicy(
        approval_expires_seconds=11,
        question_expires_seconds=22,
        external_expires_seconds=33,
        children_expires_seconds=44,
    )
    assert expires_in(policy, reason) == rules(reason).expiry(policy)


@pytest.mark.parametrize("reason", list(SuspendReason))
def test_status_presents_a_suspension_as_its_rules_say(reason: SuspendReason) -> None:
    builder = LogBuilder().admitted().attempt().turn().model_started().model_finished()
    if reason is SuspendReason.APPROVAL:
        builder = builder.tool_started("c1")
        log = builder.suspended(reason, pending_call_id="c1").build()
    else:
        log = builder.suspended(reason).build()
    status = project_status(reduce(log))
    shown = rules(reason).shown
    assert (status.pending_approval is not None) is (shown is Shown.APPROVAL)
    assert (status.pending_question is not None) is (shown is Shown.QUESTION)
    assert (status.pending_wait is not None) is (shown is Shown.WAIT)
    assert status.suspend_reason is reason
