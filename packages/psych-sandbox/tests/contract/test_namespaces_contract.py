"""The namespaces backend against the Sandbox contract: every escape must be stopped."""

from collections.abc import AsyncIterator

import pytest_asyncio

from psych_contract import SandboxContract
from psych_runtime.adapters import Sandbox
from psych_sandbox import NamespaceSandbox


class TestNamespaceSandbox(SandboxContract):
    kernel_enforced = True

    @pytest_asyncio.fixture
    async def sandbox(self, namespaces: NamespaceSandbox) -> AsyncIterator[Sandbox]:  # type: ignore[override]
        yield namespaces
