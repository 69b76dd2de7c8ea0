"""Fixtures shared by the package's tests."""

import pytest

from psych_runtime import EgressPolicy

LOOPBACK = EgressPolicy(allow_hosts=frozenset({"127.0.0.1"}))
"""The default policy refuses loopback addresses; the test servers listen on one."""


@pytest.fixture
def loopback() -> EgressPolicy:
    return LOOPBACK
