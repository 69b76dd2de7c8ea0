"""Fixtures shared by this package's unit and contract tests."""

from collections.abc import AsyncIterator

import pytest

from psych_runtime.adapters import ResolvedLimits
from psych_sandbox import NamespaceSandbox
from psych_sandbox import SandboxUnavailable

LIMITS = ResolvedLimits(
    cpu_seconds=2,
    wall_seconds=5,
    memory_bytes=256 * 1024 * 1024,
    file_size_bytes=8 * 1024 * 1024,
    process_count=32,
)
"""Small limits for the programs the tests run, and for the commands they build."""


@pytest.fixture
async def namespaces() -> AsyncIterator[NamespaceSandbox]:
    """A ``NamespaceSandbox``, closed afterwards; skipped where bubblewrap cannot run."""
    try:
        sandbox = await NamespaceSandbox.open()
    except SandboxUnavailable as error:
        pytest.skip(f"bubblewrap cannot run here: {error}")
    yield sandbox
    await sandbox.close()
