"""The namespaces backend against the Sandbox contract: every escape must be stopped."""

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from psych_contract import SandboxContract
from psych_runtime.adapters import Sandbox
from psych_sandbox import NamespaceSandbox, SandboxUnavailable


class TestNamespaceSandbox(SandboxContract):
    kernel_enforced = True

    @pytest_asyncio.fixture
    async def sandbox(self) -> AsyncIterator[Sandbox]:
        try:
            sandbox = await NamespaceSandbox.open()
        except SandboxUnavailable as error:
            pytest.skip(f"bubblewrap cannot run here: {error}")
        yield sandbox
        await sandbox.close()
