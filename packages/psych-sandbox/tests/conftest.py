"""Fixtures shared by this package's unit and contract tests."""

from collections.abc import AsyncIterator

import pytest

from psych_sandbox import NamespaceSandbox, SandboxUnavailable


@pytest.fixture
async def namespaces() -> AsyncIterator[NamespaceSandbox]:
    """A ``NamespaceSandbox``, closed afterwards; skipped where bubblewrap cannot run."""
    try:
        sandbox = await NamespaceSandbox.open()
    except SandboxUnavailable as error:
        pytest.skip(f"bubblewrap cannot run here: {error}")
    yield sandbox
    await sandbox.close()
